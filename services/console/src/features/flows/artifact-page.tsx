/**
 * `/{org}/flows/{flow}/artifacts/{fingerprint}` (`?artifact_id=` names one record): the artifact,
 * its commit and build, evidence and state, and where it ran, from when to when.
 */
import { Link, useParams, useSearchParams } from 'react-router';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { Badge, StateBadge } from '../../components/state-badge';
import type { ArtifactRecord } from '../../lib/contract';
import { formatTime, jsonText, paths, safeHref, short, stringTime } from '../../lib/format';
import { useArtifact } from './api';
import { runsOf } from './artifact-runs';

function WhereItRan({ org, a }: { org: string; a: ArtifactRecord }) {
  const runs = runsOf(a);
  if (runs.length === 0) return <p>This artifact has not run in any environment.</p>;
  return (
    <table>
      <caption className="visually-hidden">Environments this artifact ran in</caption>
      <thead>
        <tr>
          <th scope="col">Environment</th>
          <th scope="col">From</th>
          <th scope="col">To</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r, i) => (
          <tr key={`${r.env}-${r.from.index}-${i}`}>
            <th scope="row">
              <Link to={paths.environment(org, r.env)}>{r.env}</Link>
            </th>
            <td>
              <Link to={paths.snapshot(org, r.env, r.from.index)}>snapshot #{r.from.index}</Link>
              {r.from.at > 0 && ` · ${formatTime(r.from.at)}`}
            </td>
            <td>
              {r.to ? (
                <>
                  <Link to={paths.snapshot(org, r.env, r.to.index)}>snapshot #{r.to.index}</Link> ·{' '}
                  {formatTime(r.to.at)}
                </>
              ) : (
                <Badge tone="ok">Still running</Badge>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function ArtifactPage() {
  const { org = '', flow = '', fingerprint = '' } = useParams();
  const [params] = useSearchParams();
  const artifactId = params.get('artifact_id');
  const query = useArtifact(org, flow, fingerprint, artifactId);

  return (
    <>
      <Breadcrumbs
        items={[
          { label: 'Flows', to: paths.flows(org) },
          { label: flow, to: paths.flow(org, flow) },
          { label: `Artifact ${short(fingerprint, 12)}` },
        ]}
      />
      <QueryView query={query} what="the artifact">
        {(a) => (
          <>
            <title>{`${a.filename} · ${flow} · Verity`}</title>
            <h1>Artifact {a.filename}</h1>
            <dl className="facts">
              <div>
                <dt>Compliance</dt>
                <dd>
                  <StateBadge state={a.state} />{' '}
                  {a.state_info && <span className="small">{a.state_info}</span>}
                </dd>
              </div>
              <div>
                <dt>Fingerprint</dt>
                <dd>
                  <code className="break">{a.fingerprint}</code>
                </dd>
              </div>
              <div>
                <dt>Trail</dt>
                <dd>
                  {a.trail_name ? (
                    <Link to={paths.trail(org, flow, a.trail_name)}>{a.trail_name}</Link>
                  ) : (
                    'none'
                  )}
                </dd>
              </div>
              <div>
                <dt>Commit</dt>
                <dd>
                  {a.git_commit ? (
                    <>
                      {safeHref(a.commit_url) ? (
                        <a href={safeHref(a.commit_url)} rel="noreferrer noopener" target="_blank">
                          <code>{short(a.git_commit, 10)}</code>
                        </a>
                      ) : (
                        <code>{short(a.git_commit, 10)}</code>
                      )}{' '}
                      {a.git_commit_info?.message?.split('\n')[0]}
                      {a.git_commit_info?.author && ` · ${a.git_commit_info.author}`}
                    </>
                  ) : (
                    'none'
                  )}
                </dd>
              </div>
              <div>
                <dt>Build</dt>
                <dd>
                  {safeHref(a.build_url) ? (
                    <a href={safeHref(a.build_url)} rel="noreferrer noopener" target="_blank">
                      {a.build_url}
                    </a>
                  ) : (
                    (a.build_url ?? 'none')
                  )}
                </dd>
              </div>
              <div>
                <dt>Reported</dt>
                <dd>{formatTime(stringTime(a.created_at))}</dd>
              </div>
            </dl>

            <section aria-labelledby="evidence-heading">
              <h2 id="evidence-heading">Evidence</h2>
              {Object.keys(a.evidence).length === 0 && (a.template ?? []).length === 0 ? (
                <p>No evidence has been attested for this artifact.</p>
              ) : (
                <table>
                  <caption className="visually-hidden">Evidence of this artifact</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Type</th>
                      <th scope="col">Status</th>
                      <th scope="col">Reported</th>
                    </tr>
                  </thead>
                  <tbody>
                    {Object.entries(a.evidence).map(([name, e]) => (
                      <tr key={name}>
                        <th scope="row">
                          {a.trail_name ? (
                            <Link
                              to={`${paths.trail(org, flow, a.trail_name)}?attestation_id=${encodeURIComponent(e.attestation_id)}`}
                            >
                              {name}
                            </Link>
                          ) : (
                            name
                          )}
                        </th>
                        <td>{e.evidence_type}</td>
                        <td>
                          {e.is_compliant ? (
                            <Badge tone="ok">Compliant</Badge>
                          ) : (
                            <Badge tone="bad">Non-compliant</Badge>
                          )}
                        </td>
                        <td>{formatTime(stringTime(e.created_at))}</td>
                      </tr>
                    ))}
                    {(a.template ?? [])
                      .filter((name) => !(name in a.evidence))
                      .map((name) => (
                        <tr key={`missing-${name}`}>
                          <th scope="row">{name}</th>
                          <td className="muted">expected by the template</td>
                          <td>
                            <Badge tone="warn">Missing</Badge>
                          </td>
                          <td>never reported</td>
                        </tr>
                      ))}
                  </tbody>
                </table>
              )}
            </section>

            <section aria-labelledby="ran-heading">
              <h2 id="ran-heading">Where it ran</h2>
              <WhereItRan org={org} a={a} />
            </section>

            <section aria-labelledby="history-heading">
              <h2 id="history-heading">History</h2>
              <ol className="history">
                {a.history.map((h, i) => (
                  <li key={`${h.timestamp}-${i}`}>
                    <time>{formatTime(h.timestamp)}</time> {h.event}
                  </li>
                ))}
              </ol>
            </section>
            {a.user_data !== null && a.user_data !== undefined && jsonText(a.user_data) !== '{}' && (
              <details>
                <summary>User data</summary>
                <pre>{jsonText(a.user_data)}</pre>
              </details>
            )}
          </>
        )}
      </QueryView>
    </>
  );
}
