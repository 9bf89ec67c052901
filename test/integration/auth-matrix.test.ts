/**
 * The auth matrix, table-driven over every route the app registers: it grows by itself as
 * resources add routes. For each authenticated route: no key, an unknown key, an expired key and
 * a revoked key are 401; a Reader writing is 403; a key of org A on org B never gets data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';
import { canGrant, roleAllows } from '../../services/api/src/domain/roles.js';
import { POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import type { ApiRoute } from '../../services/api/src/plugins/openapi.js';

/** Plausible values for path parameters, so each request reaches the auth check of its route. */
const SAMPLE_PARAMS: Record<string, string> = {
  fingerprint: 'a'.repeat(64),
  commit_sha: 'b'.repeat(40),
  sha: 'b'.repeat(40),
  action_number: '1',
  number: '1',
  notification_number: '1',
  version_number: '1',
  version: '1',
};

function samplePath(url: string, org: string): string {
  return url
    .replace(/:org\b/, org)
    .replace(
      /:([a-zA-Z_]+)/g,
      (_m, name: string) => SAMPLE_PARAMS[name] ?? `sample-${name.replace(/_/g, '-')}`,
    )
    .replace(/\*$/, 'sample/wild');
}

let t: TestApp;
let keys: Record<'adminA' | 'readerA' | 'adminB' | 'expiredA' | 'revokedA', string>;
let routes: ApiRoute[];

beforeAll(async () => {
  t = await createTestApp();
  const adminA = await t.seedKey('org-a', 'admin');
  const readerA = await t.seedKey('org-a', 'reader');
  const adminB = await t.seedKey('org-b', 'admin');
  const expiredA = await t.seedKey('org-a', 'admin', {
    expiresAt: new Date(t.clock.now().getTime() + 60_000),
  });
  const revokedA = await t.seedKey('org-a', 'admin');
  // Revoke through the API, as a user would.
  const api = client(t.app, adminA);
  // seedKey names accounts seed-<role>-<n>: the fifth one holds revokedA.
  const last = 'seed-admin-5';
  const listed = (await api.get(`/api/v2/service-accounts/org-a/${last}/api-keys`)).json as { id: string }[];
  expect(
    (await api.delete(`/api/v2/service-accounts/org-a/${last}/api-keys/${listed[0]!.id}`, null)).status,
  ).toBe(200);
  t.clock.advance(120_000);
  keys = { adminA, readerA, adminB, expiredA, revokedA };
  routes = t.app.apiRoutes.filter((r) => r.auth !== 'public');
});

afterAll(async () => t?.close());

describe('auth matrix', () => {
  it('covers every authenticated route the app registers', () => {
    expect(routes.length).toBeGreaterThanOrEqual(14);
    for (const route of t.app.apiRoutes) {
      expect(route.auth, `${route.method} ${route.url}`).toBeDefined();
    }
  });

  const requestAs = (route: ApiRoute, org: string, key: string | undefined) =>
    client(t.app, key).send(
      route.method,
      samplePath(route.url, org),
      route.method === 'GET' ? undefined : null,
    );

  it('answers 401 without a key', async () => {
    for (const route of routes) {
      const res = await requestAs(route, 'org-a', undefined);
      expect(res.status, `${route.method} ${route.url}`).toBe(401);
      expect(res.json.message).toMatch(/API key/);
    }
  });

  it('answers 401 to an unknown key', async () => {
    for (const route of routes) {
      const res = await requestAs(route, 'org-a', 'vty_not-a-real-key-at-all-0000000000000');
      expect(res.status, `${route.method} ${route.url}`).toBe(401);
    }
  });

  it('answers 401 to an expired key', async () => {
    for (const route of routes) {
      const res = await requestAs(route, 'org-a', keys.expiredA);
      expect(res.status, `${route.method} ${route.url}`).toBe(401);
      expect(res.json.message).toBe('API key has expired');
    }
  });

  it('answers 401 to a revoked key', async () => {
    for (const route of routes) {
      const res = await requestAs(route, 'org-a', keys.revokedA);
      expect(res.status, `${route.method} ${route.url}`).toBe(401);
      expect(res.json.message).toBe('API key has been revoked');
    }
  });

  it('answers 403 when a Reader writes', async () => {
    const writes = routes.filter(
      (r) => r.auth !== 'public' && r.auth !== undefined && !roleAllows('reader', r.auth.permission),
    );
    expect(writes.length).toBeGreaterThan(0);
    for (const route of writes) {
      const res = await requestAs(route, 'org-a', keys.readerA);
      expect(res.status, `${route.method} ${route.url}`).toBe(403);
    }
  });

  it('never gives a key of org A data of org B', async () => {
    for (const route of routes.filter((r) => r.url.includes(':org'))) {
      const res = await requestAs(route, 'org-b', keys.adminA);
      expect([403, 404], `${route.method} ${route.url} answered ${res.status}`).toContain(res.status);
      expect(res.body).not.toContain('seed-admin');
    }
  });

  it('lets the right key through to the handler', async () => {
    const res = await client(t.app, keys.adminB).get('/api/v2/organizations/org-b');
    expect(res.status).toBe(200);
    expect(res.json.name).toBe('org-b');
  });
});

