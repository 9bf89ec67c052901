/** `/{org}/environments/{env}/snapshots/{n}`: what ran in snapshot n, what changed since n-1, and why. */
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { Fact } from '../../components/facts';
import { DownloadError, useDownload } from '../../components/download';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { ApiError, apiUrl, seg } from '../../lib/api-client';
import { StateBadge } from '../../components/state-badge';
import { formatTime, jsonText, paths, plural } from '../../lib/format';
import type { Snapshot, SnapshotArtifact } from '../../lib/contract';
import { useSnapshot, useSnapshotsAround } from './api';
import { SnapshotTimeline } from './snapshot-timeline';
import { AppliedPolicies, SnapshotArtifacts } from './snapshot-artifacts';
import { ColumnHeads } from '../../components/table-head';
import { TableBox } from '../../components/table-box';

function Pods({ artifacts }: { artifacts: SnapshotArtifact[] }) {
  const rows = artifacts.flatMap((a) =>
    Object.entries(a.pods ?? {}).map(([pod, detail]) => ({ artifact: a.name, pod, detail })),
  );
  if (rows.length === 0) {
    return <p>This snapshot lists no pods or instances.</p>;
  }
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Pods and instances</caption>
        <ColumnHeads columns={['Pod or instance', 'Artifact', 'Details']} />
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.artifact}/${r.pod}`}>
              <th scope="row">{r.pod}</th>
              <td>{r.artifact}</td>
              <td>
                <details>
                  <summary>Show</summary>
                  <pre>{jsonText(r.detail)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

interface SnapshotView {
  org: string;
  env: string;
  s: Snapshot;
}

function Neighbours({ view: { org, env, s } }: { view: SnapshotView }) {
  return (
    <nav aria-label="Neighbouring snapshots" className="neighbours">
      {s.index > 1 ? (
        <Link to={paths.snapshot(org, env, s.index - 1)} rel="prev">
          ← Previous snapshot #{s.index - 1}
        </Link>
      ) : (
        <span className="muted">This is the first snapshot.</span>
      )}
      {s.is_latest ? (
        <span className="muted">This is the latest snapshot.</span>
      ) : (
        <>
          <Link to={paths.snapshot(org, env, s.index + 1)} rel="next">
            Next snapshot #{s.index + 1} →
          </Link>
          <Link to={paths.environment(org, env)}>Latest</Link>
        </>
      )}
    </nav>
  );
}

function SnapshotFacts({ s, running }: { s: Snapshot; running: number }) {
  return (
    <dl className="facts">
      <Fact term="Compliance">
        <StateBadge state={s.compliance_state} unknown="no-policy" />
      </Fact>
      <Fact term="Taken">{formatTime(s.timestamp)}</Fact>
      <Fact term="Replaced">
        {s.next_snapshot_timestamp ? formatTime(s.next_snapshot_timestamp) : 'still current'}
      </Fact>
      <Fact term="Running">{plural(running, 'artifact')}</Fact>
      <Fact term="Reported by">{s.user_name ?? 'unknown'}</Fact>
    </dl>
  );
}

function SnapshotBody({ view }: { view: SnapshotView }) {
  const { org, s } = view;
  const running = s.artifacts.filter((a) => a.annotation.type !== 'exited');
  const changed = s.artifacts.filter((a) => a.annotation.type !== 'unchanged');
  return (
    <>
      <Neighbours view={view} />
      <SnapshotFacts s={s} running={running.length} />
      <SnapshotDownload org={org} env={view.env} index={s.index} />
      <AroundTimeline view={view} />

      <section aria-labelledby="changes-heading">
        <h2 id="changes-heading">
          {s.index > 1 ? `Changes since snapshot ${s.index - 1}` : 'Changes: the first snapshot'}
        </h2>
        <p>
          {s.summary.started} started, {s.summary.changed} changed, {s.summary.exited} exited.
          {s.index > 1 && (
            <>
              {' '}
              <Link to={paths.diff(org, view.env, Math.max(1, s.index - 10), s.index)}>
                Compare with another snapshot
              </Link>
            </>
          )}
        </p>
        {changed.length > 0 && (
          <SnapshotArtifacts org={org} artifacts={changed} caption="Artifacts that changed" />
        )}
      </section>

      <section aria-labelledby="artifacts-heading">
        <h2 id="artifacts-heading">Artifacts</h2>
        <SnapshotArtifacts org={org} artifacts={running} caption="Artifacts running in this snapshot" />
      </section>

      <section aria-labelledby="policies-heading">
        <h2 id="policies-heading">Policies applied</h2>
        <AppliedPolicies policies={s.applied_policies} attached={[]} />
      </section>

      <section aria-labelledby="pods-heading">
        <h2 id="pods-heading">Pods and instances</h2>
        <Pods artifacts={running} />
      </section>
    </>
  );
}

/**
 * The snapshot the address names: a number, or an expression the API resolves (`@{ISO time}`, the
 * snapshot current then; `@time` without braces too; `~N`; `-N`). Null when it is neither.
 */
export function snapshotExpression(text: string): { expression: string | number; at: number | null } | null {
  if (/^#?\d+$/.test(text)) {
    const n = Number(text.replace('#', ''));
    return n > 0 ? { expression: n, at: null } : null;
  }
  if (/^[~-]\d{1,9}$/.test(text)) {
    return { expression: text, at: null };
  }
  const m = /^@\{?([^{}]{1,64}?)\}?$/.exec(text);
  if (m?.[1]) {
    const inner = m[1].trim();
    const iso = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(inner);
    const ms = iso
      ? Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(inner) ? inner : `${inner.replace(' ', 'T')}Z`)
      : NaN;
    return { expression: `@{${inner}}`, at: Number.isNaN(ms) ? null : ms / 1000 };
  }
  return null;
}

/** Where this snapshot stands among its neighbours, in time: it is the marked span. */
function AroundTimeline({ view: { org, env, s } }: { view: SnapshotView }) {
  const around = useSnapshotsAround(org, env, s.index, s.is_latest);
  const [now] = useState(() => Date.now() / 1000);
  return (
    <section aria-labelledby="around-heading">
      <h2 id="around-heading">This snapshot in time</h2>
      <QueryView query={around} what="the neighbouring snapshots">
        {(items) => (
          <SnapshotTimeline
            items={items}
            zoom="all"
            now={now}
            complete
            current={s.index}
            hrefOf={(n) => paths.snapshot(org, env, n)}
          />
        )}
      </QueryView>
    </section>
  );
}

function SnapshotDownload({ org, env, index }: { org: string; env: string; index: number }) {
  const { error, busy, start } = useDownload();
  return (
    <p>
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          start(
            apiUrl(`/snapshots/${seg(org)}/${seg(env)}/${index}/audit_package`),
            `${env}-snapshot-${index}-audit-package.tar.gz`,
          )
        }
      >
        {busy ? 'Preparing the audit package…' : 'Download the audit package of this snapshot'}
      </button>
      <DownloadError error={error} />{' '}
      <span className="muted small">
        Every running artifact with its trail, evidence files and policy decisions, and a manifest of sums.
      </span>
    </p>
  );
}

export default function SnapshotPage() {
  const { org = '', env = '', index = '' } = useParams();
  const parsed = snapshotExpression(index);
  const query = useSnapshot(org, env, parsed?.expression ?? index, parsed !== null);
  const title = parsed?.at != null ? `at ${formatTime(parsed.at)}` : index;

  return (
    <>
      <title>{`${env} #${title} · Verity`}</title>
      <Breadcrumbs
        items={[
          { label: 'Environments', to: paths.environments(org) },
          { label: env, to: paths.environment(org, env) },
          { label: query.data ? `Snapshot ${query.data.index}` : `Snapshot ${title}` },
        ]}
      />
      <h1>{query.data ? `Snapshot ${query.data.index} of ${env}` : `Snapshot ${title} of ${env}`}</h1>
      {parsed === null ? (
        <p role="alert">
          A snapshot is a positive whole number, or a time written @{'{'}2026-11-09T12:00:00Z{'}'} (the
          snapshot current then), ~N (N before the latest) or -1 (the latest).
        </p>
      ) : parsed.at !== null && query.error instanceof ApiError && query.error.status === 404 ? (
        <p role="alert">
          No snapshot of {env} was current at {formatTime(parsed.at)}: nothing had been reported yet, or the
          time is after now. The <Link to={paths.snapshot(org, env, 1)}>first snapshot</Link> and the{' '}
          <Link to={paths.environment(org, env)}>environment&apos;s timeline</Link> show when reports began.
        </p>
      ) : (
        <QueryView query={query} what="the snapshot">
          {(s) => (
            <>
              {typeof parsed.expression === 'string' && (
                <p className="muted">
                  {parsed.at !== null
                    ? `The snapshot current at ${formatTime(parsed.at)} is `
                    : `${parsed.expression} is `}
                  <Link to={paths.snapshot(org, env, s.index)}>snapshot #{s.index}</Link>.
                </p>
              )}
              <SnapshotBody view={{ org, env, s }} />
            </>
          )}
        </QueryView>
      )}
    </>
  );
}
