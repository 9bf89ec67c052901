/**
 * The auth matrix, table-driven over every route the app registers: it grows by itself as
 * resources add routes. For each authenticated route: no key, an unknown key, an expired key and
 * a revoked key are 401; a Reader writing is 403; a key of org A on org B never gets data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';
import { roleAllows } from '../../services/api/src/domain/roles.js';
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
    for (const route of t.app.apiRoutes) expect(route.auth, `${route.method} ${route.url}`).toBeDefined();
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
