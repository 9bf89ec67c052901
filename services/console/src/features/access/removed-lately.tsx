/**
 * "Removed lately" on the retention page: the retention job's disposition records, newest first,
 * how many there are, and the way to the next page.
 */
import { ErrorMessage, Loading } from '../../components/query-state';
import { formatTime } from '../../lib/format';
import type { DispositionList } from '../../lib/contract';
import { useDispositions } from './api';
import { removalsShown, removalWhat } from './removals';

type Disposition = DispositionList['dispositions'][number];

function Removal({ d }: { d: Disposition }) {
  return (
    <li>
      {formatTime(d.removed_at)}: {removalWhat(d)}, by {d.run_by}
    </li>
  );
}

export function RemovedLately({ org }: { org: string }) {
  const query = useDispositions(org);
  const { data, error, hasNextPage, isFetchingNextPage, fetchNextPage, isFetchNextPageError } = query;
  const what = 'the disposition records';
  if (!data) {
    return error ? (
      <ErrorMessage error={error} what={what} onRetry={query.refetch} />
    ) : (
      <Loading what={what} />
    );
  }
  // a run between two pages shifts the list: a record read on the page before is not listed twice
  const list = [...new Map(data.pages.flatMap((p) => p.dispositions).map((d) => [d.id, d])).values()];
  const newest = data.pages[data.pages.length - 1];
  if (list.length === 0) {
    return <p>Nothing has been removed.</p>;
  }
  return (
    <>
      <p role="status" className="muted">
        {`${removalsShown(list.length, newest?.total_count ?? list.length, newest?.total_count_capped ?? false)}, newest first.`}
      </p>
      <ul aria-label="Removals, newest first">
        {list.map((d) => (
          <Removal key={d.id} d={d} />
        ))}
      </ul>
      {isFetchNextPageError && error && (
        <ErrorMessage error={error} what="more disposition records" onRetry={() => fetchNextPage()} />
      )}
      {hasNextPage && (
        <p>
          <button type="button" disabled={isFetchingNextPage} onClick={() => void fetchNextPage()}>
            {isFetchingNextPage ? 'Loading more removals…' : 'Load more'}
          </button>
        </p>
      )}
    </>
  );
}
