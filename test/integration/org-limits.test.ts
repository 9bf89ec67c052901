/**
 * Limits an organization cannot multiply by minting keys: one request bucket for all its keys,
 * beside each key's own, and caps on its service accounts and on its keys that still work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';

describe('the per-organization request bucket', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { VERITY_RATE_LIMIT_PER_MINUTE: '5', VERITY_RATE_LIMIT_PER_ORG_PER_MINUTE: '12' },
    });
  });
  afterAll(async () => t?.close());

  it('holds all the keys a snapshotter mints to the organization budget', async () => {
    const snap = client(t.app, await t.seedKey('acme', 'snapshotter'));
    const base = '/api/v2/service-accounts/acme';
    const statuses: number[] = [];
    const minted = await snap.post(base, { name: 'minted', privilege: 'snapshotter' });
    statuses.push(minted.status);
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await snap.post(`${base}/minted/api-keys`, { description: `k${i}` });
      statuses.push(res.status);
      keys.push(res.json.key);
    }
    expect(statuses).toEqual([201, 201, 201, 201]);
    // Three fresh keys, five requests each on their own buckets: only the organization's 8 left pass.
    for (const key of keys) {
      for (let i = 0; i < 5; i++) {
        statuses.push((await client(t.app, key).get('/api/v2/organizations/acme')).status);
      }
    }
    expect(statuses.filter((s) => s < 300)).toHaveLength(12);
    const refused = await client(t.app, keys[2]).get('/api/v2/organizations/acme');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another organization has a budget of its own.
    const other = client(t.app, await t.seedKey('globex', 'reader'));
    expect((await other.get('/api/v2/organizations/globex')).status).toBe(200);
  });

  it('does not spend the organization budget on a key already over its own limit', async () => {
    const greedy = client(t.app, await t.seedKey('initech', 'reader'));
    for (let i = 0; i < 30; i++) {
      await greedy.get('/api/v2/organizations/initech');
    }
    const sibling = client(t.app, await t.seedKey('initech', 'reader'));
    expect((await sibling.get('/api/v2/organizations/initech')).status).toBe(200);
  });
});

describe('caps on service accounts and active keys', () => {
  let t: TestApp;
  let admin: ReturnType<typeof client>;
  const base = '/api/v2/service-accounts/acme';
  beforeAll(async () => {
    t = await createTestApp({
      env: { VERITY_MAX_SERVICE_ACCOUNTS_PER_ORG: '3', VERITY_MAX_ACTIVE_KEYS_PER_ORG: '4' },
    });
    // The seeded admin is the organization's first account, with its first active key.
    admin = client(t.app, await t.seedKey('acme', 'admin'));
  });
  afterAll(async () => t?.close());

  it('refuses a service account past the limit with 409 naming it', async () => {
    expect((await admin.post(base, { name: 'bot-1' })).status).toBe(201);
    expect((await admin.post(base, { name: 'bot-2' })).status).toBe(201);
    const refused = await admin.post(base, { name: 'bot-3' });
    expect(refused.status).toBe(409);
    expect(refused.json.message).toBe(
      "Organization 'acme' has reached its limit of 3 service accounts: delete one before creating another",
    );
    // Deleting one makes room again; other organizations count their own.
    expect((await admin.delete(`${base}/bot-2`)).status).toBeLessThan(300);
    expect((await admin.post(base, { name: 'bot-3' })).status).toBe(201);
    const globex = client(t.app, await t.seedKey('globex', 'admin'));
    expect((await globex.post('/api/v2/service-accounts/globex', { name: 'bot-1' })).status).toBe(201);
  });

  it('refuses a key, or a rotation with a grace period, past the active-key limit', async () => {
    const keys: Array<{ status: number; json: any }> = [];
    for (let i = 0; i < 4; i++) {
      keys.push(await admin.post(`${base}/bot-1/api-keys`, { description: `k${i}` }));
    }
    expect(keys.map((k) => k.status)).toEqual([201, 201, 201, 409]);
    expect(keys[3]!.json.message).toBe(
      'The organization has reached its limit of 4 active API keys: revoke one before creating another',
    );
    const rotateUrl = `${base}/bot-1/api-keys/${keys[0]!.json.id}/rotate`;
    expect((await admin.post(rotateUrl, { grace_period_hours: 24 })).status).toBe(409);
    // Without a grace period the old key goes at once: the count stays, so it is allowed.
    expect((await admin.post(rotateUrl, { grace_period_hours: 0 })).status).toBe(201);
    // Revoking one makes room again.
    expect((await admin.delete(`${base}/bot-1/api-keys/${keys[1]!.json.id}`)).status).toBeLessThan(300);
    expect((await admin.post(`${base}/bot-1/api-keys`, { description: 'again' })).status).toBe(201);
  });
});
