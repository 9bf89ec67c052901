/** `/{org}/environments`: every environment, its compliance, type, last report, running artifacts and tags. */
import type { FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { Pager, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge } from '../../components/state-badge';
import { formatAge, formatTime, isoTime } from '../../lib/format';
import type { Environment } from '../../lib/contract';
import { useEnvironments } from './api';
import { formText } from '../../lib/form';
import { usePageParam } from '../../lib/page-param';
import { ColumnHeads } from '../../components/table-head';
import { Field } from '../../components/field';
import { TableBox } from '../../components/table-box';

/** A reporter that has said nothing for this long stands out (the in-cluster reporter beats every 10 minutes). */
const SILENT_AFTER_S = 30 * 60;

const TYPES = ['K8S', 'ECS', 'S3', 'lambda', 'server', 'docker', 'azure-apps', 'cloud-run', 'logical'];

function LastReport({ env }: { env: Environment }) {
  if (env.type === 'logical') {
    return <span className="muted">takes no reports</span>;
  }
  if (env.last_reported_at === null) {
    return <Badge tone="warn">Never reported</Badge>;
  }
  const silent = Date.now() / 1000 - env.last_reported_at > SILENT_AFTER_S;
  return (
    <span>
      <time dateTime={isoTime(env.last_reported_at)} title={formatTime(env.last_reported_at)}>
        {formatAge(env.last_reported_at)}
      </time>
      {silent && (
        <>
          {' '}
          <Badge tone="warn" title="No report for over 30 minutes: is the reporter running?">
            Silent
          </Badge>
        </>
      )}
    </span>
  );
}

function Tags({ tags }: { tags: Record<string, string> }) {
  const entries = Object.entries(tags);
  if (entries.length === 0) {
    return <span className="muted">none</span>;
  }
  return (
    <ul className="tags" aria-label="Tags">
      {entries.map(([k, v]) => (
        <li key={k} className="tag">
          {v ? `${k}: ${v}` : k}
        </li>
      ))}
    </ul>
  );
}

function EmptyEnvironments({ org }: { org: string }) {
  const host = window.location.origin;
  return (
    <section aria-labelledby="empty-envs" className="empty">
      <h2 id="empty-envs">No environments yet</h2>
      <p>An environment appears here once it is created and something reports what runs in it.</p>
      <h3>Report from a pipeline or a host with the kosli CLI</h3>
      <pre>
        <code>{`export KOSLI_HOST=${host} KOSLI_ORG=${org} KOSLI_API_TOKEN=<your key>
kosli create environment prod --type K8S --description "Production cluster"
kosli snapshot k8s prod --namespaces shop`}</code>
      </pre>
      <h3>Or run the in-cluster reporter (Helm chart)</h3>
      <pre>
        <code>{`helm install verity-agent charts/verity-agent -n verity-system \\
  --set api.url=${host} --set org=${org} \\
  --set token.existingSecret=verity-agent-token \\
  --set 'reporter.environments[0].name=prod'`}</code>
      </pre>
    </section>
  );
}

function EnvironmentsFilter({
  filter,
  setParams,
}: {
  filter: { name: string; type: string; tag: string };
  setParams: (params: URLSearchParams) => void;
}) {
  const filtered = Boolean(filter.name || filter.type || filter.tag);
  const onFilter = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const k of ['name', 'type', 'tag']) {
      const v = formText(form, k);
      if (v) {
        next.set(k, v);
      }
    }
    setParams(next);
  };
  return (
    <form className="filters" onSubmit={onFilter} aria-label="Filter environments">
      <Field id="env-name" label="Name contains">
        <input id="env-name" name="name" type="search" defaultValue={filter.name} />
      </Field>
      <Field id="env-type" label="Type">
        <select id="env-type" name="type" defaultValue={filter.type}>
          <option value="">Any type</option>
          {TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </Field>
      <Field id="env-tag" label="Tag (key or key:value)">
        <input id="env-tag" name="tag" type="search" defaultValue={filter.tag} />
      </Field>
      <button type="submit">Filter</button>
      {filtered && (
        <button type="button" onClick={() => setParams(new URLSearchParams())}>
          Clear filters
        </button>
      )}
    </form>
  );
}

function EnvironmentsTable({ org, environments }: { org: string; environments: Environment[] }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Environments and their compliance</caption>
        <ColumnHeads columns={['Name', 'Compliance', 'Type', 'Last report', 'Running artifacts', 'Tags']} />
        <tbody>
          {environments.map((env) => (
            <tr key={env.name}>
              <th scope="row">
                <Link to={`/${encodeURIComponent(org)}/environments/${encodeURIComponent(env.name)}`}>
                  {env.name}
                </Link>
                {env.description && <div className="muted small">{env.description}</div>}
              </th>
              <td>
                <ComplianceBadge
                  compliant={env.latest_snapshot_index === null ? undefined : env.state}
                  unknown={env.latest_snapshot_index === null ? 'no-snapshot' : 'no-policy'}
                />
              </td>
              <td>{env.type}</td>
              <td>
                <LastReport env={env} />
              </td>
              <td className="num">{env.running_artifacts}</td>
              <td>
                <Tags tags={env.tags} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export default function EnvironmentsPage() {
  const { org = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const [page, setPage] = usePageParam('page');
  const filter = {
    page,
    name: params.get('name') ?? '',
    type: params.get('type') ?? '',
    tag: params.get('tag') ?? '',
  };
  const query = useEnvironments(org, filter);
  const filtered = Boolean(filter.name || filter.type || filter.tag);

  return (
    <>
      <title>{`Environments · ${org} · Verity`}</title>
      <h1>Environments</h1>
      {/* Keyed by the filter in the URL, so clearing it (or going back) also resets the inputs. */}
      <EnvironmentsFilter
        key={`${filter.name}\u0000${filter.type}\u0000${filter.tag}`}
        filter={filter}
        setParams={setParams}
      />
      <QueryView query={query} what="environments">
        {(data) =>
          data.total_count === 0 && !filtered ? (
            <EmptyEnvironments org={org} />
          ) : data.total_count === 0 ? (
            <p role="status">No environment matches these filters.</p>
          ) : (
            <>
              <p className="muted" role="status">
                {data.total_count} environment{data.total_count === 1 ? '' : 's'}
              </p>
              <EnvironmentsTable org={org} environments={data.environments} />
              <Pager page={data.page} pageCount={data.total_pages} onPage={setPage} label="Environments" />
            </>
          )
        }
      </QueryView>
    </>
  );
}
