/**
 * `/{org}/actions`: the organization's notification actions: what each watches, its triggers in
 * words, its targets as the API shows them (addresses masked for readers), and each target's last
 * delivery, success or failure, with the error.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { LinkList } from '../../components/link-list';
import { QueryView } from '../../components/query-state';
import { Badge } from '../../components/state-badge';
import { ColumnHeads } from '../../components/table-head';
import { apiUrl, getJson, seg } from '../../lib/api-client';
import type { Action } from '../../lib/contract';
import { formatAge, formatTime, paths, plural } from '../../lib/format';
import { TableBox } from '../../components/table-box';

type Target = Action['targets'][number];

const TRIGGERS: Record<string, string> = {
  ON_STARTED_ARTIFACT: 'an artifact starts',
  ON_EXITED_ARTIFACT: 'an artifact exits',
  ON_SCALED_ARTIFACT: 'an artifact scales',
  ON_ALLOWED_ARTIFACT: 'an allowlisted artifact runs',
  ON_NON_COMPLIANT_ENV: 'the environment becomes non-compliant',
  ON_COMPLIANT_ENV: 'the environment becomes compliant',
  ON_STARTED_TRAIL: 'a trail starts',
  ON_ATTESTED_PROVENANCE: 'an artifact is reported',
  ON_ATTESTATION: 'an attestation is made',
  ON_APPROVAL: 'an approval is made',
  ON_RELEASE: 'a release happens',
};

function useActions(org: string) {
  return useQuery({
    queryKey: ['actions', org],
    queryFn: ({ signal }) => getJson<Action[]>(apiUrl(`/actions/${seg(org)}`), signal),
  });
}

/** Where a target sends: chat or webhook address (as the API shows it), or the e-mail addresses. */
function targetAddress(t: Target): string {
  if (t.type === 'EMAIL') {
    return (t.emails ?? []).join(', ');
  }
  return t.webhook ?? '';
}

/** The outcome of a target's last delivery. */
function LastDelivery({ t }: { t: Target }) {
  const success = t.last_success_at;
  const failure = t.last_failure_at;
  if (success === null && failure === null) {
    return <span className="muted">No delivery yet</span>;
  }
  if (failure !== null && (success === null || failure >= success)) {
    return (
      <>
        <Badge tone="bad">Failed</Badge> {formatTime(failure)} ({formatAge(failure)})
        {t.last_error && <div className="small error-inline">{t.last_error}</div>}
        {success !== null && <div className="small muted">last delivered {formatTime(success)}</div>}
      </>
    );
  }
  return (
    <>
      <Badge tone="ok">Delivered</Badge> {formatTime(success)} ({formatAge(success)})
      {failure !== null && <div className="small muted">last failed {formatTime(failure)}</div>}
    </>
  );
}

function ActionSection({ org, a }: { org: string; a: Action }) {
  const watched = a.type === 'env' ? (a.environments ?? []) : (a.flows ?? []);
  return (
    <section aria-labelledby={`action-${a.number}`} className="artifact-block">
      <h2 id={`action-${a.number}`}>
        {a.name}{' '}
        {a.is_failing ? (
          <Badge tone="bad">Failing</Badge>
        ) : a.last_success_timestamp !== null ? (
          <Badge tone="ok">Delivering</Badge>
        ) : (
          <Badge tone="unknown" symbol="…">
            Not yet delivered
          </Badge>
        )}
      </h2>
      <p>
        {a.type === 'env' ? 'Environments' : 'Flows'}:{' '}
        {watched.length === 0 ? (
          `every ${a.type === 'env' ? 'environment' : 'flow'}`
        ) : (
          <LinkList
            names={watched}
            to={(n) => (a.type === 'env' ? paths.environment(org, n) : paths.flow(org, n))}
          />
        )}
      </p>
      <p>
        When{' '}
        {a.triggers.length === 0
          ? 'nothing (no trigger)'
          : a.triggers.map((x) => TRIGGERS[x] ?? x).join(', or ')}
        .
      </p>
      <TableBox>
        <table>
          <caption className="visually-hidden">Targets of {a.name}</caption>
          <ColumnHeads columns={['Target', 'Address', 'Last delivery']} />
          <tbody>
            {a.targets.map((t, i) => (
              <tr key={`${t.type}-${i}`}>
                <th scope="row">
                  {t.type === 'SLACK' ? 'Chat' : t.type === 'WEBHOOK' ? 'Webhook' : 'E-mail'}
                  {t.type === 'WEBHOOK' && (
                    <div className="small muted">
                      {t.has_secret ? 'own signing secret' : "signed with the organization's key"}
                    </div>
                  )}
                </th>
                <td>
                  <code>{targetAddress(t)}</code>
                </td>
                <td>
                  <LastDelivery t={t} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <p className="small muted">
        Action #{a.number}, created by {a.created_by} {formatTime(a.created_at)}, changed{' '}
        {formatTime(a.last_modified_at)}.
      </p>
    </section>
  );
}

export default function ActionsPage() {
  const { org = '' } = useParams();
  const query = useActions(org);
  return (
    <>
      <title>{`Actions · Verity`}</title>
      <h1>Actions</h1>
      <QueryView query={query} what="the actions">
        {(actions) =>
          actions.length === 0 ? (
            <section className="empty" aria-labelledby="actions-none">
              <h2 id="actions-none">No actions yet</h2>
              <p>
                An action notifies a chat, a webhook or e-mail when something happens in environments or
                flows. Create one with <code>PUT /api/v2/actions/{org}/environments</code> or the Terraform
                provider; see the <Link to={paths.environments(org)}>environments</Link> it could watch.
              </p>
            </section>
          ) : (
            <>
              <p>
                {plural(actions.length, 'action')}, {actions.filter((a) => a.is_failing).length} failing.
              </p>
              {actions.map((a) => (
                <ActionSection key={a.number} org={org} a={a} />
              ))}
            </>
          )
        }
      </QueryView>
    </>
  );
}
