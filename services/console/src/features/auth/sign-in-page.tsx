/**
 * Sign in through the organization's identity provider when one is configured (the session then
 * lives in a cookie every tab shares), or with an API key as break-glass: the key is checked
 * against the API, then kept in this tab only; the organization is the key's own unless one is
 * given. A deep link opened before sign-in is where the user lands afterwards.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { ApiError, apiUrl, getJsonWithKey, seg } from '../../lib/api-client';
import type { DefaultOrg, Organization } from '../../lib/contract';
import { signIn, useSession } from '../../lib/session';
import type { ReturnTo } from './require-session';
import { formText } from '../../lib/form';
import { Field } from '../../components/field';

/** Only same-origin console paths are followed after sign-in. */
function safeReturn(from: string | undefined): string | null {
  return from && from.startsWith('/') && !from.startsWith('//') && from !== '/sign-in' ? from : null;
}

/** Checks a key against the API and signs in with it; says in words what went wrong. */
function useSignIn(from: string | null) {
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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
      void navigate(from ?? `/${encodeURIComponent(o.name)}`, { replace: true });
    } catch (err) {
      setError(signInError(err, org));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, onSubmit };
}

function signInError(err: unknown, org: string): string {
  if (err instanceof ApiError && err.status === 401) {
    return 'This API key is not valid, or it has expired.';
  }
  if (err instanceof ApiError && err.status === 403) {
    return `This key has no access to organization '${org}'.`;
  }
  if (err instanceof ApiError && err.status === 404) {
    return `Organization '${org}' does not exist.`;
  }
  return err instanceof Error ? err.message : 'Sign-in failed.';
}

function SignInForm({
  error,
  busy,
  orgFromLink,
  onSubmit,
}: {
  error: string | null;
  busy: boolean;
  orgFromLink: string;
  onSubmit: (e: FormEvent<HTMLFormElement>) => Promise<void>;
}) {
  return (
    <form onSubmit={(e) => void onSubmit(e)} aria-describedby={error ? 'sign-in-error' : undefined}>
      <Field id="sign-in-key" label="API key">
        <input
          id="sign-in-key"
          name="key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          aria-invalid={error ? true : undefined}
        />
      </Field>
      <Field id="sign-in-org" label="Organization (optional: the key's own when empty)">
        <input id="sign-in-org" name="org" type="text" autoComplete="off" defaultValue={orgFromLink} />
      </Field>
      {error && (
        <p id="sign-in-error" role="alert" className="error-box">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

interface Providers {
  oidc: { name: string; login_url: string } | null;
  api_key_sign_in: boolean;
}

/** The ways to sign in this server offers; both while they are not known yet. */
function useProviders(): Providers | null {
  const [providers, setProviders] = useState<Providers | null>(null);
  useEffect(() => {
    let live = true;
    fetch('/auth/providers', { headers: { accept: 'application/json' } })
      .then(async (res) =>
        res.ok ? ((await res.json()) as Providers) : { oidc: null, api_key_sign_in: true },
      )
      .catch(() => ({ oidc: null, api_key_sign_in: true }))
      .then((p) => live && setProviders(p))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  return providers;
}

export function SignInPage() {
  const session = useSession();
  const location = useLocation();
  const from = safeReturn((location.state as ReturnTo | null)?.from);
  const orgFromLink = from ? decodeURIComponent(from.split('/')[1] ?? '') : '';
  const { error, busy, onSubmit } = useSignIn(from);
  const providers = useProviders();

  if (session && !busy) {
    return <Navigate to={from ?? `/${encodeURIComponent(session.org)}`} replace />;
  }

  return (
    <main id="main" className="sign-in">
      <title>Sign in · Verity</title>
      <h1>Sign in to Verity</h1>
      {from && (
        <p className="muted">
          After signing in you will return to <code>{from}</code>.
        </p>
      )}
      {providers === null && <p role="status">Loading the ways to sign in…</p>}
      {providers?.oidc && (
        <p>
          <a
            className="button primary"
            href={`${providers.oidc.login_url}?return_to=${encodeURIComponent(from ?? '/')}`}
          >
            Sign in with {providers.oidc.name}
          </a>
        </p>
      )}
      {providers?.api_key_sign_in && (
        <div>
          <h2>{providers.oidc ? 'Or sign in with an API key' : 'Sign in with an API key'}</h2>
          <p>
            Use an API key of a service account or a user. The key stays in this browser tab only: closing the
            tab or signing out forgets it, and 30 minutes without activity sign you out.
          </p>
          <SignInForm error={error} busy={busy} orgFromLink={orgFromLink} onSubmit={onSubmit} />
        </div>
      )}
      {providers && !providers.oidc && !providers.api_key_sign_in && (
        <p role="alert" className="error-box">
          No way to sign in is configured on this server. Ask its operator.
        </p>
      )}
    </main>
  );
}
