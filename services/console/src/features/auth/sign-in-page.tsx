/**
 * Sign in with an API key: the key is checked against the API, then kept in this tab only.
 * The organization is the key's own unless one is given. A deep link opened before sign-in
 * is where the user lands afterwards.
 */
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { ApiError, apiUrl, getJsonWithKey, seg } from '../../lib/api-client';
import type { DefaultOrg, Organization } from '../../lib/contract';
import { signIn, useSession } from '../../lib/session';
import type { ReturnTo } from './require-session';
import { formText } from '../../lib/form';

/** Only same-origin console paths are followed after sign-in. */
function safeReturn(from: string | undefined): string | null {
  return from && from.startsWith('/') && !from.startsWith('//') && from !== '/sign-in' ? from : null;
}

export function SignInPage() {
  const session = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const from = safeReturn((location.state as ReturnTo | null)?.from);
  const orgFromLink = from ? decodeURIComponent(from.split('/')[1] ?? '') : '';

  if (session && !busy) {
    return <Navigate to={from ?? `/${encodeURIComponent(session.org)}/environments`} replace />;
  }

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const key = formText(form, 'key');
    let org = formText(form, 'org');
    if (!key) {
      setError('Enter an API key.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if (!org) {
        const d = await getJsonWithKey<DefaultOrg>(key, apiUrl('/user/default-org'));
        if (!d.default_org_name) {
          setError('This key has no default organization: enter the organization name.');
          return;
        }
        org = d.default_org_name;
      }
      const o = await getJsonWithKey<Organization>(key, apiUrl(`/organizations/${seg(org)}`));
      signIn({ key, org: o.name });
      void navigate(from ?? `/${encodeURIComponent(o.name)}/environments`, { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401)
        setError('This API key is not valid, or it has expired.');
      else if (err instanceof ApiError && err.status === 403)
        setError(`This key has no access to organization '${org}'.`);
      else if (err instanceof ApiError && err.status === 404)
        setError(`Organization '${org}' does not exist.`);
      else setError(err instanceof Error ? err.message : 'Sign-in failed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <title>Sign in · Verity</title>
      <h1>Sign in to Verity</h1>
      <p>
        Use an API key of a service account or a user. The key stays in this browser tab only: closing the tab
        or signing out forgets it, and 30 minutes without activity sign you out.
      </p>
      {from && (
        <p className="muted">
          After signing in you will return to <code>{from}</code>.
        </p>
      )}
      <form onSubmit={(e) => void onSubmit(e)} aria-describedby={error ? 'sign-in-error' : undefined}>
        <div className="field">
          <label htmlFor="sign-in-key">API key</label>
          <input
            id="sign-in-key"
            name="key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            required
            aria-invalid={error ? true : undefined}
          />
        </div>
        <div className="field">
          <label htmlFor="sign-in-org">Organization (optional: the key&apos;s own when empty)</label>
          <input id="sign-in-org" name="org" type="text" autoComplete="off" defaultValue={orgFromLink} />
        </div>
        {error && (
          <p id="sign-in-error" role="alert" className="error-box">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
