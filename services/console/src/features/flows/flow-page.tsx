/** `/{org}/flows/{flow}`: the flow's trails, newest first, with their compliance. */
import { Link, useParams, useSearchParams } from 'react-router';
import { Breadcrumbs, Pager, QueryView } from '../../components/query-state';
import { StateBadge } from '../../components/state-badge';
import { formatTime, paths, safeHref, short } from '../../lib/format';
import { useFlow, useTrails } from './api';

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
        {(f) => (
          <>
            <dl className="facts">
              <div>
                <dt>Latest state</dt>
                <dd>{f.latest_state ? <StateBadge state={f.latest_state} /> : 'no trails yet'}</dd>
              </div>
              <div>
                <dt>Latest activity</dt>
                <dd>{formatTime(f.latest_activity_at)}</dd>
              </div>
              <div>
                <dt>Repository</dt>
                <dd>
                  {safeHref(f.repo_url) ? (
                    <a href={safeHref(f.repo_url)} rel="noreferrer noopener" target="_blank">
                      {f.repo_url}
                    </a>
                  ) : (
                    (f.repo_url ?? 'none')
                  )}
                </dd>
              </div>
            </dl>
            {f.description && <p>{f.description}</p>}
            {f.template && (
              <details>
                <summary>Template</summary>
                <pre>{f.template}</pre>
              </details>
            )}
          </>
        )}
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
                <table>
                  <caption className="visually-hidden">Trails, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Trail</th>
                      <th scope="col">Compliance</th>
                      <th scope="col">Commit</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.data.map((t) => (
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
