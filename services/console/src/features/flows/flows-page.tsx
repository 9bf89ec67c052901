/** `/{org}/flows`: flows, sortable by name or latest activity, with their latest state. */
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Pager, QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import type { Flow } from '../../lib/contract';
import { formatAge, formatTime, paths } from '../../lib/format';
import { useFlows, type FlowSort } from './api';
import { formText } from '../../lib/form';
import { Field } from '../../components/field';
import { TableBox } from '../../components/table-box';

function EmptyFlows({ org }: { org: string }) {
  const host = window.location.origin;
  return (
    <section aria-labelledby="empty-flows" className="empty">
      <h2 id="empty-flows">No flows yet</h2>
      <p>
        A flow is a pipeline whose builds you record. Each run of it is a trail; each trail gathers the
        artifacts it built and the evidence (attestations) about them.
      </p>
      <h3>Attest from your pipeline with the kosli CLI</h3>
      <pre>
        <code>{`export KOSLI_HOST=${host} KOSLI_ORG=${org} KOSLI_API_TOKEN=<your key>
kosli create flow web --template-file flow-template.yml
kosli begin trail "$GIT_COMMIT" --flow web
kosli attest artifact my-image:1.2.3 --artifact-type oci --flow web --trail "$GIT_COMMIT" --name web
kosli attest junit --flow web --trail "$GIT_COMMIT" --name unit-tests --results-dir ./test-results`}</code>
      </pre>
    </section>
  );
}

type Direction = 'asc' | 'desc';

const ariaSort = (sorted: boolean, direction: Direction) =>
  sorted ? (direction === 'asc' ? 'ascending' : 'descending') : 'none';

function FlowsFilter({
  name,
  sort,
  direction,
  update,
}: {
  name: string;
  sort: FlowSort;
  direction: Direction;
  update: (changes: Record<string, string | null>) => void;
}) {
  const onFilter = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    update({ name: formText(new FormData(e.currentTarget), 'name'), page: null });
  };
  return (
    <form className="filters" onSubmit={onFilter} aria-label="Filter and sort flows">
      <Field id="flow-name" label="Name contains">
        <input id="flow-name" name="name" type="search" defaultValue={name} />
      </Field>
      <button type="submit">Filter</button>
      <Field id="flow-sort" label="Sort by">
        <select
          id="flow-sort"
          value={`${sort}:${direction}`}
          onChange={(e) => {
            const [s, d] = e.target.value.split(':');
            update({ sort: s ?? 'name', dir: d ?? 'asc', page: null });
          }}
        >
          <option value="name:asc">Name (A to Z)</option>
          <option value="name:desc">Name (Z to A)</option>
          <option value="latest_activity:desc">Latest activity (newest first)</option>
          <option value="latest_activity:asc">Latest activity (oldest first)</option>
        </select>
      </Field>
    </form>
  );
}

function FlowsTable({
  org,
  flows,
  sort,
  direction,
}: {
  org: string;
  flows: Flow[];
  sort: FlowSort;
  direction: Direction;
}) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Flows and their latest state</caption>
        <thead>
          <tr>
            <th scope="col" aria-sort={ariaSort(sort === 'name', direction)}>
              Name
            </th>
            <th scope="col">Latest state</th>
            <th scope="col" aria-sort={ariaSort(sort === 'latest_activity', direction)}>
              Latest activity
            </th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {flows.map((f) => (
            <tr key={f.name}>
              <th scope="row">
                <Link to={paths.flow(org, f.name)}>{f.name}</Link>
              </th>
              <td>
                {f.latest_state ? (
                  <StateBadge state={f.latest_state} />
                ) : (
                  <span className="muted">no trails</span>
                )}
              </td>
              <td>
                {f.latest_activity_at ? (
                  <span title={formatTime(f.latest_activity_at)}>{formatAge(f.latest_activity_at)}</span>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
              <td>{f.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export default function FlowsPage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const sort: FlowSort = params.get('sort') === 'latest_activity' ? 'latest_activity' : 'name';
  const direction =
    params.get('dir') === 'desc' || (sort === 'latest_activity' && params.get('dir') !== 'asc')
      ? 'desc'
      : 'asc';
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const name = params.get('name') ?? '';
  const query = useFlows(org, page, sort, direction, name);

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') {
        next.delete(k);
      } else {
        next.set(k, v);
      }
    }
    setParams(next);
  };

  return (
    <>
      <title>{`Flows · ${org} · Verity`}</title>
      <h1>Flows</h1>
      <FlowsFilter name={name} sort={sort} direction={direction} update={update} />
      <QueryView query={query} what="flows">
        {(data) =>
          data.pagination.total === 0 && !name ? (
            <EmptyFlows org={org} />
          ) : data.pagination.total === 0 ? (
            <p role="status">No flow matches this name.</p>
          ) : (
            <>
              <p className="muted" role="status">
                {data.pagination.total} flow{data.pagination.total === 1 ? '' : 's'}
              </p>
              <FlowsTable org={org} flows={data.data} sort={sort} direction={direction} />
              <Pager
                page={data.pagination.page}
                pageCount={data.pagination.page_count}
                onPage={(p) => update({ page: String(p) })}
                label="Flows"
              />
            </>
          )
        }
      </QueryView>
    </>
  );
}
