/**
 * Audit entries of concurrent writes share statements (storage/batching/row-batcher.ts): every
 * write still has its own entry before it answers, and an entry the database refuses fails alone:
 * the write it records answers as stored, the failure is counted and logged, and the entries of
 * the writes beside it are stored.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';

const ORG = 'acme';
let t: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp();
  api = client(t.app, await t.seedKey(ORG, 'admin'));
});
afterAll(async () => t?.close());

const entries = async (action: string) =>
  (
    await t.db.db
      .selectFrom('audit_log')
      .select(['resource', 'request_id'])
      .where('action', '=', action)
      .execute()
  ).length;

const failures = async () => {
  const text = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
  return Number(/^verity_audit_write_failures_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
};

describe('audit entries of concurrent writes', () => {
  it('each write has its entry before it answers', async () => {
    // As each answer arrives, the entries stored number at least the answers so far: an entry
    // written after its answer would show as a shortfall here.
    let answered = 0;
    const shortfalls: number[] = [];
    const writes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        api
          .put(`/api/v2/environments/${ORG}`, { name: `env-${i}`, type: 'K8S', description: '' })
          .then(async (w) => {
            answered += 1;
            const seen = answered;
            const stored = await entries('putEnvironment');
            if (stored < seen) {
              shortfalls.push(seen - stored);
            }
            return w;
          }),
      ),
    );
    expect(writes.map((w) => w.status)).toEqual(Array(40).fill(201));
    expect(shortfalls).toEqual([]);
    expect(await entries('putEnvironment')).toBe(40);
  });

  it('an entry the database refuses fails alone: its write answers, the others keep theirs', async () => {
    const before = await failures();
    const envEntries = await entries('putEnvironment');
    // The database refuses the entries of one kind of write only.
    await sql`alter table audit_log add constraint refuse_one check (action <> 'createServiceAccount')`.execute(
      t.db.db,
    );
    try {
      const [refused, ...others] = await Promise.all([
        api.post(`/api/v2/service-accounts/${ORG}`, { name: 'deployer', privilege: 'member' }),
        ...Array.from({ length: 10 }, (_, i) =>
          api.put(`/api/v2/environments/${ORG}`, { name: `side-${i}`, type: 'K8S', description: '' }),
        ),
      ]);
      expect(refused.status, refused.body).toBe(201);
      expect(others.map((w) => w.status)).toEqual(Array(10).fill(201));
      expect(await failures()).toBe(before + 1);
      expect(await entries('createServiceAccount')).toBe(0);
      expect(await entries('putEnvironment')).toBe(envEntries + 10);
    } finally {
      await sql`alter table audit_log drop constraint refuse_one`.execute(t.db.db);
    }
  });
});
