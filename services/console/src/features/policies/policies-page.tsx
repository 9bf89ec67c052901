/** `/{org}/policies`: the organization's environment policies, their latest version and where each is attached. */
import { Link, useParams } from 'react-router';
import { LinkList } from '../../components/link-list';
import { QueryView } from '../../components/query-state';
import { ColumnHeads } from '../../components/table-head';
import type { Policy } from '../../lib/contract';
import { formatTime, paths } from '../../lib/format';
import { policyPath } from './paths';
import { usePolicies } from './api';
import { TableBox } from '../../components/table-box';

function EmptyPolicies({ org }: { org: string }) {
  const host = window.location.origin;
  return (
    <section aria-labelledby="empty-policies" className="empty">
      <h2 id="empty-policies">No policies yet</h2>
      <p>
        A policy says what every artifact running in an environment must have: provenance, a compliant trail,
        named attestations. Attached to an environment, it decides the environment&apos;s compliance.
      </p>
      <h3>Create and attach one with the kosli CLI</h3>
      <pre>
        <code>{`export KOSLI_HOST=${host} KOSLI_ORG=${org} KOSLI_API_TOKEN=<your key>
kosli create policy build-provenance policy.yml
kosli attach-policy build-provenance --environment prod`}</code>
      </pre>
    </section>
  );
}

function PoliciesTable({ org, policies }: { org: string; policies: Policy[] }) {
  return (
    <div className="table-scroll">
      <TableBox>
        <table>
          <caption className="visually-hidden">Policies</caption>
          <ColumnHeads columns={['Policy', 'Latest version', 'Last changed', 'Attached to']} />
          <tbody>
            {policies.map((p) => {
              const latest = p.versions.reduce((n, v) => Math.max(n, v.version), 0);
              return (
                <tr key={p.name}>
                  <th scope="row">
                    <Link to={policyPath(org, p.name)}>{p.name}</Link>
                    {p.archived && <span className="muted"> (archived)</span>}
                    {p.description && <div className="small muted">{p.description}</div>}
                  </th>
                  <td className="num">{latest > 0 ? `v${latest}` : '—'}</td>
                  <td>{formatTime(p.last_modified_at)}</td>
                  <td>
                    {p.consuming_envs.length === 0 ? (
                      <span className="muted">no environment</span>
                    ) : (
                      <LinkList names={p.consuming_envs} to={(env) => paths.environment(org, env)} />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableBox>
    </div>
  );
}

export default function PoliciesPage() {
  const org = useParams().org ?? '';
  const policies = usePolicies(org);
  return (
    <>
      <title>{`Policies · ${org} · Verity`}</title>
      <h1>Policies</h1>
      <p>
        Each change of a policy&apos;s text is a new version; an environment applies the latest version of
        each policy attached to it. Open a policy to read its versions, compare them, and preview what
        attaching or detaching it would change.
      </p>
      <QueryView query={policies} what="the policies">
        {(list) =>
          list.length === 0 ? (
            <EmptyPolicies org={org} />
          ) : (
            <>
              <p className="muted" role="status">
                {list.length === 1 ? '1 policy' : `${list.length} policies`}
              </p>
              <PoliciesTable org={org} policies={list} />
            </>
          )
        }
      </QueryView>
    </>
  );
}
