/**
 * An artifact's history on its page: every line of it, oldest first, a page at a time from the
 * API's history endpoint, saying how many there are in all.
 */
import { ErrorMessage, Loading } from '../../components/query-state';
import { rangeOf } from '../../lib/counts';
import { formatTime, isoTime } from '../../lib/format';
import { HISTORY_PER_PAGE, useArtifactHistory } from './api';

export function ArtifactHistory({
  org,
  flow,
  fingerprint,
  trail,
}: {
  org: string;
  flow: string;
  fingerprint: string;
  trail: string | null;
}) {
  const query = useArtifactHistory(org, flow, fingerprint, trail);
  const { data, error, hasNextPage, isFetchingNextPage, fetchNextPage, isFetchNextPageError } = query;
  if (!data) {
    return error ? (
      <ErrorMessage error={error} what="the history" onRetry={query.refetch} />
    ) : (
      <Loading what="the history" />
    );
  }
  const lines = data.pages.flatMap((p) => p.data);
  const total = data.pages[0]?.pagination.total ?? 0;
  const perPage = data.pages[0]?.pagination.per_page ?? HISTORY_PER_PAGE;
  if (total === 0) {
    return <p>No history yet.</p>;
  }
  return (
    <>
      <p role="status" className="muted">
        {`Showing ${rangeOf({ offset: 0, shown: lines.length, total }, 'event')}, oldest first.`}
      </p>
      <ol className="history" aria-label="History, oldest first">
        {lines.map((h, i) => (
          <li key={`${h.timestamp}-${i}`}>
            <time dateTime={isoTime(h.timestamp)}>{formatTime(h.timestamp)}</time> {h.event}
          </li>
        ))}
      </ol>
      {isFetchNextPageError && error && (
        <ErrorMessage error={error} what="more history" onRetry={() => fetchNextPage()} />
      )}
      {hasNextPage && (
        <p>
          <button type="button" disabled={isFetchingNextPage} onClick={() => void fetchNextPage()}>
            {isFetchingNextPage
              ? 'Loading more history…'
              : `Load ${Math.min(perPage, total - lines.length)} more`}
          </button>
        </p>
      )}
    </>
  );
}
