/** Loading and error states of a query, announced to screen readers. */
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../lib/api-client';

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="muted">
      Loading {what}…
    </p>
  );
}

/** What failed, in plain words: the API's message, or what a network failure means. */
function failure(error: unknown): { heading: string; detail: string } {
  const status = error instanceof ApiError ? error.status : 0;
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof ApiError)) {
    return {
      heading: 'The server could not be reached',
      detail: `the network or the server is down (${message}).`,
    };
  }
  if (status === 404) {
    return { heading: 'Not found', detail: message };
  }
  if (status === 403) {
    return { heading: 'Not allowed', detail: message };
  }
  if (status === 503) {
    return { heading: 'The service is unavailable for now', detail: message };
  }
  return { heading: status >= 500 ? 'The server failed' : 'The request was refused', detail: message };
}

/** An error saying what failed, and a Retry button when the request can be made again. */
export function ErrorMessage({
  error,
  what,
  onRetry,
}: {
  error: unknown;
  what?: string;
  onRetry?: () => unknown;
}) {
  const { heading, detail } = failure(error);
  const final = error instanceof ApiError && [400, 401, 403, 404].includes(error.status);
  return (
    <div role="alert" className="error-box">
      <p>
        <strong>
          {what ? `Could not load ${what}. ` : ''}
          {heading}:
        </strong>{' '}
        {detail}
      </p>
      {onRetry && !final && (
        <p>
          <button type="button" onClick={() => void onRetry()}>
            Retry
          </button>
        </p>
      )}
    </div>
  );
}

/** Renders loading, error (with Retry), or the data. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch?: () => unknown };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.error) {
    return <ErrorMessage error={query.error} what={what} onRetry={query.refetch} />;
  }
  if (query.isPending || query.data === undefined) {
    return <Loading what={what} />;
  }
  return <>{children(query.data)}</>;
}

/** Previous/next page links for page-numbered lists. */
export function Pager({
  page,
  pageCount,
  onPage,
  label,
}: {
  page: number;
  pageCount: number;
  onPage: (page: number) => void;
  label: string;
}) {
  if (pageCount <= 1) {
    return null;
  }
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous page
      </button>
      <span aria-live="polite">
        Page {page} of {pageCount}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pageCount}>
        Next page
      </button>
    </nav>
  );
}

/** A breadcrumb trail of links; the last item is the current page. */
export function Breadcrumbs({ items }: { items: Array<{ label: string; to?: string }> }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumbs">
      <ol>
        {items.map((item, i) => (
          <li key={`${i}-${item.label}`}>
            {item.to ? <Link to={item.to}>{item.label}</Link> : <span aria-current="page">{item.label}</span>}
          </li>
        ))}
      </ol>
    </nav>
  );
}
