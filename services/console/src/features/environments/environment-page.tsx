/** `/{org}/environments/{env}`: the history as a timeline, the latest snapshot, policies and events. */
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { Field } from '../../components/field';
import { Fact } from '../../components/facts';
import { LinkList } from '../../components/link-list';
import { Breadcrumbs, Loading, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge, StateBadge } from '../../components/state-badge';
import type { Environment } from '../../lib/contract';
import { formText } from '../../lib/form';
import { formatAge, formatTime, fromZoneInput, paths, toZoneInput, zoneName } from '../../lib/format';
import { TIMELINE_PER_PAGE, useEnvironment, useSnapshot, useSnapshotWindow } from './api';
import { Events } from './environment-events';
import { AppliedPolicies, SnapshotArtifacts } from './snapshot-artifacts';
import { SnapshotTimeline, ZOOMS, type Zoom } from './snapshot-timeline';

function EnvironmentFacts({ org, e }: { org: string; e: Environment }) {
  return (
    <dl className="facts">
      <Fact term="Compliance">
        <ComplianceBadge
          compliant={e.latest_snapshot_index === null ? undefined : e.state}
          unknown={e.latest_snapshot_index === null ? 'no-snapshot' : 'no-policy'}
        />
      </Fact>
      <Fact term="Type">{e.type}</Fact>
      <Fact term="Last report">
        {e.last_reported_at
          ? `${formatAge(e.last_reported_at)} (${formatTime(e.last_reported_at)})`
          : 'never'}
      </Fact>
      <Fact term="Last change">{formatTime(e.last_changed_at)}</Fact>
      <Fact term="Running artifacts">{e.running_artifacts}</Fact>
      {e.included_environments && (
        <Fact term="Includes">
          <LinkList names={e.included_environments} to={(m) => paths.environment(org, m)} />
        </Fact>
      )}
    </dl>
  );
}

interface EnvironmentView {
  org: string;
  env: string;
  e: Environment;
}

/** "What ran here at…": a date and time in the page's zone, opening the snapshot current then. */
function TimePicker({ org, env }: { org: string; env: string }) {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const at = fromZoneInput(formText(new FormData(e.currentTarget), 'at'));
    if (at === null) {
      setError('Give a date and a time, such as 2026-11-09 12:00.');
      return;
    }
    void navigate(paths.snapshotAt(org, env, at));
  };
  return (
    <form className="filters" onSubmit={onSubmit} aria-label="What ran here at a time">
      <Field id="picker-at" label={`What ran here at (${zoneName()})`}>
        <input
          id="picker-at"
          name="at"
          type="datetime-local"
          step={60}
          required
          defaultValue={toZoneInput(Date.now() / 1000)}
          aria-describedby={error ? 'picker-error' : undefined}
        />
      </Field>
      <button type="submit">Open that snapshot</button>
      {error && (
        <p id="picker-error" role="alert" className="field-error">
          {error}
        </p>
      )}
    </form>
  );
}

function Timeline({ view: { org, env, e } }: { view: EnvironmentView }) {
  const [params, setParams] = useSearchParams();
  const zoom: Zoom = (Object.keys(ZOOMS) as Zoom[]).find((z) => z === params.get('zoom')) ?? 'week';
  const [now] = useState(() => Date.now() / 1000);
  const seconds = ZOOMS[zoom].seconds;
  const query = useSnapshotWindow(org, env, zoom, seconds === null ? null : now - seconds);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = query;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage) {
      void fetchNextPage();
    }
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  const setZoom = (z: Zoom) => {
    const next = new URLSearchParams(params);
    next.set('zoom', z);
    setParams(next, { replace: true });
  };
  return (
    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline of snapshots</h2>
      {e.latest_snapshot_index === null ? (
        <p>
          No snapshot yet: nothing has reported to this environment. Report with{' '}
          <code>
            kosli snapshot {e.type === 'K8S' ? 'k8s' : e.type.toLowerCase()} {e.name}
          </code>{' '}
          or the in-cluster reporter.
        </p>
      ) : (
        <>
          <TimePicker org={org} env={env} />
          <div role="group" aria-label="Zoom" className="zoom">
            {(Object.keys(ZOOMS) as Zoom[]).map((z) => (
              <button key={z} type="button" aria-pressed={z === zoom} onClick={() => setZoom(z)}>
                {ZOOMS[z].label}
              </button>
            ))}
          </div>
          <QueryView query={query} what="snapshots">
            {(data) =>
              hasNextPage ? (
                <Loading what="snapshots" />
              ) : (
                <SnapshotTimeline
                  items={data.pages.flat()}
                  zoom={zoom}
                  now={now}
                  complete={(data.pages[data.pages.length - 1]?.length ?? 0) < TIMELINE_PER_PAGE}
                  hrefOf={(n) => paths.snapshot(org, env, n)}
                />
              )
            }
          </QueryView>
          <p>
            <Link
              to={paths.diff(org, env, Math.max(1, e.latest_snapshot_index - 1), e.latest_snapshot_index)}
            >
              Compare two snapshots
            </Link>
          </p>
        </>
      )}
    </section>
  );
}

function LatestSnapshot({
  view: { org, env, e },
  index,
  latest,
}: {
  view: EnvironmentView;
  index: number;
  latest: ReturnType<typeof useSnapshot>;
}) {
  return (
    <section aria-labelledby="latest-heading">
      <h2 id="latest-heading">
        Latest snapshot <Link to={paths.snapshot(org, env, index)}>#{index}</Link>
      </h2>
      <QueryView query={latest} what="the latest snapshot">
        {(s) => (
          <>
            <p>
              <StateBadge state={s.compliance_state} unknown="no-policy" /> Taken {formatTime(s.timestamp)} ·{' '}
              {s.summary.started} started, {s.summary.changed} changed, {s.summary.exited} exited
              {s.artifacts.some((a) => a.flows.length === 0) && (
                <>
                  {' '}
                  <Badge tone="warn">Some artifacts have no provenance</Badge>
                </>
              )}
            </p>
            <SnapshotArtifacts
              org={org}
              artifacts={s.artifacts.filter((a) => a.annotation.type !== 'exited')}
              caption="Artifacts running in the latest snapshot"
            />
            <h2 id="policies-heading">Policies</h2>
            <AppliedPolicies policies={s.applied_policies} attached={e.policies} />
          </>
        )}
      </QueryView>
    </section>
  );
}

export default function EnvironmentPage() {
  const { org = '', env = '' } = useParams();
  const envQuery = useEnvironment(org, env);
  // Fetched alongside the environment, not after it: '-1' is the latest snapshot.
  const latest = useSnapshot(org, env, -1);

  return (
    <>
      <title>{`${env} · Environments · Verity`}</title>
      <Breadcrumbs items={[{ label: 'Environments', to: paths.environments(org) }, { label: env }]} />
      <h1>Environment {env}</h1>
      <QueryView query={envQuery} what="the environment">
        {(e) => (
          <>
            <EnvironmentFacts org={org} e={e} />
            {e.description && <p>{e.description}</p>}

            <Timeline view={{ org, env, e }} />

            {e.latest_snapshot_index !== null && (
              <LatestSnapshot view={{ org, env, e }} index={e.latest_snapshot_index} latest={latest} />
            )}
            {e.latest_snapshot_index === null && (
              <section aria-labelledby="policies-heading">
                <h2 id="policies-heading">Policies</h2>
                <AppliedPolicies policies={[]} attached={e.policies} />
              </section>
            )}

            <section aria-labelledby="events-heading">
              <h2 id="events-heading">Events</h2>
              <Events org={org} env={env} latest={e.latest_snapshot_index} />
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}
