/**
 * The in-process caches (API keys, artifact views, flow action settings) never serve what a committed write changed,
 * on the replica that wrote and on every other replica sharing the database: a second app on the
 * same database stands for a second replica.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { TEST_DATABASE_URL, onPostgres } from '../helpers/database.js';
import { outboxRepository } from '../../services/api/src/storage/repositories/actions.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';

let t: TestApp;
let replica: FastifyInstance;
let replicaDb: DatabaseHandle | undefined;
let adminKey: string;
const sa = '/api/v2/service-accounts/acme';
const FP = 'c4'.repeat(32);

beforeAll(async () => {
  t = await createTestApp();
  if (onPostgres) {
    // Its own pool and listener on the same schema, as another process would have.
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.db.db)).rows[0]!.s;
    replicaDb = await openDatabase({ databaseUrl: TEST_DATABASE_URL, searchPath: schema, poolMax: 2 });
  }
  replica = await buildApp({ config: testConfig(), database: replicaDb ?? t.db, logger: false });
  await replica.ready();
  adminKey = await t.seedKey('acme', 'admin');
  const admin = cliClient(t.app, adminKey);
  expect((await admin.json('POST', sa, { name: 'bot', description: '', privilege: 'member' })).status).toBe(
    201,
  );
  await admin.multipart('PUT', '/api/v2/flows/acme/template_file', [
    { name: 'data_json', value: JSON.stringify({ name: 'web', description: '' }) },
  ]);
  const reported = await admin.json('POST', '/api/v2/artifacts/acme/web', {
    fingerprint: FP,
    filename: 'web:1',
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: 'release-1',
  });
  expect(reported.status).toBe(201);
});
afterAll(async () => {
  await replica?.close();
  await replicaDb?.close();
  await t?.close();
});

async function newKey(): Promise<{ id: string; key: string }> {
  const res = await cliClient(t.app, adminKey).json('POST', `${sa}/bot/api-keys`, { description: 'ci' });
  expect(res.status).toBe(201);
  return res.json;
}
const status = async (app: FastifyInstance, key: string) =>
  (await cliClient(app, key).get('/api/v2/organizations/acme')).status;

describe('API key cache', () => {
  it('refuses a revoked key at once on the replica that revoked it', async () => {
    const { id, key } = await newKey();
    expect(await status(t.app, key)).toBe(200);
    expect(await status(t.app, key)).toBe(200);
    const revoked = await cliClient(t.app, adminKey).json('DELETE', `${sa}/bot/api-keys/${id}`);
    expect(revoked.status).toBe(200);
    expect(await status(t.app, key)).toBe(401);
  });

  it('refuses a key revoked through another replica once the change is heard', async () => {
    const { id, key } = await newKey();
    expect(await status(replica, key)).toBe(200);
    expect(await status(replica, key)).toBe(200);
    expect((await cliClient(t.app, adminKey).json('DELETE', `${sa}/bot/api-keys/${id}`)).status).toBe(200);
    await expect.poll(() => status(replica, key), { timeout: 5000, interval: 20 }).toBe(401);
  });

  it('follows a change of privilege made directly in the database', async () => {
    const { key } = await newKey();
    const bot = cliClient(replica, key);
    const write = () =>
      bot.json('PUT', '/api/v2/flows/acme', { name: 'bot-flow', description: '', visibility: 'private' });
    expect((await write()).status).toBeLessThan(300);
    await sql`update service_accounts set privilege = 'reader' where name = 'bot'`.execute(t.db.db);
    await expect.poll(async () => (await write()).status, { timeout: 5000, interval: 20 }).toBe(403);
    await sql`update service_accounts set privilege = 'member' where name = 'bot'`.execute(t.db.db);
  });

  it('refuses a key whose account was deleted, on both replicas', async () => {
    const admin = cliClient(t.app, adminKey);
    expect(
      (await admin.json('POST', sa, { name: 'temp', description: '', privilege: 'member' })).status,
    ).toBe(201);
    const { key } = (await admin.json('POST', `${sa}/temp/api-keys`, { description: 'x' })).json;
    expect(await status(t.app, key)).toBe(200);
    expect(await status(replica, key)).toBe(200);
    expect((await admin.json('DELETE', `${sa}/temp`)).status).toBe(200);
    expect(await status(t.app, key)).toBe(401);
    await expect.poll(() => status(replica, key), { timeout: 5000, interval: 20 }).toBe(401);
  });
});

describe('artifact view cache', () => {
  const view = async (app: FastifyInstance) => {
    const res = await cliClient(app, adminKey).get(`/api/v2/artifacts/acme/web/fingerprint/${FP}`);
    expect(res.status).toBe(200);
    return res.json as { evidence: Record<string, unknown>; state: string };
  };

  it('shows new evidence on every replica after an attestation', async () => {
    // Reads carry log_index: sequence the log so that it does not move between the two readings.
    await t.app.transparencyLog.sequence();
    const before = await view(replica);
    expect(await view(replica)).toEqual(before);
    expect(before.evidence).not.toHaveProperty('unit-tests');
    const attested = await cliClient(t.app, adminKey).multipart(
      'POST',
      '/api/v2/attestations/acme/web/trail/release-1/generic',
      [
        {
          name: 'data_json',
          value: JSON.stringify({
            attestation_name: 'unit-tests',
            artifact_fingerprint: FP,
            is_compliant: true,
          }),
        },
      ],
    );
    expect(attested.status).toBe(201);
    expect((await view(t.app)).evidence).toHaveProperty('unit-tests');
    await expect
      .poll(async () => Object.keys((await view(replica)).evidence), { timeout: 5000 })
      .toContain('unit-tests');
  });

  it('shows a replica its own write at once, before its change log poll', async () => {
    // A replica that reads the change log only once a minute: its own writes must not wait for it.
    const slow = await buildApp({
      config: testConfig({ VERITY_CHANGE_POLL_MS: '60000' }),
      database: replicaDb ?? t.db,
      logger: false,
    });
    try {
      await slow.ready();
      // Reads carry log_index: sequence the log so that it does not move between the two readings.
      await t.app.transparencyLog.sequence();
      const before = await view(slow);
      expect(await view(slow)).toEqual(before);
      expect(before.evidence).not.toHaveProperty('own-write');
      const attested = await cliClient(slow, adminKey).multipart(
        'POST',
        '/api/v2/attestations/acme/web/trail/release-1/generic',
        [
          {
            name: 'data_json',
            value: JSON.stringify({
              attestation_name: 'own-write',
              artifact_fingerprint: FP,
              is_compliant: true,
            }),
          },
        ],
      );
      expect(attested.status).toBe(201);
      expect((await view(slow)).evidence).toHaveProperty('own-write');
    } finally {
      await slow.close();
    }
  });

  it('follows evidence changed directly in the database', async () => {
    // Reads carry log_index: sequence the log so that it does not move between the two readings.
    await t.app.transparencyLog.sequence();
    const before = await view(replica);
    expect(await view(replica)).toEqual(before);
    await sql`update artifacts set filename = 'web:renamed' where fingerprint = ${FP}`.execute(t.db.db);
    await expect
      .poll(async () => ((await view(replica)) as unknown as { filename: string }).filename, {
        timeout: 5000,
      })
      .toBe('web:renamed');
  });

  it('keeps no view with VERITY_READ_CACHE_ENTRIES=0: a direct change shows at once', async () => {
    // The change log is read once a minute here: only a view read afresh can show the change.
    const uncached = await buildApp({
      config: testConfig({ VERITY_CHANGE_POLL_MS: '60000', VERITY_READ_CACHE_ENTRIES: '0' }),
      database: replicaDb ?? t.db,
      logger: false,
    });
    try {
      await uncached.ready();
      const filename = async () => ((await view(uncached)) as unknown as { filename: string }).filename;
      await sql`update artifacts set filename = 'web:uncached-1' where fingerprint = ${FP}`.execute(t.db.db);
      expect(await filename()).toBe('web:uncached-1');
      await sql`update artifacts set filename = 'web:uncached-2' where fingerprint = ${FP}`.execute(t.db.db);
      expect(await filename()).toBe('web:uncached-2');
    } finally {
      await uncached.close();
    }
  });

  it('answers from the cache with the bytes and headers of the first answer', async () => {
    // Text beyond ASCII: the cached view is kept as UTF-8 bytes, and must say what it said.
    await sql`update artifacts set filename = ${'web:\u00e9t\u00e9 \u2713'} where fingerprint = ${FP}`.execute(
      t.db.db,
    );
    // The change is an entry of the transparency log; sequenced now, so that `log_index` does
    // not move between the two answers compared.
    await t.app.transparencyLog.sequence();
    const get = () => cliClient(t.app, adminKey).get(`/api/v2/artifacts/acme/web/fingerprint/${FP}`);
    // The first answer that shows the change was read from the database (the change made the
    // cached view stale); the ones after it come from the cache.
    let first: Awaited<ReturnType<typeof get>> | undefined;
    await expect
      .poll(
        async () => {
          first = await get();
          return (first.json as { filename: string }).filename;
        },
        { timeout: 5000 },
      )
      .toBe('web:\u00e9t\u00e9 \u2713');
    const cached = await get();
    expect(cached.body).toBe(first!.body);
    expect(cached.headers['content-type']).toBe(first!.headers['content-type']);
    expect(cached.status).toBe(200);
    expect((cached.json as { filename: string }).filename).toBe('web:\u00e9t\u00e9 \u2713');
    expect(cached.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(cached.headers['content-length'])).toBe(Buffer.byteLength(cached.body));
  });

  it('keeps organizations apart: another organization never sees a cached view', async () => {
    const other = cliClient(t.app, await t.seedKey('globex', 'admin'));
    expect((await other.get(`/api/v2/artifacts/globex/web/fingerprint/${FP}`)).status).toBe(404);
  });
});

describe('flow action settings cache', () => {
  const attest = async (app: FastifyInstance, name: string) => {
    const res = await cliClient(app, adminKey).multipart(
      'POST',
      '/api/v2/attestations/acme/web/trail/release-1/generic',
      [{ name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) }],
    );
    expect(res.status).toBe(201);
  };
  const queued = async (name: string) => {
    const org = await orgsRepository.findByName(t.db.db, 'acme');
    return (await outboxRepository.forOrg(t.db.db, org!.id)).filter(
      (r) => (r.payload as { attestation?: { name: string } }).attestation?.name === name,
    ).length;
  };
  const putAction = async (app: FastifyInstance, name: string) =>
    (
      await cliClient(app, adminKey).json('PUT', '/api/v2/actions/acme/flows', {
        name,
        flows: ['web'],
        triggers: ['ON_ATTESTATION'],
        targets: [{ type: 'WEBHOOK', webhook: 'https://hooks.example/verity', payload_version: '1.0' }],
      })
    ).status;

  it('notifies an action created on the same replica from the next attestation on', async () => {
    await attest(t.app, 'before-action');
    expect(await queued('before-action')).toBe(0);
    expect(await putAction(t.app, 'local')).toBe(201);
    await attest(t.app, 'after-action');
    expect(await queued('after-action')).toBe(1);
    const actions = (await cliClient(t.app, adminKey).get('/api/v2/actions/acme')).json as Array<{
      name: string;
      number: number;
    }>;
    const local = actions.find((a) => a.name === 'local')!;
    expect(
      (await cliClient(t.app, adminKey).json('DELETE', `/api/v2/actions/acme/${local.number}`)).status,
    ).toBe(200);
    await attest(t.app, 'after-delete');
    expect(await queued('after-delete')).toBe(0);
  });

  it('notifies an action created through another replica once the change is heard', async () => {
    await attest(t.app, 'warm');
    expect(await putAction(replica, 'remote')).toBe(201);
    let n = 0;
    await expect
      .poll(
        async () => {
          n += 1;
          await attest(t.app, `remote-${n}`);
          return queued(`remote-${n}`);
        },
        { timeout: 5000, interval: 50 },
      )
      .toBe(1);
  });
});

describe.runIf(onPostgres)('listener connection lost', () => {
  it('reconnects, and a revocation after it still reaches the other replica', async () => {
    const { id, key } = await newKey();
    expect(await status(replica, key)).toBe(200);
    const terminated = await sql<{ n: number }>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = 'verity-change-listener' and pid <> pg_backend_pid()`.execute(t.db.db);
    expect(terminated.rows[0]!.n).toBeGreaterThanOrEqual(2);
    // Without a listener nothing is cached, so the key keeps working only while it is valid.
    expect(await status(replica, key)).toBe(200);
    expect((await cliClient(t.app, adminKey).json('DELETE', `${sa}/bot/api-keys/${id}`)).status).toBe(200);
    await expect.poll(() => status(replica, key), { timeout: 10_000, interval: 50 }).toBe(401);
    // Listening again: both listeners are back.
    await expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
              where application_name = 'verity-change-listener'`.execute(t.db.db)
          ).rows[0]!.n,
        { timeout: 10_000, interval: 50 },
      )
      .toBeGreaterThanOrEqual(2);
  });
});
