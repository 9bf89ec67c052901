/** API keys: shown once, stored hashed, rotated with a grace period, revoked at once. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, client, type TestApp } from '../helpers/app.js';
import { apiKeysRepository } from '../../services/api/src/storage/repositories/api-keys.js';

let t: TestApp;
let admin: ReturnType<typeof client>;
const base = '/api/v2/service-accounts/acme';

beforeAll(async () => {
  t = await createTestApp();
  admin = client(t.app, await t.seedKey('acme', 'admin'));
  expect((await admin.post(base, { name: 'ci-bot', description: 'CI', privilege: 'member' })).status).toBe(
    201,
  );
});
afterAll(async () => t?.close());

async function newKey(description = 'ci', expires_at?: number) {
  const res = await admin.post(`${base}/ci-bot/api-keys`, {
    description,
    ...(expires_at ? { expires_at } : {}),
  });
  expect(res.status).toBe(201);
  return res.json as { id: string; key: string; description: string; created_at: number; expires_at: number };
}

const canRead = async (key: string) => (await client(t.app, key).get('/api/v2/organizations/acme')).status;

describe('API keys', () => {
  it('shows the key once, in the create response only', async () => {
    const created = await newKey();
    expect(Object.keys(created).sort()).toEqual(['created_at', 'description', 'expires_at', 'id', 'key']);
    expect(created.expires_at).toBe(0);
    expect(created.created_at).toBeCloseTo(t.clock.seconds(), 3);
    expect(await canRead(created.key)).toBe(200);

    const listed = await admin.get(`${base}/ci-bot/api-keys`);
    expect(listed.status).toBe(200);
    expect(listed.body).not.toContain(created.key);
    expect(listed.json.find((k: { id: string }) => k.id === created.id)).toEqual({
      id: created.id,
      description: 'ci',
      created_at: created.created_at,
      expires_at: 0,
      last_used_at: t.clock.seconds(),
    });
    const one = await admin.get(`${base}/ci-bot/api-keys/${created.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toContain(created.key);
  });

  it("records a key's use once for many requests at the same moment", async () => {
    const created = await newKey('parallel-ci');
    const lastUsed = async () =>
      ((await admin.get(`${base}/ci-bot/api-keys`)).json as Array<{ id: string; last_used_at: number }>).find(
        (k) => k.id === created.id,
      )!.last_used_at;
    expect(await canRead(created.key)).toBe(200);
    const first = await lastUsed();
    expect(first).toBe(t.clock.seconds());

    // A minute later, 32 CI jobs use the key at once: one write, and every request sees it.
    t.clock.advance(61_000);
    const touch = vi.spyOn(apiKeysRepository, 'touchLastUsed');
    try {
      const statuses = await Promise.all(Array.from({ length: 32 }, () => canRead(created.key)));
      expect(statuses).toEqual(Array.from({ length: 32 }, () => 200));
      expect(touch.mock.calls.filter(([, keyId]) => keyId === created.id)).toHaveLength(1);
    } finally {
      touch.mockRestore();
    }
    expect(await lastUsed()).toBe(first + 61);
  });

  it('keeps a later use another replica recorded', async () => {
    const created = await newKey('two-replicas');
    expect(await canRead(created.key)).toBe(200); // this replica caches the key and its use
    const later = new Date(t.clock.now().getTime() + 3_600_000);
    await sql`update api_keys set last_used_at = ${later} where id = ${created.id}`.execute(t.db.db);
    // This replica's cached view of the key is stale (a minute old): it writes, but not backwards.
    t.clock.advance(61_000);
    expect(await canRead(created.key)).toBe(200);
    const listed = (await admin.get(`${base}/ci-bot/api-keys`)).json as Array<{
      id: string;
      last_used_at: number;
    }>;
    expect(listed.find((k) => k.id === created.id)!.last_used_at).toBe(later.getTime() / 1000);
  });

  it('stores a hash, never the key', async () => {
    const created = await newKey('hash-check');
    const rows = await sql<{
      key_hash: string;
    }>`select key_hash from api_keys where id = ${created.id}`.execute(t.db.db);
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.key_hash).toMatch(/^[a-f0-9]{64}$/);
    const dump = await sql<{ t: string }>`select row_to_json(api_keys)::text as t from api_keys`.execute(
      t.db.db,
    );
    for (const row of dump.rows) {
      expect(row.t).not.toContain(created.key);
    }
  });

  it('refuses an expiry in the past', async () => {
    const res = await admin.post(`${base}/ci-bot/api-keys`, {
      description: 'old',
      expires_at: Math.floor(t.clock.seconds()) - 10,
    });
    expect(res.status).toBe(400);
    expect(res.json.errors['body.expires_at']).toMatch(/future/);
  });

  it('stops accepting a key when it expires', async () => {
    const created = await newKey('short', Math.floor(t.clock.seconds()) + 3600);
    expect(await canRead(created.key)).toBe(200);
    t.clock.advance(3600_000);
    const res = await client(t.app, created.key).get('/api/v2/organizations/acme');
    expect(res.status).toBe(401);
    expect(res.json.message).toBe('API key has expired');
    // expired keys are no longer listed as active
    const listed = (await admin.get(`${base}/ci-bot/api-keys`)).json as { id: string }[];
    expect(listed.map((k) => k.id)).not.toContain(created.id);
  });

  it('rotates: the old key works for the grace period only, the new one at once', async () => {
    const old = await newKey('rotating');
    const res = await admin.post(`${base}/ci-bot/api-keys/${old.id}/rotate`, { grace_period_hours: 2 });
    expect(res.status).toBe(201);
    const rotated = res.json;
    expect(rotated.id).not.toBe(old.id);
    expect(rotated.key).not.toBe(old.key);
    expect(rotated.description).toBe('rotating');
    expect(rotated.grace_period_expires_at).toBeCloseTo(t.clock.seconds() + 7200, 3);
    expect(await canRead(rotated.key)).toBe(200);
    expect(await canRead(old.key)).toBe(200);
    t.clock.advance(2 * 3600_000 - 1000);
    expect(await canRead(old.key)).toBe(200);
    t.clock.advance(2000);
    expect(await canRead(old.key)).toBe(401);
    expect(await canRead(rotated.key)).toBe(200);
  });

  it('rotates with the default grace period of 24 hours when the CLI sends {}', async () => {
    const old = await newKey('default-grace');
    const res = await admin.post(`${base}/ci-bot/api-keys/${old.id}/rotate`, {});
    expect(res.status).toBe(201);
    expect(res.json.grace_period_expires_at).toBeCloseTo(t.clock.seconds() + 24 * 3600, 3);
  });

  it('revokes at once; a second revoke is 404', async () => {
    const created = await newKey('to-revoke');
    expect(await canRead(created.key)).toBe(200);
    const first = await admin.delete(`${base}/ci-bot/api-keys/${created.id}`, null);
    expect(first.status).toBe(200);
    expect(first.json).toBe('revoked');
    const denied = await client(t.app, created.key).get('/api/v2/organizations/acme');
    expect(denied.status).toBe(401);
    expect(denied.json.message).toBe('API key has been revoked');
    const second = await admin.delete(`${base}/ci-bot/api-keys/${created.id}`, null);
    expect(second.status).toBe(404);
    expect(second.json).toEqual({ message: 'API key not found' });
    expect((await admin.get(`${base}/ci-bot/api-keys/${created.id}`)).status).toBe(404);
  });

  it('cannot rotate a revoked key', async () => {
    const created = await newKey('gone');
    await admin.delete(`${base}/ci-bot/api-keys/${created.id}`, null);
    expect((await admin.post(`${base}/ci-bot/api-keys/${created.id}/rotate`, {})).status).toBe(404);
  });

  it('accepts the key as Basic username or password only on routes that allow Basic', async () => {
    const created = await newKey('basic');
    const basic = Buffer.from(`${created.key}:`).toString('base64');
    const res = await t.app.inject({
      url: '/api/v2/organizations/acme',
      headers: { authorization: `Basic ${basic}` },
    });
    // endpoint 1 (artifacts by fingerprint) is the only Basic route; elsewhere Basic is refused
    expect(res.statusCode).toBe(401);
  });

  it('drops every key of a deleted service account', async () => {
    expect((await admin.post(base, { name: 'short-lived', privilege: 'reader' })).status).toBe(201);
    const res = await admin.post(`${base}/short-lived/api-keys`, { description: 'x' });
    const key = res.json.key as string;
    expect(await canRead(key)).toBe(200);
    expect((await admin.delete(`${base}/short-lived`, null)).status).toBe(200);
    expect(await canRead(key)).toBe(401);
  });
});
