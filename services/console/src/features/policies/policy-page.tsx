/**
 * `/{org}/policies/{name}`: a policy's versions and the text of each (`?version=`), the diff of two
 * versions (`?from=&to=`), the environments it is attached to, and a preview of attaching the
 * version shown, or detaching the policy, on an environment.
 */
import { Link, useParams, useSearchParams } from 'react-router';
import { Fact } from '../../components/facts';
import { LinkList } from '../../components/link-list';
import { Breadcrumbs, QueryView } from '../../components/query-state';
import { ColumnHeads } from '../../components/table-head';
import type { Policy } from '../../lib/contract';
import { formatTime, paths } from '../../lib/format';
import { usePolicy } from './api';
import { policiesPath } from './paths';
import { CompareVersions } from './policy-diff';
import { PreviewForm } from './policy-preview';
import { TableBox } from '../../components/table-box';

type Version = Policy['versions'][number];

/** A whole positive number from the address, else null. */
const positive = (text: string | null): number | null =>
  text !== null && /^\d{1,9}$/.test(text) && Number(text) > 0 ? Number(text) : null;

function PolicyFacts({ org, p }: { org: string; p: Policy }) {
  return (
    <dl className="facts">
      <Fact term="Description">{p.description || <span className="muted">none</span>}</Fact>
      <Fact term="Created">
        {formatTime(p.created_at)} by {p.created_by}
      </Fact>
      <Fact term="Last changed">{formatTime(p.last_modified_at)}</Fact>
      <Fact term="Attached to">
        {p.consuming_envs.length === 0 ? (
          'no environment'
        ) : (
          <LinkList names={p.consuming_envs} to={(env) => paths.environment(org, env)} />
        )}
      </Fact>
      {p.archived && <Fact term="Archived">yes</Fact>}
    </dl>
  );
}

function VersionsTable({
  versions,
  shown,
  link,
}: {
  versions: Version[];
  shown: number;
  link: (version: number) => string;
}) {
  return (
    <div className="table-scroll">
      <TableBox>
        <table>
          <caption className="visually-hidden">Versions, newest first</caption>
          <ColumnHeads columns={['Version', 'Created', 'By', 'Comment']} />
          <tbody>
            {[...versions].reverse().map((v) => (
              <tr key={v.version}>
                <th scope="row">
                  {v.version === shown ? (
                    <span aria-current="true">v{v.version} (shown below)</span>
                  ) : (
                    <Link to={link(v.version)} aria-label={`Show the text of v${v.version}`}>
                      v{v.version}
                    </Link>
                  )}
                </th>
                <td>{formatTime(v.timestamp)}</td>
                <td>{v.created_by}</td>
                <td>{v.comment || <span className="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </div>
  );
}

function PolicyBody({ org, p }: { org: string; p: Policy }) {
  const [params, setParams] = useSearchParams();
  const versions = [...p.versions].sort((a, b) => a.version - b.version);
  const latest = versions[versions.length - 1];
  if (!latest) {
    return <p>This policy has no version.</p>;
  }
  const asked = positive(params.get('version'));
  const shown = versions.find((v) => v.version === asked) ?? latest;
  const to = positive(params.get('to')) ?? latest.version;
  const from = positive(params.get('from')) ?? Math.max(1, to - 1);
  const withParams = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      next.set(k, v);
    }
    return `?${next.toString()}`;
  };
  return (
    <>
      <PolicyFacts org={org} p={p} />
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Versions ({versions.length})</h2>
        <VersionsTable
          versions={versions}
          shown={shown.version}
          link={(v) => withParams({ version: String(v) })}
        />
        {asked !== null && asked !== shown.version && (
          <p role="alert">
            This policy has no version {asked}: the latest, v{latest.version}, is shown.
          </p>
        )}
        <h3 id="version-text">
          Text of v{shown.version}
          {shown.version === latest.version ? ' (latest)' : ''}
        </h3>
        <pre>
          <code data-testid="policy-text">{shown.policy_yaml}</code>
        </pre>
      </section>
      <section aria-labelledby="compare-heading">
        <h2 id="compare-heading">Compare versions</h2>
        <CompareVersions
          versions={versions}
          from={from}
          to={to}
          onCompare={(f, t) => setParams(withParams({ from: String(f), to: String(t) }).slice(1))}
        />
      </section>
      <section aria-labelledby="preview-heading">
        <h2 id="preview-heading">Preview on an environment</h2>
        <PreviewForm
          key={shown.version}
          org={org}
          policy={p.name}
          version={shown.version}
          yaml={shown.policy_yaml}
          attachedTo={p.consuming_envs}
        />
      </section>
    </>
  );
}

export default function PolicyPage() {
  const { org = '', name = '' } = useParams();
  const policy = usePolicy(org, name);
  return (
    <>
      <title>{`Policy ${name} · ${org} · Verity`}</title>
      <Breadcrumbs items={[{ label: 'Policies', to: policiesPath(org) }, { label: name }]} />
      <h1>Policy {name}</h1>
      <QueryView query={policy} what="the policy">
        {(p) => <PolicyBody org={org} p={p} />}
      </QueryView>
    </>
  );
}
