/**
 * Keyless CI: a CI job's OIDC ID token acts as the service account whose trust it matches. A real
 * issuer runs on 127.0.0.1 (listed in VERITY_OIDC_INSECURE_ISSUERS), signs GitHub Actions-shaped
 * tokens, and the CLI's requests go through with them as the account would with a key.
 */
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { startIssuer, type IssuerFault, type TestIssuer } from '../helpers/oidc-issuer.js';

const ORG = 'acme';
const ACCOUNTS = `/api/v2/service-accounts/${ORG}`;
const TRUST = { audience: 'verity', claims: { repository: 'acme/payments', ref: 'refs/heads/*' } };

let t: TestApp;
let issuer: TestIssuer;
/** An http issuer the operator did not list. */
let unlisted: TestIssuer;
let admin: ReturnType<typeof client>;

/** The claims of a GitHub Actions ID token for a push to main of acme/payments, issued now. */
function ghaClaims(overrides: Record<string, unknown> = {}, clock = t.clock): Record<string, unknown> {
  const now = Math.floor(clock.seconds());
  return {
    sub: 'repo:acme/payments:ref:refs/heads/main',
    aud: 'verity',
    repository: 'acme/payments',
    repository_owner: 'acme',
    ref: 'refs/heads/main',
    workflow: 'ci',
    run_id: '4242',
    iat: now,
    nbf: now,
    exp: now + 300,
    ...overrides,
  };
}

const token = (overrides: Record<string, unknown> = {}, kid?: string) =>
  issuer.sign(ghaClaims(overrides), kid ? { kid } : {});

/** What a request to the organization with this bearer value answers. */
const asBearer = async (bearer: string, url = `/api/v2/flows/${ORG}`) => client(t.app, bearer).get(url);

beforeAll(async () => {
  issuer = await startIssuer();
  unlisted = await startIssuer();
  t = await createTestApp({ env: { VERITY_OIDC_INSECURE_ISSUERS: issuer.url } });
  admin = client(t.app, await t.seedKey(ORG, 'admin'));
  expect((await admin.post(ACCOUNTS, { name: 'ci-bot', privilege: 'member' })).status).toBe(201);
  const put = await admin.put(`${ACCOUNTS}/ci-bot/oidc-trusts/payments-main`, {
    issuer: issuer.url,
    ...TRUST,
  });
  expect(put.status, put.body).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await issuer?.close();
  await unlisted?.close();
});

