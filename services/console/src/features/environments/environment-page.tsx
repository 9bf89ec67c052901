/** `/{org}/environments/{env}`: the history as a timeline, the latest snapshot, policies and events. */
import { Link, useParams, useSearchParams } from 'react-router';
import { Breadcrumbs, Pager, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge, StateBadge } from '../../components/state-badge';
import { formatAge, formatTime, paths, short } from '../../lib/format';
import {
  EVENT_WINDOW,
  EVENTS_PER_WINDOW,
  TIMELINE_PER_PAGE,
  useEnvironment,
  useEnvironmentEvents,
  useSnapshot,
  useSnapshotList,
} from './api';
import { AppliedPolicies, SnapshotArtifacts } from './snapshot-artifacts';
import { SnapshotTimeline } from './snapshot-timeline';

function Events({ org, env, latest }: { org: string; env: string; latest: number | null }) {
  const [params, setParams] = useSearchParams();
  const win = Math.max(1, Number(params.get('events_window') ?? '1') || 1);
  const query = useEnvironmentEvents(org, env, win);
  if (latest === null) return <p>No events yet.</p>;
  const hi = Math.max(0, latest - (win - 1) * EVENT_WINDOW);
  const lo = Math.max(1, hi - EVENT_WINDOW + 1);
  const go = (w: number) => {
    const next = new URLSearchParams(params);
    next.set('events_window', String(w));
    setParams(next);
  };
  return (
    <>
      <p className="muted">
        Snapshots {lo} to {hi}, newest first.
      </p>
      <QueryView query={query} what="events">
        {(events) =>
          events.length === 0 ? (
            <p>No artifact started, changed or exited in these snapshots.</p>
          ) : (
            <>
              <table>
                <caption className="visually-hidden">{`Events of snapshots ${lo} to ${hi}, newest first`}</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Snapshot</th>
                    <th scope="col">Event</th>
                    <th scope="col">Artifact</th>
                    <th scope="col">Artifact compliance</th>
                  </tr>
                </thead>
                <tbody>
                  {events.map((e, i) => (
                    <tr key={`${e.snapshot_index}-${e.sha256}-${e.type}-${i}`}>
                      <td>{formatTime(e.reported_at)}</td>
                      <td>
                        <Link to={paths.snapshot(org, env, e.snapshot_index)}>#{e.snapshot_index}</Link>
                      </td>
                      <td>{e.description || e.type}</td>
                      <td>
                        {e.artifact_name} <code className="small">{short(e.sha256, 12)}</code>
                      </td>
                      <td>
                        <ComplianceBadge compliant={e.artifact_compliance} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {events.length >= EVENTS_PER_WINDOW && (
                <p className="muted">
                  Showing the first {EVENTS_PER_WINDOW} events of these snapshots: open a snapshot for all of
                  its changes.
                </p>
              )}
            </>
          )
        }
      </QueryView>
      <nav className="pager" aria-label="Events pages">
        <button type="button" disabled={win <= 1} onClick={() => go(win - 1)}>
          Newer events
        </button>
        <button type="button" disabled={lo <= 1} onClick={() => go(win + 1)}>
          Older events
        </button>
      </nav>
    </>
  );
}

export default function EnvironmentPage() {
  const { org = '', env = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const envQuery = useEnvironment(org, env);
  const latestIndex = envQuery.data?.latest_snapshot_index ?? null;
  const timelinePage = Math.max(1, Number(params.get('timeline_page') ?? '1') || 1);
  // Fetched alongside the environment, not after it: '-1' is the latest snapshot.
  const list = useSnapshotList(org, env, timelinePage);
  const latest = useSnapshot(org, env, -1);
  const pageCount = latestIndex ? Math.ceil(latestIndex / TIMELINE_PER_PAGE) : 1;

  return (
    <>
      <title>{`${env} · Environments · Verity`}</title>
      <Breadcrumbs items={[{ label: 'Environments', to: paths.environments(org) }, { label: env }]} />
      <h1>Environment {env}</h1>
      <QueryView query={envQuery} what="the environment">
        {(e) => (
          <>
            <dl className="facts">
              <div>
                <dt>Compliance</dt>
                <dd>
                  <ComplianceBadge compliant={e.latest_snapshot_index === null ? undefined : e.state} />
                </dd>
              </div>
              <div>
                <dt>Type</dt>
                <dd>{e.type}</dd>
              </div>
              <div>
                <dt>Last report</dt>
                <dd>
                  {e.last_reported_at
                    ? `${formatAge(e.last_reported_at)} (${formatTime(e.last_reported_at)})`
                    : 'never'}
                </dd>
              </div>
              <div>
                <dt>Last change</dt>
                <dd>{formatTime(e.last_changed_at)}</dd>
              </div>
              <div>
                <dt>Running artifacts</dt>
                <dd>{e.running_artifacts}</dd>
              </div>
              {e.included_environments && (
                <div>
                  <dt>Includes</dt>
                  <dd>
                    {e.included_environments.map((m, i) => (
                      <span key={m}>
                        {i > 0 && ', '}
                        <Link to={paths.environment(org, m)}>{m}</Link>
                      </span>
                    ))}
                  </dd>
                </div>
              )}
            </dl>
            {e.description && <p>{e.description}</p>}

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
                <QueryView query={list} what="snapshots">
                  {(items) => (
                    <>
                      <SnapshotTimeline items={items} hrefOf={(n) => paths.snapshot(org, env, n)} />
                      <Pager
                        page={timelinePage}
                        pageCount={pageCount}
                        label="Timeline"
                        onPage={(p) => {
                          const next = new URLSearchParams(params);
                          next.set('timeline_page', String(p));
                          setParams(next);
                        }}
                      />
                    </>
                  )}
                </QueryView>
              )}
            </section>

            {e.latest_snapshot_index !== null && (
              <section aria-labelledby="latest-heading">
                <h2 id="latest-heading">
                  Latest snapshot{' '}
                  <Link to={paths.snapshot(org, env, e.latest_snapshot_index)}>
                    #{e.latest_snapshot_index}
                  </Link>
                </h2>
                <QueryView query={latest} what="the latest snapshot">
                  {(s) => (
                    <>
                      <p>
                        <StateBadge state={s.compliance_state} /> Taken {formatTime(s.timestamp)} ·{' '}
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
