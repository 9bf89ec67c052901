/** `/{org}/environments/{env}/snapshots/{n}`: what ran in snapshot n, what changed since n-1, and why. */
import { Link, useParams } from 'react-router';
import { Fact } from '../../components/facts';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import { formatTime, jsonText, paths, plural } from '../../lib/format';
import type { Snapshot, SnapshotArtifact } from '../../lib/contract';
import { useSnapshot } from './api';
import { AppliedPolicies, SnapshotArtifacts } from './snapshot-artifacts';
import { ColumnHeads } from '../../components/table-head';

function Pods({ artifacts }: { artifacts: SnapshotArtifact[] }) {
  const rows = artifacts.flatMap((a) =>
    Object.entries(a.pods ?? {}).map(([pod, detail]) => ({ artifact: a.name, pod, detail })),
  );
  if (rows.length === 0) {
    return <p>This snapshot lists no pods or instances.</p>;
  }
  return (
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
        <span className="muted">This is the first snapshot</span>
      )}
      {s.is_latest ? (
        <span className="muted">This is the latest snapshot</span>
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
        <StateBadge state={s.compliance_state} />
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

      <section aria-labelledby="changes-heading">
        <h2 id="changes-heading">Changes since snapshot {s.index - 1 > 0 ? s.index - 1 : 'none'}</h2>
        <p>
          {s.summary.started} started, {s.summary.changed} changed, {s.summary.exited} exited.
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

export default function SnapshotPage() {
  const { org = '', env = '', index = '' } = useParams();
  const n = Number(index);
  const valid = Number.isInteger(n) && n > 0;
  const query = useSnapshot(org, env, valid ? n : index, valid);

  return (
    <>
      <title>{`${env} #${index} · Verity`}</title>
      <Breadcrumbs
        items={[
          { label: 'Environments', to: paths.environments(org) },
          { label: env, to: paths.environment(org, env) },
          { label: `Snapshot ${index}` },
        ]}
      />
      <h1>
        Snapshot {index} of {env}
      </h1>
      {!valid ? (
        <p role="alert">A snapshot number is a positive whole number.</p>
      ) : (
        <QueryView query={query} what="the snapshot">
          {(s) => <SnapshotBody view={{ org, env, s }} />}
        </QueryView>
      )}
    </>
  );
}