describe('a CI job with an ID token', () => {
  it('creates a flow, begins a trail and attests as the service account, keys fetched once', async () => {
    const cli = cliClient(t.app, await token());
    const flow = await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: 'payments', description: 'CI' });
    expect(flow.status, flow.body).toBe(201);
    const trail = await cli.json('PUT', `/api/v2/trails/${ORG}/payments`, { name: 'run-4242' });
    expect(trail.status, trail.body).toBe(201);
    const attested = await cli.multipart(
      'POST',
      `/api/v2/attestations/${ORG}/payments/trail/run-4242/generic`,
      [{ name: 'data_json', value: JSON.stringify({ attestation_name: 'unit-tests', is_compliant: true }) }],
    );
    expect(attested.status, attested.body).toBe(201);
    const read = await cli.get(`/api/v2/trails/${ORG}/payments/run-4242`);
    expect(read.status).toBe(200);
    expect(read.json.created_by).toBe('ci-bot');
    expect(issuer.requests).toEqual(['/.well-known/openid-configuration', '/.well-known/jwks']);
    // The audit log names the account and the token's subject for each write.
    const log = await admin.get(`/api/v2/audit-log/${ORG}?actor=ci-bot`);
    expect(log.status).toBe(200);
    const entries = (log.json as { entries: { action: string; actor: unknown }[] }).entries;
    expect(entries.map((e) => e.action)).toEqual(['postGenericAttestation', 'beginTrail', 'putFlowLegacy']);
    for (const entry of entries) {
      expect(entry.actor).toEqual({
        kind: 'service_account',
        name: 'ci-bot',
        email: null,
        subject: 'repo:acme/payments:ref:refs/heads/main',
      });
    }
  });

  it('accepts an expiry within the clock skew allowance, and refuses one past it', async () => {
    const now = Math.floor(t.clock.seconds());
    expect((await asBearer(await token({ exp: now - 30 }))).status).toBe(200);
    const expired = await asBearer(await token({ iat: now - 600, nbf: now - 600, exp: now - 120 }));
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual({ message: 'OIDC token has expired' });
    expect(expired.headers['www-authenticate']).toBe('Bearer realm="verity"');
  });

  it('refuses tokens not valid yet, issued in the future, issued over a day ago, or without an expiry', async () => {
    const now = Math.floor(t.clock.seconds());
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ nbf: now + 600 }, 'OIDC token is not valid yet (nbf)'],
      [{ iat: now + 600, nbf: now }, 'OIDC token was issued in the future (iat)'],
      [{ iat: now - 25 * 3600, nbf: now - 25 * 3600 }, 'OIDC token was issued more than 24h ago'],
      [{ exp: undefined }, "OIDC token has no 'exp' claim"],
    ];
    for (const [claims, message] of cases) {
      const res = await asBearer(await token(claims));
      expect([res.status, res.json.message]).toEqual([401, message]);
    }
  });

  it('refuses a wrong audience without naming the expected one', async () => {
    const res = await asBearer(await token({ aud: 'sts.amazonaws.com' }));
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      message: 'OIDC token audience does not match any trust of organization acme',
    });
  });

  it('names the mismatched claim, never the value a trust expects', async () => {
    const tag = await asBearer(await token({ ref: 'refs/tags/v1.0.0' }));
    expect(tag.status).toBe(401);
    expect(tag.json).toEqual({
      message: "OIDC token claim 'ref' does not match any trust of organization acme",
    });
    expect(tag.body).not.toContain('refs/heads');
    const fork = await asBearer(await token({ repository: 'mallory/payments' }));
    expect(fork.json).toEqual({
      message: "OIDC token claim 'repository' does not match any trust of organization acme",
    });
    expect(fork.body).not.toContain('acme/payments');
    const missing = await asBearer(await token({ ref: undefined }));
    expect(missing.json.message).toBe("OIDC token claim 'ref' does not match any trust of organization acme");
  });

  it('refuses a token whose signature does not cover its claims', async () => {
    const [header, , signature] = (await token()).split('.');
    const forged = Buffer.from(
      JSON.stringify(ghaClaims({ iss: issuer.url, ref: 'refs/heads/release' })),
    ).toString('base64url');
    const res = await asBearer(`${header}.${forged}.${signature}`);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ message: 'OIDC token signature is invalid' });
  });

  it("refuses alg 'none' and HS256 before any key is looked up", async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const none = await asBearer(
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(ghaClaims({ iss: issuer.url }))}.`,
    );
    expect(none.status).toBe(401);
    expect(none.json.message).toMatch(
      /^OIDC token algorithm 'none' is not accepted: only asymmetric signatures/,
    );
    const hs = await new SignJWT(ghaClaims({ iss: issuer.url }))
      .setProtectedHeader({ alg: 'HS256', kid: 'key-1' })
      .sign(new TextEncoder().encode('a shared secret anyone could guess'));
    const hsRes = await asBearer(hs);
    expect(hsRes.status).toBe(401);
    expect(hsRes.json.message).toMatch(/^OIDC token algorithm 'HS256' is not accepted/);
  });

  it('refuses a malformed token and a token on a route without an organization', async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const garbled = await asBearer(`${b64({ alg: 'RS256' })}.bm90IGpzb24.c2ln`);
    expect(garbled.json).toEqual({ message: 'OIDC token is malformed: expected a signed JWT' });
    const noOrg = await asBearer(await token(), '/api/v2/user/default-org');
    expect(noOrg.status).toBe(401);
    expect(noOrg.json).toEqual({
      message: 'OIDC tokens are accepted only on routes that name an organization',
    });
  });

  it('refuses an organization that trusts no such issuer, and acts only in its own', async () => {
    const other = client(t.app, await t.seedKey('globex', 'admin'));
    expect((await other.get('/api/v2/flows/globex')).status).toBe(200);
    const res = await asBearer(await token(), '/api/v2/flows/globex');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      message: `OIDC token issuer '${issuer.url}' is not trusted by organization globex`,
    });
  });

  it('acts with the privilege of the account: a reader account cannot write', async () => {
    await admin.post(ACCOUNTS, { name: 'docs-bot', privilege: 'reader' });
    const put = await admin.put(`${ACCOUNTS}/docs-bot/oidc-trusts/docs`, {
      issuer: issuer.url,
      audience: 'verity',
      claims: { repository: 'acme/docs' },
    });
    expect(put.status).toBe(201);
    const cli = cliClient(t.app, await token({ repository: 'acme/docs' }));
    expect((await cli.get(`/api/v2/flows/${ORG}`)).status).toBe(200);
    const write = await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: 'docs', description: '' });
    expect(write.status).toBe(403);
  });
});

describe('issuer keys', () => {
  it('fetches rotated keys when a new kid appears, at most once a minute per issuer', async () => {
    await issuer.addKey('key-2');
    const fetchedBefore = issuer.requests.length;
    // The keys were fetched less than a minute ago: an unknown kid does not fetch them again yet.
    const early = await asBearer(await token({}, 'key-2'));
    expect(early.status).toBe(401);
    expect(early.json).toEqual({
      message: `OIDC token key 'key-2' is not among the keys of issuer '${issuer.url}'`,
    });
    expect(issuer.requests.length).toBe(fetchedBefore);

    t.clock.advance(61_000);
    const rotated = await asBearer(await token({}, 'key-2'));
    expect(rotated.status, rotated.body).toBe(200);
    expect(issuer.requests.slice(fetchedBefore)).toEqual([
      '/.well-known/openid-configuration',
      '/.well-known/jwks',
    ]);
    // The old key still verifies: the issuer publishes both.
    expect((await asBearer(await token({}, 'key-1'))).status).toBe(200);
  });

  it('refuses a kid the issuer never had, and junk kids cannot make it fetch more than once a minute', async () => {
    await issuer.addKey('ghost', { publish: false });
    const fetchedBefore = issuer.requests.length;
    for (let i = 0; i < 10; i++) {
      const res = await asBearer(await token({}, 'ghost'));
      expect(res.status).toBe(401);
      expect(res.json.message).toBe(`OIDC token key 'ghost' is not among the keys of issuer '${issuer.url}'`);
    }
    expect(issuer.requests.length).toBe(fetchedBefore);
    t.clock.advance(61_000);
    for (let i = 0; i < 10; i++) {
      expect((await asBearer(await token({}, 'ghost'))).status).toBe(401);
    }
    expect(issuer.requests.length).toBe(fetchedBefore + 2);
  });

  it('refuses an http issuer the operator did not list, at the trust and at the token', async () => {
    const put = await admin.put(`${ACCOUNTS}/ci-bot/oidc-trusts/lab`, { issuer: unlisted.url, ...TRUST });
    expect(put.status).toBe(400);
    expect(put.json.errors['body.issuer']).toMatch(/must be an https URL/);
    const res = await asBearer(await unlisted.sign(ghaClaims()));
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      message: `OIDC token issuer '${unlisted.url}' is not an https URL, nor listed in VERITY_OIDC_INSECURE_ISSUERS`,
    });
    expect(unlisted.requests).toEqual([]);
  });

  it('refuses to fetch keys from an issuer that resolves to an internal address', async () => {
    const internal = `https://localhost:${new URL(issuer.url).port}`;
    const put = await admin.put(`${ACCOUNTS}/ci-bot/oidc-trusts/internal`, { issuer: internal, ...TRUST });
    expect(put.status, put.body).toBe(201);
    const fetchedBefore = issuer.requests.length;
    const res = await asBearer(await issuer.sign(ghaClaims(), { iss: internal }));
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      message: `Keys of OIDC issuer '${internal}' could not be fetched: its discovery document address is not allowed for outbound calls (VERITY_OUTBOUND_ALLOW)`,
    });
    expect(res.body).not.toContain('127.0.0.1');
    expect(issuer.requests.length).toBe(fetchedBefore);
    expect((await admin.delete(`${ACCOUNTS}/ci-bot/oidc-trusts/internal`, null)).status).toBe(200);
  });
});

