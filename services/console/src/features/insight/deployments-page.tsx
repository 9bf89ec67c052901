/**
 * `/{org}/deployments?environment=&flow=&repo=&from=&to=`: deployments newest first, filtered as
 * the API filters them, paged with the API's `next` link (`?page=`), saying how many it shows.
 */
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Field } from '../../components/field';
import { ErrorMessage, Loading } from '../../components/query-state';
import { ApiError } from '../../lib/api-client';
import { formText } from '../../lib/form';
import { rangeOf } from '../../lib/counts';
import { paths } from '../../lib/format';
import { zoneChoice } from '../../lib/preferences';
import {
  DEPLOYMENTS_PER_PAGE,
  MAX_DEPLOYMENTS_PER_PAGE,
  nextPage,
  useDeployments,
  type DeploymentFilter,
} from './api';
import { DeploymentsTable } from './deployments-table';
import { badTime } from './figures';
import './insight.css';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const FILTERS = ['environment', 'flow', 'repo', 'from', 'to'] as const;

/**
 * A `from`/`to` of the address as the API reads it: a date is midnight (or, for `to`, the day's
 * end) in the zone the page shows times in; times pass as they are.
 */
function apiTime(value: string, end: boolean): string {
  if (!DAY.test(value)) {
    return value;
  }
  const d = new Date(`${value}T${end ? '23:59:59.999' : '00:00:00'}${zoneChoice() === 'utc' ? 'Z' : ''}`);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}

/** The page size the address asks for, within what the API allows. */
function perPageOf(value: string | null): number {
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, MAX_DEPLOYMENTS_PER_PAGE) : DEPLOYMENTS_PER_PAGE;
}

/** A date input shows a date: an ISO time of the address (as the home page links) shows as its UTC day. */
const dateValue = (value: string): string =>
  DAY.test(value) ? value : /^\d{4}-\d{2}-\d{2}T/.test(value) ? value.slice(0, 10) : '';

function DeploymentsFilter({
  filter,
  badRequest,
  setParams,
}: {
  filter: DeploymentFilter;
  badRequest: string | null;
  setParams: (params: URLSearchParams) => void;
}) {
  const filtered = FILTERS.some((k) => filter[k]);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const k of FILTERS) {
      const v = formText(form, k);
      if (v) {
        next.set(k, v);
      }
    }
    const perPage = formText(form, 'per_page');
    if (perPage && Number(perPage) !== DEPLOYMENTS_PER_PAGE) {
      next.set('per_page', perPage);
    }
    setParams(next);
  };
  const text = (k: 'environment' | 'flow' | 'repo', label: string) => (
    <Field id={`deployments-${k}`} label={label}>
      <input id={`deployments-${k}`} name={k} type="search" defaultValue={filter[k]} autoComplete="off" />
    </Field>
  );
  return (
    <form className="filters" onSubmit={onSubmit} aria-label="Filter deployments">
      {text('environment', 'Environment')}
      {text('flow', 'Flow')}
      {text('repo', 'Repository (owner/name)')}
      <Field id="deployments-from" label="From (date)">
        <input id="deployments-from" name="from" type="date" defaultValue={dateValue(filter.from)} />
      </Field>
      <Field id="deployments-to" label="To (date)">
        <input id="deployments-to" name="to" type="date" defaultValue={dateValue(filter.to)} />
      </Field>
      <Field id="deployments-per-page" label="A page">
        <select id="deployments-per-page" name="per_page" defaultValue={String(filter.perPage)}>
          {[...new Set([10, DEPLOYMENTS_PER_PAGE, 200, filter.perPage])]
            .sort((a, b) => a - b)
            .map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
        </select>
      </Field>
      <button type="submit">Filter</button>
      {filtered && (
        <button type="button" onClick={() => setParams(new URLSearchParams())}>
          Clear filters
        </button>
      )}
      {badRequest && (
        <p role="alert" className="field-error field-wide">
          {badRequest}
        </p>
      )}
    </form>
  );
}

/** The answer: loading, an error, none, or a page of deployments with how many and the way on. */
function DeploymentsAnswer({
  org,
  query,
  filter,
  filtered,
  withPage,
}: {
  org: string;
  query: ReturnType<typeof useDeployments>;
  filter: DeploymentFilter;
  filtered: boolean;
  withPage: (page: string | null) => string;
}) {
  const perPage = filter.perPage;
  if (query.error) {
    return <ErrorMessage error={query.error} what="the deployments" onRetry={query.refetch} />;
  }
  if (query.isPending || !query.data) {
    return <Loading what="the deployments" />;
  }
  const { deployments, next, offset, total_count, total_count_capped } = query.data;
  if (deployments.length === 0) {
    return (
      <p role="status">
        {filter.page
          ? 'No older deployments.'
          : filtered
            ? 'No deployment matches these filters.'
            : 'No deployments yet: a deployment is a new artifact starting to run in an environment, as its snapshots report it.'}
      </p>
    );
  }
  const older = nextPage(next);
  return (
    <>
      <p role="status" className="muted">
        {`Showing ${rangeOf(
          { offset, shown: deployments.length, total: total_count, capped: total_count_capped },
          'deployment',
        )}, newest first${
          older
            ? `; older ones on the next page (${perPage} a page).`
            : filter.page
              ? ': the oldest that match.'
              : ': all that match.'
        }`}
      </p>
      <div className="table-scroll">
        <DeploymentsTable org={org} deployments={deployments} />
      </div>
      {(filter.page || older) && (
        <nav className="pager-links" aria-label="Deployments pages">
          {filter.page && <Link to={withPage(null)}>Newest deployments</Link>}
          {older && <Link to={withPage(older)}>Next page (older)</Link>}
        </nav>
      )}
    </>
  );
}

export default function DeploymentsPage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const get = (k: string) => (params.get(k) ?? '').trim();
  const filter: DeploymentFilter = {
    environment: get('environment'),
    flow: get('flow'),
    repo: get('repo'),
    from: get('from'),
    to: get('to'),
    page: get('page'),
    perPage: perPageOf(params.get('per_page')),
  };
  const badTimes = badTime('from', filter.from) ?? badTime('to', filter.to);
  const query = useDeployments(
    org,
    { ...filter, from: apiTime(filter.from, false), to: apiTime(filter.to, true) },
    badTimes === null,
  );
  const badRequest =
    badTimes ?? (query.error instanceof ApiError && query.error.status === 400 ? query.error.message : null);
  const filtered = FILTERS.some((k) => filter[k]);
  const withPage = (page: string | null) => {
    const next = new URLSearchParams(params);
    if (page) {
      next.set('page', page);
    } else {
      next.delete('page');
    }
    return `?${next.toString()}`;
  };

  return (
    <>
      <title>{`Deployments · ${org} · Verity`}</title>
      <h1>Deployments</h1>
      <DeploymentsFilter
        key={[...FILTERS.map((k) => filter[k]), filter.perPage].join('\u0000')}
        filter={filter}
        badRequest={badRequest}
        setParams={setParams}
      />
      {filter.repo && (
        <p>
          <Link to={paths.repo(org, filter.repo)}>{`Delivery of ${filter.repo}`}</Link>: its builds, lead time
          per environment and what runs now.
        </p>
      )}
      {!badRequest && (
        <DeploymentsAnswer org={org} query={query} filter={filter} filtered={filtered} withPage={withPage} />
      )}
    </>
  );
}
