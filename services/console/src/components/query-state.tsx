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

export function ErrorMessage({ error }: { error: unknown }) {
  const status = error instanceof ApiError ? error.status : 0;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="error-box">
      <p>
        <strong>
          {status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Something went wrong'}:
        </strong>{' '}
        {message}
      </p>
    </div>
  );
}

/** Renders loading, error, or the data. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.error) {
    return <ErrorMessage error={query.error} />;
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
