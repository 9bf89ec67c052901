/**
 * `/{org}/settings/service-accounts`: the organization's service accounts, their keys (create,
 * rotate, revoke; a new key is shown once, with a copy button) and the CI issuers they trust.
 */
import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import { Field } from '../../components/field';
import { ErrorMessage, QueryView } from '../../components/query-state';
import type { ApiKeyInfo, ServiceAccount } from '../../lib/contract';
import { formText } from '../../lib/form';
import { formatTime } from '../../lib/format';
import { SettingsNav } from './settings-nav';
import { useAccountWrites, useKeys, useServiceAccounts, useTrusts } from './api';
import { TableBox } from '../../components/table-box';

type Writes = ReturnType<typeof useAccountWrites>;

/** A secret shown once: the person copies it now or never sees it again. */
function NewKey({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="status" className="new-key">
      <p>
        <strong>Copy this key now: it is not shown again.</strong>
      </p>
      <p>
        <code data-testid="new-key">{secret}</code>
      </p>
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard
            ?.writeText(secret)
            .then(() => setCopied(true))
            .catch(() => setCopied(false));
        }}
      >
        {copied ? 'Copied' : 'Copy key'}
      </button>{' '}
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}

function KeyRow({
  account,
  apiKey: k,
  writes,
  onSecret,
}: {
  account: string;
  apiKey: ApiKeyInfo;
  writes: Writes;
  onSecret: (s: string) => void;
}) {
  return (
    <tr>
      <td>{k.description}</td>
      <td>{formatTime(k.created_at)}</td>
      <td>{k.expires_at ? formatTime(k.expires_at) : 'never'}</td>
      <td>{k.last_used_at ? formatTime(k.last_used_at) : 'never'}</td>
      <td>
        <button
          type="button"
          onClick={() =>
            writes.rotateKey.mutate({ account, id: k.id }, { onSuccess: (r) => onSecret(r.key) })
          }
        >
          Rotate
        </button>{' '}
        <button
          type="button"
          onClick={() => {
            if (
              window.confirm(`Revoke the key "${k.description}" of ${account}? It stops working at once.`)
            ) {
              writes.revokeKey.mutate({ account, id: k.id });
            }
          }}
        >
          Revoke
        </button>
      </td>
    </tr>
  );
}

function Keys({
  org,
  account,
  writes,
  onSecret,
}: {
  org: string;
  account: string;
  writes: Writes;
  onSecret: (s: string) => void;
}) {
  const keys = useKeys(org, account);
  const onCreate = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const days = Number(formText(form, 'days') || '0');
    const expiresAt = days > 0 ? Math.floor(Date.now() / 1000) + days * 86_400 : null;
    writes.createKey.mutate(
      { account, description: formText(form, 'description') || 'console', expiresAt },
      { onSuccess: (created) => onSecret(created.key) },
    );
  };
  return (
    <section aria-label={`Keys of ${account}`}>
      <h3>Keys</h3>
      <QueryView query={keys} what="the keys">
        {(list) =>
          list.length === 0 ? (
            <p>No keys that still work.</p>
          ) : (
            <div className="table-scroll">
              <p className="muted">
                {list.length === 1 ? '1 key that still works' : `${list.length} keys that still work`}
              </p>
              <TableBox>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Description</th>
                      <th scope="col">Created</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Last used</th>
                      <th scope="col">Change</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((k) => (
                      <KeyRow key={k.id} account={account} apiKey={k} writes={writes} onSecret={onSecret} />
                    ))}
                  </tbody>
                </table>
              </TableBox>
            </div>
          )
        }
      </QueryView>
      <form className="filters" onSubmit={onCreate} aria-label={`New key for ${account}`}>
        <Field id={`key-desc-${account}`} label="Description">
          <input id={`key-desc-${account}`} name="description" required maxLength={256} />
        </Field>
        <Field id={`key-days-${account}`} label="Expires in (days, empty: never)">
          <input id={`key-days-${account}`} name="days" type="number" min={1} max={3650} />
        </Field>
        <button type="submit" disabled={writes.createKey.isPending}>
          Create key
        </button>
      </form>
    </section>
  );
}