describe('several trusts', () => {
  it('refuses a token two trusts match, naming their count only, until one is removed', async () => {
    await admin.post(ACCOUNTS, { name: 'deploy-bot', privilege: 'admin' });
    const put = await admin.put(`${ACCOUNTS}/deploy-bot/oidc-trusts/all-payments`, {
      issuer: issuer.url,
      audience: 'verity',
      claims: { repository: 'acme/pay*' },
    });
    expect(put.status).toBe(201);
    const bearer = await token();
    const res = await asBearer(bearer);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      message: 'OIDC token matches 2 trusts of organization acme: it must match exactly one',
    });
    expect(res.body).not.toMatch(/deploy-bot|ci-bot|all-payments|payments-main/);

    expect((await admin.delete(`${ACCOUNTS}/deploy-bot/oidc-trusts/all-payments`, null)).status).toBe(200);
    expect((await asBearer(bearer)).status).toBe(200);
  });
});

describe('trusts', () => {
  const trusts = `${ACCOUNTS}/ci-bot/oidc-trusts`;

  it('are created (201), replaced (200), listed, read and removed (404 after)', async () => {
    const body = {
      issuer: issuer.url,
      audience: 'verity',
      claims: { sub: 'repo:acme/web:*', repository_owner: 'acme' },
    };
    const created = await admin.put(`${trusts}/web`, body);
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      name: 'web',
      service_account: 'ci-bot',
      issuer: issuer.url,
      audience: 'verity',
      claims: { repository_owner: 'acme', sub: 'repo:acme/web:*' },
      created_at: t.clock.seconds(),
      updated_at: t.clock.seconds(),
      created_by: expect.stringMatching(/^seed-admin-/),
    });
    t.clock.advance(1000);
    const replaced = await admin.put(`${trusts}/web`, { ...body, audience: 'verity-web' });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({ audience: 'verity-web', created_at: created.json.created_at });
    expect(replaced.json.updated_at).toBe(t.clock.seconds());

    expect((await admin.get(`${trusts}/web`)).json).toEqual(replaced.json);
    const listed = await admin.get(trusts);
    expect(listed.status).toBe(200);
    expect(listed.json.map((x: { name: string }) => x.name)).toEqual(['payments-main', 'web']);

    const removed = await admin.delete(`${trusts}/web`, null);
    expect([removed.status, removed.json]).toEqual([200, 'OK']);
    const gone = await admin.get(`${trusts}/web`);
    expect([gone.status, gone.json]).toEqual([404, { message: 'OIDC trust not found' }]);
    expect((await admin.delete(`${trusts}/web`, null)).status).toBe(404);
  });

  it('are 404 for a service account that does not exist', async () => {
    const put = await admin.put(`${ACCOUNTS}/nobody/oidc-trusts/x`, { issuer: issuer.url, ...TRUST });
    expect([put.status, put.json]).toEqual([404, { message: 'Service account not found' }]);
    expect((await admin.get(`${ACCOUNTS}/nobody/oidc-trusts`)).status).toBe(404);
  });

  it('refuse bad bodies with 400 naming the field', async () => {
    const ok = { issuer: issuer.url, ...TRUST };
    const cases: Array<[unknown, string]> = [
      [{ ...ok, extra: 1 }, 'body'],
      [{ issuer: issuer.url, audience: 'verity' }, 'body.claims'],
      [{ ...ok, claims: {} }, 'body.claims'],
      [{ ...ok, claims: { ref: '*' } }, 'body.claims'],
      [{ ...ok, claims: { aud: 'verity' } }, 'body.claims'],
      [{ ...ok, claims: { exp: '1' } }, 'body.claims'],
      [{ ...ok, claims: { ref: 'x'.repeat(257) } }, 'body.claims.ref'],
      [{ ...ok, claims: { ref: '' } }, 'body.claims.ref'],
      [{ ...ok, claims: { ref: 1 } }, 'body.claims.ref'],
      [
        { ...ok, claims: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`c${i}`, 'v'])) },
        'body.claims',
      ],
      [{ ...ok, audience: '' }, 'body.audience'],
      [{ ...ok, issuer: 'not a url' }, 'body.issuer'],
      [{ ...ok, issuer: 'https://token.actions.githubusercontent.com?x=1' }, 'body.issuer'],
      [{ ...ok, issuer: `https://${'a'.repeat(520)}.example` }, 'body.issuer'],
    ];
    for (const [body, field] of cases) {
      const res = await admin.put(`${trusts}/bad`, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(
        Object.keys(res.json.errors ?? { body: '' }).some((k) => k.startsWith(field)),
        res.body,
      ).toBe(true);
    }
    const badName = await admin.put(`${trusts}/bad%20name`, ok);
    expect(badName.status).toBe(400);
    expect((await admin.get(`${trusts}/bad`)).status).toBe(404);
  });

  it('are for admins only: members, snapshotters, readers and the account itself get 403', async () => {
    const ok = { issuer: issuer.url, ...TRUST };
    for (const role of ['member', 'snapshotter', 'reader'] as const) {
      const caller = client(t.app, await t.seedKey(ORG, role));
      expect((await caller.put(`${trusts}/mine`, ok)).status, role).toBe(403);
      expect((await caller.get(trusts)).status, role).toBe(403);
      expect((await caller.get(`${trusts}/payments-main`)).status, role).toBe(403);
      expect((await caller.delete(`${trusts}/payments-main`, null)).status, role).toBe(403);
    }
    // A member that created an account still may not make it trust an issuer.
    const member = client(t.app, await t.seedKey(ORG, 'member'));
    expect((await member.post(ACCOUNTS, { name: 'own-bot', privilege: 'reader' })).status).toBe(201);
    expect((await member.put(`${ACCOUNTS}/own-bot/oidc-trusts/x`, ok)).status).toBe(403);
    // The member account acting through its token neither.
    expect((await client(t.app, await token()).put(`${trusts}/mine`, ok)).status).toBe(403);
    expect((await admin.get(`${trusts}/mine`)).status).toBe(404);
  });

  it('are bounded per service account (409 beyond)', async () => {
    await admin.post(ACCOUNTS, { name: 'many-bot' });
    const base = `${ACCOUNTS}/many-bot/oidc-trusts`;
    for (let i = 0; i < 20; i++) {
      const res = await admin.put(`${base}/t${i}`, {
        issuer: issuer.url,
        audience: 'verity',
        claims: { run_id: `${i}` },
      });
      expect(res.status).toBe(201);
    }
    const over = await admin.put(`${base}/t20`, {
      issuer: issuer.url,
      audience: 'verity',
      claims: { run_id: '20' },
    });
    expect(over.status).toBe(409);
    expect(over.json.message).toMatch(/limit of 20 OIDC trusts/);
    // Replacing one is no new trust.
    expect(
      (await admin.put(`${base}/t0`, { issuer: issuer.url, audience: 'v2', claims: { run_id: '0' } })).status,
    ).toBe(200);
    expect((await admin.delete(`${ACCOUNTS}/many-bot`, null)).status).toBe(200);
  });

  it('go with their service account', async () => {
    await admin.post(ACCOUNTS, { name: 'gone-bot', privilege: 'member' });
    await admin.put(`${ACCOUNTS}/gone-bot/oidc-trusts/web`, {
      issuer: issuer.url,
      audience: 'verity',
      claims: { repository: 'acme/gone' },
    });
    const bearer = await token({ repository: 'acme/gone' });
    expect((await asBearer(bearer)).status).toBe(200);
    expect((await admin.delete(`${ACCOUNTS}/gone-bot`, null)).status).toBe(200);
    const res = await asBearer(bearer);
    expect(res.status).toBe(401);
    expect(res.json.message).toBe(
      "OIDC token claim 'repository' does not match any trust of organization acme",
    );
  });
});

