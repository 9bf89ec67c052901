/** `/{org}/flows/{flow}`: the flow's trails, newest first, with their compliance. */
import { Link, useParams, useSearchParams } from 'react-router';
import { ExternalLink } from '../../components/external-link';
import { Fact } from '../../components/facts';
import { Breadcrumbs, Pager, QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import type { Flow, TrailListItem } from '../../lib/contract';
import { formatTime, paths, plural, short } from '../../lib/format';
import { useFlow, useTrails } from './api';
import { ColumnHeads } from '../../components/table-head';
import { TableBox } from '../../components/table-box';

function FlowFacts({ f }: { f: Flow }) {
  return (
    <>
      <dl className="facts">
        <Fact term="Latest state">
          {f.latest_state ? <StateBadge state={f.latest_state} /> : 'no trails yet'}
        </Fact>
        <Fact term="Latest activity">{formatTime(f.latest_activity_at)}</Fact>
        <Fact term="Repository">
          <ExternalLink href={f.repo_url} otherwise={f.repo_url ?? 'none'}>
            {f.repo_url}
          </ExternalLink>
        </Fact>
      </dl>
      {f.description && <p>{f.description}</p>}
      {f.template && (
        <details>
          <summary>Template</summary>
          <pre>{f.template}</pre>
        </details>
      )}
    </>
  );
}

function TrailsTable({ org, flow, trails }: { org: string; flow: string; trails: TrailListItem[] }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Trails, newest first</caption>
        <ColumnHeads columns={['Trail', 'Compliance', 'Commit', 'Created']} />
        <tbody>
          {trails.map((t) => (
            <tr key={t.name}>
              <th scope="row">
                <Link to={paths.trail(org, flow, t.name)}>{t.name}</Link>
                {t.description && <div className="muted small">{t.description}</div>}
              </th>
              <td>
                <StateBadge state={t.compliance_state} />
              </td>
              <td>
                {t.git_commit_info ? (
                  <>
                    <code>{short(t.git_commit_info.sha1, 10)}</code>{' '}
                    <span className="small">{t.git_commit_info.message?.split('\n')[0]}</span>
                  </>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
              <td>{formatTime(t.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export default function FlowPage() {
  const { org = '', flow = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const flowQuery = useFlow(org, flow);
  const trails = useTrails(org, flow, page);

  return (
    <>
      <title>{`${flow} · Flows · Verity`}</title>
      <Breadcrumbs items={[{ label: 'Flows', to: paths.flows(org) }, { label: flow }]} />
      <h1>Flow {flow}</h1>
      <QueryView query={flowQuery} what="the flow">
        {(f) => <FlowFacts f={f} />}
      </QueryView>
      <section aria-labelledby="trails-heading">
        <h2 id="trails-heading">Trails</h2>
        <QueryView query={trails} what="trails">
          {(data) =>
            data.data.length === 0 ? (
              <p>
                No trails yet. Begin one with <code>kosli begin trail &lt;name&gt; --flow {flow}</code>.
              </p>
            ) : (
              <>
                <p className="muted">
                  {plural(data.pagination.total, 'trail')}, newest first
                  {data.pagination.page_count > 1 &&
                    ` (${data.pagination.per_page} a page, page ${data.pagination.page} of ${data.pagination.page_count})`}
                  .
                </p>
                <TrailsTable org={org} flow={flow} trails={data.data} />
                <Pager
                  page={data.pagination.page}
                  pageCount={data.pagination.page_count}
                  label="Trails"
                  onPage={(p) => setParams(new URLSearchParams({ page: String(p) }))}
                />
              </>
            )
          }
        </QueryView>
      </section>
    </>
  );
}