/** Who may change what an upsert or a service account's keys reach, role by role. */
describe('role matrix: write paths that check more than the route permission', () => {
  const ROLES_UNDER_TEST = ['reader', 'snapshotter', 'member', 'admin'] as const;
  type R = (typeof ROLES_UNDER_TEST)[number];
  let m: TestApp;
  let as: Record<R, ReturnType<typeof client>>;
  const envs = '/api/v2/environments/matrix';
  const accounts = '/api/v2/service-accounts/matrix';

  beforeAll(async () => {
    m = await createTestApp();
    as = {} as typeof as;
    for (const role of ROLES_UNDER_TEST) {
      as[role] = client(m.app, await m.seedKey('matrix', role));
    }
    const policy = await putPolicy(
      m.app,
      await m.seedKey('matrix', 'member'),
      'matrix',
      'gate',
      POLICY_SCHEMA,
    );
    expect(policy.status).toBe(201);
  });
  afterAll(async () => m?.close());

  /** Each case: an existing environment, and a PUT body that changes one thing on it. */
  const existing = { name: 'prod', type: 'K8S', description: 'production', require_provenance: true };
  const changes: Array<[string, Record<string, unknown>]> = [
    ['policies: [] (detaches every policy)', { ...existing, policies: [] }],
    ['description (the default empty one)', { name: 'prod', type: 'K8S', require_provenance: true }],
    ['description', { ...existing, description: 'changed' }],
    ['require_provenance', { ...existing, require_provenance: false }],
    ['type', { ...existing, type: 'server' }],
  ];

  const resetProd = async () => {
    expect((await as.admin.put(envs, existing)).status).toBeLessThan(300);
    expect((await as.admin.post(`${envs}/prod/policies`, { policy_names: ['gate'] })).status).toBe(200);
  };
  const prod = async () => {
    const env = (await as.admin.get(`${envs}/prod`)).json;
    return {
      description: env.description,
      require_provenance: env.require_provenance,
      policies: env.policies,
      type: env.type,
      archived: env.archived,
    };
  };

  it('lets every role that may create environments create a missing one', async () => {
    const expected: Record<R, number> = { reader: 403, snapshotter: 201, member: 201, admin: 201 };
    for (const role of ROLES_UNDER_TEST) {
      const res = await as[role].put(envs, { name: `new-by-${role}`, type: 'K8S', description: '' });
      expect(res.status, role).toBe(expected[role]);
    }
  });

  it.each(changes)(
    'refuses a PUT that changes %s unless the caller may write environments',
    async (_what, body) => {
      const expected: Record<R, number> = { reader: 403, snapshotter: 403, member: 200, admin: 200 };
      for (const role of ROLES_UNDER_TEST) {
        await resetProd();
        const before = await prod();
        const res = await as[role].put(envs, body);
        if (res.status === 400) {
          expect(body.type, role).not.toBe(existing.type);
        } else {
          expect(res.status, `${role}: ${res.body}`).toBe(expected[role]);
        }
        if (expected[role] === 403) {
          expect(res.status, role).toBe(403);
          if (role === 'snapshotter') {
            expect(res.json.message).toMatch(/needs the environment:write permission/);
          }
          expect(await prod(), role).toEqual(before);
        }
      }
    },
  );

  it("refuses a snapshotter un-archiving an environment, and changing a logical one's members", async () => {
    await resetProd();
    expect((await as.admin.put(`${envs}/prod/archive`, null)).status).toBe(200);
    const archived = await as.snapshotter.put(envs, existing);
    expect(archived.status).toBe(403);
    expect(archived.json.message).toContain('archived');

    await as.admin.put(envs, { name: 'staging', type: 'K8S', description: '' });
    const logical = { name: 'all', type: 'logical', description: '', included_environments: ['staging'] };
    expect((await as.admin.put(envs, logical)).status).toBeLessThan(300);
    const members = await as.snapshotter.put(envs, { ...logical, included_environments: [] });
    expect(members.status).toBe(403);
    expect(members.json.message).toContain('included_environments');
    expect((await as.admin.get(`${envs}/all`)).json.included_environments).toEqual(['staging']);
    expect((await as.member.put(envs, { ...logical, included_environments: [] })).status).toBe(200);
  });

  it('answers a snapshotter PUT that changes nothing as before, as the CLI sends it', async () => {
    await resetProd();
    const before = await prod();
    // `kosli create env prod --type K8S --description production --require-provenance`
    expect((await as.snapshotter.put(envs, existing)).status).toBe(200);
    expect((await as.snapshotter.put(envs, { ...existing, include_scaling: false })).status).toBe(200);
    expect((await as.snapshotter.put(envs, { ...existing, policies: ['gate'] })).status).toBe(403);
    expect(await prod()).toEqual(before);
  });

  /**
   * A creator's current role against the account's current privilege, for every key and account
   * write: allowed when the role reaches the privilege (canGrant), else 403.
   */
  it("lets a creator manage an account and its keys only while its role reaches the account's privilege", async () => {
    let n = 0;
    for (const creator of ['snapshotter', 'member'] as const) {
      for (const privilege of ROLES_UNDER_TEST) {
        n += 1;
        const name = `bot-${n}`;
        expect((await as[creator].post(accounts, { name, privilege: creator })).status).toBe(201);
        const raised = await as.admin.patch(`${accounts}/${name}`, { privilege });
        expect(raised.status).toBe(200);
        const rotateMe = (await as.admin.post(`${accounts}/${name}/api-keys`, { description: 'r' })).json.id;
        const revokeMe = (await as.admin.post(`${accounts}/${name}/api-keys`, { description: 'v' })).json.id;
        const allowed = canGrant(creator, privilege);
        const label = `${creator} on a ${privilege} account`;
        const statuses = [
          (await as[creator].post(`${accounts}/${name}/api-keys`, { description: 'mine' })).status,
          (await as[creator].post(`${accounts}/${name}/api-keys/${rotateMe}/rotate`, {})).status,
          (await as[creator].delete(`${accounts}/${name}/api-keys/${revokeMe}`, null)).status,
          (await as[creator].patch(`${accounts}/${name}`, { description: 'mine now' })).status,
          (await as[creator].delete(`${accounts}/${name}`, null)).status,
        ];
        expect(statuses, label).toEqual(allowed ? [201, 201, 200, 200, 200] : [403, 403, 403, 403, 403]);
        if (!allowed) {
          expect((await as.admin.get(`${accounts}/${name}`)).json.description, label).toBe('');
        }
      }
    }
  });

  it('holds a demoted creator to its new role', async () => {
    const creatorKey = await m.seedKey('matrix', 'member');
    const creator = client(m.app, creatorKey);
    expect((await creator.post(accounts, { name: 'ci-bot', privilege: 'member' })).status).toBe(201);
    const seeded = (await as.admin.get(accounts)).json
      .map((a: { name: string }) => a.name)
      .filter((a: string) => a.startsWith('seed-member-'))
      .sort((a: string, b: string) => Number(a.split('-')[2]) - Number(b.split('-')[2]))
      .pop();
    expect((await as.admin.patch(`${accounts}/${seeded}`, { privilege: 'snapshotter' })).status).toBe(200);
    expect((await creator.post(`${accounts}/ci-bot/api-keys`, { description: 'x' })).status).toBe(403);
  });
});
