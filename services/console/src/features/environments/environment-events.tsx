/**
 * An environment's events on its page: a window of EVENT_WINDOW snapshots at a time (newer and
 * older windows), each window's events newest first, EVENTS_PER_WINDOW at a time, saying which
 * of how many it shows.
 */
import { Link } from 'react-router';
import { ErrorMessage, Loading } from '../../components/query-state';
import { ComplianceBadge } from '../../components/state-badge';
import { TableBox } from '../../components/table-box';
import { ColumnHeads } from '../../components/table-head';
import type { EnvironmentEvent } from '../../lib/contract';
import { rangeOf } from '../../lib/counts';
import { formatTime, paths, short } from '../../lib/format';
import { usePageParam } from '../../lib/page-param';
import { EVENT_WINDOW, useEnvironmentEvents } from './api';

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
    <TableBox>
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
                <ComplianceBadge compliant={e.artifact_compliance} unknown="no-policy" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** The events of one window, what they are of, and the way to the rest of the window. */
function WindowEvents({ org, env, win, range }: { org: string; env: string; win: number; range: string }) {
  const query = useEnvironmentEvents(org, env, win);
  const { data, error, hasNextPage, isFetchingNextPage, fetchNextPage, isFetchNextPageError } = query;
  if (!data) {
    return error ? (
      <ErrorMessage error={error} what="events" onRetry={query.refetch} />
    ) : (
      <Loading what="events" />
    );
  }
  const events = data.pages.flatMap((p) => p.data);
  const total = data.pages[0]?.total ?? events.length;
  if (events.length === 0) {
    return <p>No artifact started, changed or exited in {range}.</p>;
  }
  return (
    <>
      <p role="status" className="muted">
        {`Events ${rangeOf({ offset: 0, shown: events.length, total })} in ${range}, newest first.`}
      </p>
      <EventsTable org={org} env={env} events={events} caption={`Events of ${range}, newest first`} />
      {isFetchNextPageError && error && (
        <ErrorMessage error={error} what="more events" onRetry={() => fetchNextPage()} />
      )}
      {hasNextPage && (
        <p>
          <button type="button" disabled={isFetchingNextPage} onClick={() => void fetchNextPage()}>
            {isFetchingNextPage ? 'Loading more events…' : 'Load more events of these snapshots'}
          </button>
        </p>
      )}
    </>
  );
}

export function Events({ org, env, latest }: { org: string; env: string; latest: number | null }) {
  const [win, go] = usePageParam('events_window');
  if (latest === null) {
    return <p>No events yet.</p>;
  }
  const hi = Math.max(0, latest - (win - 1) * EVENT_WINDOW);
  const lo = Math.max(1, hi - EVENT_WINDOW + 1);
  return (
    <>
      <WindowEvents org={org} env={env} win={win} range={`snapshots ${lo} to ${hi}`} />
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
