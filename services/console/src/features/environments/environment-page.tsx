/** `/{org}/environments/{env}`: the history as a timeline, the latest snapshot, policies and events. */
import { Link, useParams, useSearchParams } from 'react-router';
import { Breadcrumbs, Pager, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge, StateBadge } from '../../components/state-badge';
import { formatAge, formatTime, paths, short } from '../../lib/format';
import {
  EVENTS_PER_PAGE,
  TIMELINE_PER_PAGE,
  useEnvironment,
  useEnvironmentEvents,
  useSnapshot,
  useSnapshotList,
} from './api';
import { AppliedPolicies, SnapshotArtifacts } from './snapshot-artifacts';
import { SnapshotTimeline } from './snapshot-timeline';

function Events({ org, env }: { org: string; env: string }) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('events_page') ?? '1') || 1);
  const query = useEnvironmentEvents(org, env, page);
  return (
    <QueryView query={query} what="events">
      {(events) =>
        events.length === 0 && page === 1 ? (
          <p>No events yet.</p>
        ) : (
          <>
            <table>
              <caption className="visually-hidden">Events, newest first</caption>
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
            <nav className="pager" aria-label="Events pages">
              <button
                type="button"
                disabled={page <= 1}
                onClick={() => {
                  const next = new URLSearchParams(params);
                  next.set('events_page', String(page - 1));
                  setParams(next);
                }}
              >
                Newer events
              </button>
              <span>Page {page}</span>
              <button
                type="button"
                disabled={events.length < EVENTS_PER_PAGE}
                onClick={() => {
                  const next = new URLSearchParams(params);
                  next.set('events_page', String(page + 1));
                  setParams(next);
                }}
              >
                Older events
              </button>
            </nav>
          </>
        )
      }
    </QueryView>
  );
}

export default function EnvironmentPage() {
  const { org = '', env = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const envQuery = useEnvironment(org, env);
  const latestIndex = envQuery.data?.latest_snapshot_index ?? null;
  const timelinePage = Math.max(1, Number(params.get('timeline_page') ?? '1') || 1);
  const list = useSnapshotList(org, env, timelinePage, latestIndex !== null);
  const latest = useSnapshot(org, env, latestIndex ?? -1, latestIndex !== null);
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
              <Events org={org} env={env} />
            </section>
          </>
        )}
      </QueryView>
    </>
  );
}
