/**
 * People sign in through a real OpenID Provider (oidc-provider): roles from groups, a session
 * behind a cookie, its timeouts and sign-out, writes under the person's name, cross-origin writes
 * refused, and the audit log naming them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { startOidcProvider, oidcEnv, type TestProvider } from '../helpers/oidc-provider.js';
import { signInThroughProvider, type CookieJar } from '../helpers/oidc-sign-in.js';

const ORIGIN = 'http://verity.test';
let t: TestApp;
let idp: TestProvider;
let adminKey: string;

beforeAll(async () => {
  idp = await startOidcProvider({
    redirectUris: [`${ORIGIN}/auth/oidc/callback`],
    people: {
      alice: { name: 'Alice Auditor', email: 'alice@example.com', groups: ['auditors'] },
      pat: { name: 'Pat Platform', email: 'pat@example.com', groups: ['platform', 'auditors'] },
      nobody: { name: 'No Body', email: 'nobody@example.com', groups: ['marketing'] },
    },
  });
  t = await createTestApp({
    env: oidcEnv(idp, {
      platform: { acme: 'admin' },
      auditors: { acme: 'reader', beta: 'reader' },
      ghosts: { 'no-such-org': 'admin' },
    }),
  });
  adminKey = await t.seedKey('acme', 'admin');
  await t.seedKey('beta', 'admin');
});

afterAll(async () => {
  await t?.close();
  await idp?.close();
});

/** A request with the browser's Verity cookies, as the console sends it from its own origin. */
function asBrowser(
  jar: CookieJar,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      cookie: jar.header(),
      ...(method === 'GET' ? {} : { origin: ORIGIN, 'sec-fetch-site': 'same-origin' }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

describe('sign-in through the identity provider', () => {
  it('tells the console which ways to sign in there are', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/auth/providers' });
    expect(res.json()).toEqual({
      oidc: { name: 'Test IdP', login_url: '/auth/oidc/login' },
      api_key_sign_in: true,
    });
  });

  it('sends the person to the provider with PKCE, state and nonce', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/auth/oidc/login?return_to=/acme/environments' });
    expect(res.statusCode).toBe(302);
    const to = new URL(String(res.headers.location));
    expect(to.origin).toBe(idp.issuer);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(to.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(to.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(to.searchParams.get('redirect_uri')).toBe(`${ORIGIN}/auth/oidc/callback`);
    expect(to.searchParams.get('scope')).toBe('openid profile email');
    expect(String(res.headers['set-cookie'])).toMatch(/verity_oidc_state=.*HttpOnly; SameSite=Lax/);
  });

  it('signs a person in, lands where they started, and answers who they are', async () => {
    const result = await signInThroughProvider(t.app, idp, 'alice', { returnTo: '/acme/environments?x=1' });
    expect(result.status).toBe(302);
    expect(result.location).toBe('/acme/environments?x=1');
    expect(result.verity.get('verity_session')).toMatch(/^[\w-]{43}$/);
    const session = result.setCookie.find((c) => c.startsWith('verity_session='));
    expect(session).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    const me = await asBrowser(result.verity, 'GET', '/api/v2/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      kind: 'user',
      name: 'Alice Auditor',
      email: 'alice@example.com',
      organizations: [
        { org: 'acme', role: 'reader' },
        { org: 'beta', role: 'reader' },
      ],
    });
    // The same cookie works for every request (every tab), until it ends.
    expect((await asBrowser(result.verity, 'GET', '/api/v2/flows/acme')).statusCode).toBe(200);
    // A reader cannot write, signed in or not.
    const write = await asBrowser(result.verity, 'PUT', '/api/v2/flows/acme', { name: 'f', description: '' });
    expect(write.statusCode).toBe(403);
  });

  it('writes under the person name, and the audit log names them', async () => {
    const { verity } = await signInThroughProvider(t.app, idp, 'pat', { returnTo: '/acme/flows' });
    const created = await asBrowser(verity, 'PUT', '/api/v2/flows/acme', {
      name: 'payments',
      description: 'made by a person',
    });
    expect(created.statusCode).toBe(201);
    const trail = await asBrowser(verity, 'PUT', '/api/v2/trails/acme/payments', {
      name: 'release-1',
      description: '',
    });
    expect(trail.statusCode).toBe(201);
    const shown = await client(t.app, adminKey).get('/api/v2/trails/acme/payments/release-1');
    expect(JSON.stringify(shown.json)).toContain('Pat Platform');

    const log = await client(t.app, adminKey).get('/api/v2/audit-log/acme?actor=pat@example.com');
    expect(log.status).toBe(200);
    const entries = (log.json as { entries: { action: string; actor: unknown; resource: string }[] }).entries;
    expect(entries.map((e) => e.action)).toEqual(['beginTrail', 'putFlowLegacy', 'signIn']);
    expect(entries[0]!.actor).toEqual({ kind: 'user', name: 'Pat Platform', email: 'pat@example.com' });
    expect(entries[0]!.resource).toBe('/api/v2/trails/acme/payments');
    // The sign-in is recorded in each organization the groups map to.
    const beta = await client(t.app, await t.seedKey('beta', 'admin')).get(
      '/api/v2/audit-log/beta?action=signIn',
    );
    const betaNames = (beta.json as { entries: { actor: { name: string } }[] }).entries.map(
      (e) => e.actor.name,
    );
    expect(betaNames).toContain('Pat Platform');
  });

  it('refuses a write with the session cookie from another origin, and accepts the same origin', async () => {
    const { verity } = await signInThroughProvider(t.app, idp, 'pat');
    const body = { name: 'cross-site', description: '' };
    const foreign = await asBrowser(verity, 'PUT', '/api/v2/flows/acme', body, {
      origin: 'https://evil.example',
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().message).toContain('must come from http://verity.test');
    const crossSite = await asBrowser(verity, 'PUT', '/api/v2/flows/acme', body, {
      origin: ORIGIN,
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.statusCode).toBe(403);
    const missing = await client(t.app, adminKey).get('/api/v2/flows/acme/cross-site');
    expect(missing.status).toBe(404);
    const same = await asBrowser(verity, 'PUT', '/api/v2/flows/acme', body);
    expect(same.statusCode).toBe(201);
  });

  it('reads roles again from the groups at the next sign-in', async () => {
    const before = await signInThroughProvider(t.app, idp, 'alice');
    expect(
      (await asBrowser(before.verity, 'PUT', '/api/v2/flows/acme', { name: 'by-alice' })).statusCode,
    ).toBe(403);
    idp.people.get('alice')!.groups = ['platform'];
    try {
      const after = await signInThroughProvider(t.app, idp, 'alice');
      const me = (await asBrowser(after.verity, 'GET', '/api/v2/me')).json();
      expect(me.organizations).toEqual([{ org: 'acme', role: 'admin' }]);
      expect(
        (await asBrowser(after.verity, 'PUT', '/api/v2/flows/acme', { name: 'by-alice' })).statusCode,
      ).toBe(201);
    } finally {
      idp.people.get('alice')!.groups = ['auditors'];
    }
  });

  it('tells a person whose groups map to nothing, and gives no session', async () => {
    const result = await signInThroughProvider(t.app, idp, 'nobody');
    expect(result.status).toBe(403);
    expect(result.body).toContain('none of your groups gives a role');
    expect(result.body).toContain('<code>marketing</code>');
    expect(result.verity.get('verity_session')).toBeUndefined();
  });

  it('ends the session on sign-out', async () => {
    const { verity } = await signInThroughProvider(t.app, idp, 'alice');
    const out = await asBrowser(verity, 'POST', '/auth/logout');
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await asBrowser(verity, 'GET', '/api/v2/me')).statusCode).toBe(401);
    // The cookie value, kept and replayed after sign-out, no longer works either.
    const replayed = await signInThroughProvider(t.app, idp, 'alice');
    const value = replayed.verity.get('verity_session')!;
    await asBrowser(replayed.verity, 'POST', '/auth/logout');
    const again = await t.app.inject({
      method: 'GET',
      url: '/api/v2/me',
      headers: { cookie: `verity_session=${value}` },
    });
    expect(again.statusCode).toBe(401);
    expect(again.json().message).toContain('sign in again');
  });

  it('ends an idle session after 30 minutes, and any session after 12 hours', async () => {
    const { verity } = await signInThroughProvider(t.app, idp, 'alice');
    // Active every 20 minutes: the idle timeout does not end it.
    for (let i = 0; i < 3; i += 1) {
      t.clock.advance(20 * 60_000);
      expect((await asBrowser(verity, 'GET', '/api/v2/me')).statusCode).toBe(200);
    }
    t.clock.advance(31 * 60_000);
    const idle = await asBrowser(verity, 'GET', '/api/v2/me');
    expect(idle.statusCode).toBe(401);
    expect(idle.json().message).toBe('Your session has expired: sign in again');

    const busy = await signInThroughProvider(t.app, idp, 'alice');
    for (let minutes = 0; minutes < 12 * 60 - 20; minutes += 20) {
      t.clock.advance(20 * 60_000);
      expect((await asBrowser(busy.verity, 'GET', '/api/v2/me')).statusCode).toBe(200);
    }
    t.clock.advance(40 * 60_000 - 1);
    expect((await asBrowser(busy.verity, 'GET', '/api/v2/me')).statusCode).toBe(401);
  });

  it('returns only to paths of this origin', async () => {
    for (const evil of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      const result = await signInThroughProvider(t.app, idp, 'alice', { returnTo: evil });
      expect(result.status, evil).toBe(302);
      expect(result.location, evil).toBe('/');
    }
  });

  it('refuses a callback from another browser, a reused code and a changed state', async () => {
    // The browser that comes back is not the one that left: no state cookie.
    const otherBrowser = await signInThroughProvider(t.app, idp, 'alice', { otherBrowser: true });
    expect(otherBrowser.status).toBe(400);
    expect(otherBrowser.body).toContain('did not start in this browser');
    expect(otherBrowser.verity.get('verity_session')).toBeUndefined();
    let seen: URL | undefined;
    const first = await signInThroughProvider(t.app, idp, 'alice', {
      tamper: (url) => {
        seen = url;
        return url;
      },
    });
    expect(first.status).toBe(302);
    // The same callback again (a replayed code): the sign-in was used once.
    const replay = await t.app.inject({
      method: 'GET',
      url: `${seen!.pathname}${seen!.search}`,
      headers: { cookie: `verity_oidc_state=${seen!.searchParams.get('state')}` },
    });
    expect(replay.statusCode).toBe(400);
    expect(replay.body).toContain('already used');
    const changed = await signInThroughProvider(t.app, idp, 'alice', {
      tamper: (url) => {
        const u = new URL(url);
        u.searchParams.set('state', 'forged-state-value-0000000000');
        return u;
      },
    });
    expect(changed.status).toBe(400);
    expect(changed.body).toContain('did not start in this browser');
    const denied = await t.app.inject({
      method: 'GET',
      url: '/auth/oidc/callback?error=access_denied&error_description=End-User%20aborted',
    });
    expect(denied.statusCode).toBe(400);
    expect(denied.body).toContain('Test IdP answered access_denied: End-User aborted');
  });

  it('lists the members with their roles and last sign-in, to admins only', async () => {
    await signInThroughProvider(t.app, idp, 'pat');
    const res = await client(t.app, adminKey).get('/api/v2/organizations/acme/members');
    expect(res.status).toBe(200);
    const pat = (res.json as { members: Record<string, unknown>[] }).members.find(
      (m) => m.email === 'pat@example.com',
    );
    expect(pat).toMatchObject({
      display_name: 'Pat Platform',
      role: 'admin',
      source: 'oidc',
      signs_in_with: 'identity_provider',
    });
    expect(pat!.last_sign_in_at).toBe(t.clock.seconds());
    const reader = await t.seedKey('acme', 'reader');
    expect((await client(t.app, reader).get('/api/v2/organizations/acme/members')).status).toBe(403);
    expect((await client(t.app, reader).get('/api/v2/audit-log/acme')).status).toBe(403);
  });

  it('answers who a service account is', async () => {
    const me = await client(t.app, adminKey).get('/api/v2/me');
    expect(me.json).toMatchObject({
      kind: 'service_account',
      email: null,
      organizations: [{ org: 'acme', role: 'admin' }],
    });
  });
});

describe('sign-in settings', () => {
  it('keeps API keys working for the API when the console key form is off', async () => {
    const off = await createTestApp({ env: { VERITY_API_KEY_SIGN_IN: 'false' } });
    try {
      const key = await off.seedKey('acme', 'reader');
      expect((await off.app.inject({ method: 'GET', url: '/auth/providers' })).json()).toEqual({
        oidc: null,
        api_key_sign_in: false,
      });
      expect((await client(off.app, key).get('/api/v2/flows/acme')).status).toBe(200);
      expect((await off.app.inject({ method: 'GET', url: '/auth/oidc/login' })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('limits sign-in starts per client address, like every other route', async () => {
    const limited = await createTestApp({
      env: { ...oidcEnv(idp, { platform: { acme: 'admin' } }), VERITY_RATE_LIMIT_PER_MINUTE: '3' },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        statuses.push((await limited.app.inject({ method: 'GET', url: '/auth/oidc/login' })).statusCode);
      }
      expect(statuses).toEqual([302, 302, 302, 429]);
    } finally {
      await limited.close();
    }
  });
});
