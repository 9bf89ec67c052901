/** `/{org}/settings/members`: the people of the organization, their roles and last sign-in. */
import { useParams } from 'react-router';
import { QueryView } from '../../components/query-state';
import { formatTime } from '../../lib/format';
import { SettingsNav } from './settings-nav';
import { useMembers } from './api';
import { TableBox } from '../../components/table-box';

export default function MembersPage() {
  const org = useParams().org ?? '';
  const members = useMembers(org);
  return (
    <>
      <title>{`Members · ${org} · Verity`}</title>
      <h1>Members</h1>
      <SettingsNav org={org} />
      <p>
        People who signed in through the identity provider get their role from their groups at each sign-in;
        people added by an administrator keep theirs.
      </p>
      <QueryView query={members} what="the members">
        {({ members: list }) =>
          list.length === 0 ? (
            <p>Nobody has signed in to this organization yet.</p>
          ) : (
            <div className="table-scroll">
              <TableBox>
                <table>
                  <caption>{list.length === 1 ? '1 member' : `${list.length} members`}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">E-mail</th>
                      <th scope="col">Role</th>
                      <th scope="col">Role from</th>
                      <th scope="col">Last sign-in</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((m) => (
                      <tr key={m.name}>
                        <td>
                          {m.display_name}
                          {m.display_name !== m.name && <span className="muted"> ({m.name})</span>}
                        </td>
                        <td>{m.email ?? '—'}</td>
                        <td>{m.role}</td>
                        <td>{m.source === 'oidc' ? 'identity provider groups' : 'an administrator'}</td>
                        <td>{m.last_sign_in_at === null ? 'never' : formatTime(m.last_sign_in_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
            </div>
          )
        }
      </QueryView>
    </>
  );
}
