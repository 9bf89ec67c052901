/**
 * `/{org}/flows/{flow}/artifacts/{fingerprint}` (`?artifact_id=` names one record): the artifact,
 * its commit and build, evidence and state, and where it ran, from when to when.
 */
import { Link, useParams, useSearchParams } from 'react-router';
import { ExternalLink } from '../../components/external-link';
import { Fact } from '../../components/facts';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { Badge, ComplianceBadge, StateBadge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import type { ArtifactRecord } from '../../lib/contract';
import { formatTime, paths, short, stringTime } from '../../lib/format';
import { useArtifact } from './api';
import { ArtifactHistory } from './artifact-history';
import { runsOf } from './artifact-runs';
import { CommitSummary, UserData } from './record-parts';
import { TableBox } from '../../components/table-box';

function WhereItRan({ org, a }: { org: string; a: ArtifactRecord }) {
  const runs = runsOf(a);
  if (runs.length === 0) {
    return <p>This artifact has not run in any environment.</p>;
  }
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Environments this artifact ran in</caption>
        <ColumnHeads columns={['Environment', 'From', 'To']} />
        <tbody>
          {runs.map((r, i) => (
            <tr key={`${r.env}-${r.from?.index ?? r.to?.index}-${i}`}>
              <th scope="row">
                <Link to={paths.environment(org, r.env)}>{r.env}</Link>
              </th>
              <td>
                {r.from ? (
                  <>
                    <Link to={paths.snapshot(org, r.env, r.from.index)}>snapshot #{r.from.index}</Link>
                    {r.from.at > 0 && ` · ${formatTime(r.from.at)}`}
                  </>
                ) : (
                  'Before the history shown'
                )}
              </td>
              <td>
                {r.to ? (
                  <>
                    <Link to={paths.snapshot(org, r.env, r.to.index)}>snapshot #{r.to.index}</Link>
                    {r.to.at > 0 && ` · ${formatTime(r.to.at)}`}
                  </>
                ) : (
                  <Badge tone="ok">Still running</Badge>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function ArtifactFacts({ org, flow, a }: { org: string; flow: string; a: ArtifactRecord }) {
  return (
    <dl className="facts">
      <Fact term="Compliance">
        <StateBadge state={a.state} /> {a.state_info && <span className="small">{a.state_info}</span>}
      </Fact>
      <Fact term="Fingerprint">
        <code className="break">{a.fingerprint}</code>
      </Fact>
      <Fact term="Trail">
        {a.trail_name ? <Link to={paths.trail(org, flow, a.trail_name)}>{a.trail_name}</Link> : 'none'}
      </Fact>
      <Fact term="Commit">
        {a.git_commit ? (
          <CommitSummary
            sha={a.git_commit}
            info={a.git_commit_info}
            shaLink={(code) => (
              <ExternalLink href={a.commit_url} otherwise={code}>
                {code}
              </ExternalLink>
            )}
          />
        ) : (
          'none'
        )}
      </Fact>
      <Fact term="Build">
        <ExternalLink href={a.build_url} otherwise={a.build_url ?? 'none'}>
          {a.build_url}
        </ExternalLink>
      </Fact>
      <Fact term="Reported">{formatTime(stringTime(a.created_at))}</Fact>
    </dl>
  );
}

/** The artifact's evidence by name, then the template's names no evidence came for. */
function ArtifactEvidence({ org, flow, a }: { org: string; flow: string; a: ArtifactRecord }) {
  if (Object.keys(a.evidence).length === 0 && (a.template ?? []).length === 0) {
    return <p>No evidence has been attested for this artifact.</p>;
  }
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Evidence of this artifact</caption>
        <ColumnHeads columns={['Name', 'Type', 'Status', 'Reported']} />
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
                <ComplianceBadge compliant={Boolean(e.is_compliant)} />
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
    </TableBox>
  );
}

function ArtifactBody({ org, flow, a }: { org: string; flow: string; a: ArtifactRecord }) {
  return (
    <>
      <title>{`${a.filename} · ${flow} · Verity`}</title>
      <h1>Artifact {a.filename}</h1>
      <ArtifactFacts org={org} flow={flow} a={a} />

      <section aria-labelledby="evidence-heading">
        <h2 id="evidence-heading">Evidence</h2>
        <ArtifactEvidence org={org} flow={flow} a={a} />
      </section>

      <section aria-labelledby="ran-heading">
        <h2 id="ran-heading">Where it ran</h2>
        <WhereItRan org={org} a={a} />
      </section>

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <ArtifactHistory org={org} flow={flow} fingerprint={a.fingerprint} trail={a.trail_name} />
      </section>
      <UserData data={a.user_data} />
    </>
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
        {(a) => <ArtifactBody org={org} flow={flow} a={a} />}
      </QueryView>
    </>
  );
}