describe('the failed-authentication limit', () => {
  let limited: TestApp;
  let own: TestIssuer;
  beforeAll(async () => {
    own = await startIssuer();
    limited = await createTestApp({
      env: { VERITY_OIDC_INSECURE_ISSUERS: own.url, VERITY_AUTH_FAILURES_PER_MINUTE: '3' },
    });
    const a = client(limited.app, await limited.seedKey(ORG, 'admin'));
    await a.post(ACCOUNTS, { name: 'ci-bot', privilege: 'member' });
    expect((await a.put(`${ACCOUNTS}/ci-bot/oidc-trusts/main`, { issuer: own.url, ...TRUST })).status).toBe(
      201,
    );
  });
  afterAll(async () => {
    await limited?.close();
    await own?.close();
  });

  it('counts refused tokens; over it only tokens verified by keys already held go on', async () => {
    const now = Math.floor(limited.clock.seconds());
    const claims = (overrides: Record<string, unknown> = {}) => ({
      sub: 'repo:acme/payments:ref:refs/heads/main',
      aud: 'verity',
      repository: 'acme/payments',
      ref: 'refs/heads/main',
      iat: now,
      exp: now + 300,
      ...overrides,
    });
    const from = async (bearer: string) =>
      limited.app.inject({
        url: `/api/v2/flows/${ORG}`,
        remoteAddress: '203.0.113.9',
        headers: { authorization: `Bearer ${bearer}` },
      });
    const good = await own.sign(claims());
    expect((await from(good)).statusCode).toBe(200);
    const bad = await own.sign(claims({ ref: 'refs/tags/x' }));
    expect([
      (await from(bad)).statusCode,
      (await from(bad)).statusCode,
      (await from(bad)).statusCode,
    ]).toEqual([401, 401, 401]);
    expect((await from(bad)).statusCode).toBe(429);
    expect((await from(good)).statusCode).toBe(200);
  });
});