function Trusts({ org, account, writes }: { org: string; account: string; writes: Writes }) {
  const trusts = useTrusts(org, account);
  return (
    <section aria-label={`CI issuers ${account} trusts`}>
      <h3>Trusted CI issuers</h3>
      <p className="muted">
        A CI job whose ID token matches a trust acts as this account with no stored key. Trusts are set with{' '}
        <code>
          PUT /api/v2/service-accounts/{'{org}'}/{'{name}'}/oidc-trusts/{'{trust}'}
        </code>
        .
      </p>
      <QueryView query={trusts} what="the trusts">
        {(list) =>
          list.length === 0 ? (
            <p>No trusted issuers.</p>
          ) : (
            <>
              <p className="muted">
                {list.length === 1 ? '1 trusted issuer' : `${list.length} trusted issuers`}
              </p>
              <ul className="link-list">
                {list.map((trust) => (
                  <li key={trust.name}>
                    <strong>{trust.name}</strong>: <code>{trust.issuer}</code>, audience{' '}
                    <code>{trust.audience}</code>,{' '}
                    {Object.entries(trust.claims)
                      .map(([k, v]) => `${k} = ${v}`)
                      .join(', ')}{' '}
                    <button
                      type="button"
                      onClick={() => {
                        if (
                          window.confirm(
                            `Remove the trust "${trust.name}"? Jobs using it stop working at once.`,
                          )
                        ) {
                          writes.removeTrust.mutate({ account, trust: trust.name });
                        }
                      }}
                    >
                      Remove
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </QueryView>
    </section>
  );
}

function Account({
  org,
  account,
  writes,
  onSecret,
}: {
  org: string;
  account: ServiceAccount;
  writes: Writes;
  onSecret: (s: string) => void;
}) {
  return (
    <details>
      <summary>
        <strong>{account.display_name}</strong>{' '}
        <span className="muted">
          ({account.privilege}; created by {account.created_by} on {formatTime(account.created_at)})
        </span>
      </summary>
      {account.description && <p>{account.description}</p>}
      <Keys org={org} account={account.name} writes={writes} onSecret={onSecret} />
      <Trusts org={org} account={account.name} writes={writes} />
    </details>
  );
}

function CreateAccount({ writes }: { writes: Writes }) {
  const onCreate = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    writes.createAccount.mutate(
      {
        name: formText(form, 'name'),
        privilege: formText(form, 'privilege') || 'reader',
        description: formText(form, 'description'),
      },
      { onSuccess: () => e.currentTarget?.reset() },
    );
  };
  return (
    <form className="filters" onSubmit={onCreate} aria-label="New service account">
      <Field id="sa-name" label="Name (letters, digits, dashes)">
        <input id="sa-name" name="name" required pattern="[A-Za-z0-9\-]+" maxLength={64} />
      </Field>
      <Field id="sa-privilege" label="Role">
        <select id="sa-privilege" name="privilege" defaultValue="reader">
          <option value="reader">reader</option>
          <option value="snapshotter">snapshotter</option>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
      </Field>
      <Field id="sa-description" label="Description">
        <input id="sa-description" name="description" maxLength={512} />
      </Field>
      <button type="submit" disabled={writes.createAccount.isPending}>
        Create service account
      </button>
    </form>
  );
}

export default function ServiceAccountsPage() {
  const org = useParams().org ?? '';
  const accounts = useServiceAccounts(org);
  const writes = useAccountWrites(org);
  const [secret, setSecret] = useState<string | null>(null);
  const failed = [
    writes.createAccount,
    writes.createKey,
    writes.rotateKey,
    writes.revokeKey,
    writes.removeTrust,
  ].find((m) => m.error);
  return (
    <>
      <title>{`Service accounts · ${org} · Verity`}</title>
      <h1>Service accounts</h1>
      <SettingsNav org={org} />
      {secret && <NewKey secret={secret} onDone={() => setSecret(null)} />}
      {failed?.error && <ErrorMessage error={failed.error} />}
      <CreateAccount writes={writes} />
      <QueryView query={accounts} what="the service accounts">
        {(list) => (
          <>
            <p>{list.length === 1 ? '1 service account' : `${list.length} service accounts`}</p>
            {list.map((a) => (
              <Account key={a.name} org={org} account={a} writes={writes} onSecret={setSecret} />
            ))}
          </>
        )}
      </QueryView>
    </>
  );
}
