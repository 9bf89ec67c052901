/** `/{org}/environments/{env}`: the history as a timeline, the latest snapshot, policies and events. */
import { Link, useParams } from 'react-router';
import { Fact } from '../../components/facts';
import { LinkList } from '../../components/link-list';
import { Breadcrumbs, Pager, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge, StateBadge } from '../../components/state-badge';
import type { Environment, EnvironmentEvent } from '../../lib/contract';
import { formatAge, formatTime, paths, short } from '../../lib/format';
import { usePageParam } from '../../lib/page-param';
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
import { ColumnHeads } from '../../components/table-head';

function EventsTable({
  org,
  env,
  events,
  caption,
}: {
  org: string;
  env: string;
  events: EnvironmentEvent[];
  caption: string;
}) {
  return (
    <table>
      <caption className="visually-hidden">{caption}</caption>
      <ColumnHeads columns={['Time', 'Snapshot', 'Event', 'Artifact', 'Artifact compliance']} />
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
  );
}

function Events({ org, env, latest }: { org: string; env: string; latest: number | null }) {
  const [win, go] = usePageParam('events_window');
  const query = useEnvironmentEvents(org, env, win);
  if (latest === null) {
    return <p>No events yet.</p>;
  }
  const hi = Math.max(0, latest - (win - 1) * EVENT_WINDOW);
  const lo = Math.max(1, hi - EVENT_WINDOW + 1);
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
              <EventsTable
                org={org}
                env={env}
                events={events}
                caption={`Events of snapshots ${lo} to ${hi}, newest first`}
              />
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

function EnvironmentFacts({ org, e }: { org: string; e: Environment }) {
  return (
    <dl className="facts">
      <Fact term="Compliance">
        <ComplianceBadge compliant={e.latest_snapshot_index === null ? undefined : e.state} />
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

function Timeline({
  view: { org, env, e },
  list,
  page,
}: {
  view: EnvironmentView;
  list: ReturnType<typeof useSnapshotList>;
  page: [number, (page: number) => void];
}) {
  const pageCount = e.latest_snapshot_index ? Math.ceil(e.latest_snapshot_index / TIMELINE_PER_PAGE) : 1;
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
        <QueryView query={list} what="snapshots">
          {(items) => (
            <>
              <SnapshotTimeline items={items} hrefOf={(n) => paths.snapshot(org, env, n)} />
              <Pager page={page[0]} pageCount={pageCount} label="Timeline" onPage={page[1]} />
            </>
          )}
        </QueryView>
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
              <StateBadge state={s.compliance_state} /> Taken {formatTime(s.timestamp)} · {s.summary.started}{' '}
              started, {s.summary.changed} changed, {s.summary.exited} exited
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
  const page = usePageParam('timeline_page');
  // Fetched alongside the environment, not after it: '-1' is the latest snapshot.
  const list = useSnapshotList(org, env, page[0]);
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

            <Timeline view={{ org, env, e }} list={list} page={page} />

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