describe('an issuer that fails', () => {
  let app: TestApp;
  let flaky: TestIssuer;
  beforeAll(async () => {
    flaky = await startIssuer();
    app = await createTestApp({
      env: { VERITY_OIDC_INSECURE_ISSUERS: flaky.url, VERITY_OUTBOUND_TIMEOUT_MS: '300' },
    });
    const a = client(app.app, await app.seedKey(ORG, 'admin'));
    await a.post(ACCOUNTS, { name: 'ci-bot', privilege: 'member' });
    expect((await a.put(`${ACCOUNTS}/ci-bot/oidc-trusts/main`, { issuer: flaky.url, ...TRUST })).status).toBe(
      201,
    );
  });
  afterAll(async () => {
    await app?.close();
    await flaky?.close();
  });

  const attempt = async () =>
    client(app.app, await flaky.sign(ghaClaims({}, app.clock))).get(`/api/v2/flows/${ORG}`);
  const unavailable = (why: string) => ({
    message: `Keys of OIDC issuer '${flaky.url}' could not be fetched: ${why}`,
  });

  it.each<[IssuerFault, string]>([
    ['down', 'its discovery document answered HTTP 503'],
    ['not-json', 'its discovery document is not JSON'],
    ['other-issuer', 'its discovery document names another issuer'],
    ['ftp-jwks', 'its discovery document has no https jwks_uri'],
    ['jwks-elsewhere', 'its key set address is not allowed for outbound calls (VERITY_OUTBOUND_ALLOW)'],
    ['no-keys', 'its key set has no keys'],
    ['huge', 'its discovery document could not be read'],
    ['hang', 'its discovery document could not be read'],
  ])('refuses tokens when it is %s, and asks it again only after a minute', async (fault, why) => {
    flaky.fault = fault;
    app.clock.advance(61_000);
    const res = await attempt();
    expect([res.status, res.json]).toEqual([401, unavailable(why)]);
    const asked = flaky.requests.length;
    expect((await attempt()).json).toEqual(unavailable(why));
    expect(flaky.requests.length).toBe(asked);
  });

  it('serves the keys it holds while the issuer is away, for a day at most', async () => {
    flaky.fault = undefined;
    app.clock.advance(61_000);
    expect((await attempt()).status).toBe(200);
    flaky.fault = 'down';
    // Past the ten minutes keys are kept: fetched again, the issuer fails, the held keys serve.
    app.clock.advance(11 * 60_000);
    const asked = flaky.requests.length;
    expect((await attempt()).status).toBe(200);
    expect(flaky.requests.slice(asked)).toEqual(['/.well-known/openid-configuration']);
    app.clock.advance(25 * 3600_000);
    const res = await attempt();
    expect([res.status, res.json]).toEqual([401, unavailable('its discovery document answered HTTP 503')]);
  });

  it('refuses tokens, never a 500, when it publishes a key that cannot be imported', async () => {
    flaky.fault = 'bad-key';
    app.clock.advance(61_000);
    const res = await attempt();
    expect([res.status, res.json]).toEqual([
      401,
      { message: "OIDC token could not be verified with its issuer's keys" },
    ]);
  });
});

describe('with the database away', () => {
  let handle: DatabaseHandle;
  let away: FastifyInstance;
  let own: TestIssuer;
  beforeAll(async () => {
    own = await startIssuer();
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    handle = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/verity`,
      connectTimeoutMs: 1_000,
    });
    away = await buildApp({
      config: testConfig({ VERITY_OIDC_INSECURE_ISSUERS: own.url }),
      database: handle,
      logger: false,
    });
    await away.ready();
  });
  afterAll(async () => {
    await away?.close();
    await handle?.close();
    await own?.close();
  });

  it('answers a token 503 with Retry-After, not 401, and fetches no keys', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bearer = await own.sign({ aud: 'verity', repository: 'acme/payments', iat: now, exp: now + 300 });
    const res = await client(away, bearer).get(`/api/v2/flows/${ORG}`);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ message: expect.stringMatching(/database/i) });
    expect(res.headers['retry-after']).toBe('5');
    expect(own.requests).toEqual([]);
  });
});
