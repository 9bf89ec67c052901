/** First start and restarts: bootstrap is idempotent; migrations run once even when replicas race. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../../services/api/src/storage/migrate.js';
import { migrations } from '../../services/api/src/storage/migrations/index.js';
import { ensureBootstrap } from '../../services/api/src/usecases/access/bootstrap.js';
import { client, testConfig } from '../helpers/app.js';
import {
  adminQuery,
  createTestDatabase,
  dropSchema,
  newSchemaName,
  onPostgres,
  TEST_DATABASE_URL,
} from '../helpers/database.js';

const KEY = 'bootstrap-key-0123456789-abcdefghij';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) {
    await cleanups.pop()!();
  }
});

describe('bootstrap', () => {
  it('creates the configured org and admin key once, and a restart changes nothing', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.close());
    const first = await ensureBootstrap(db.db, { orgName: 'acme', apiKey: KEY, now: new Date() });
    expect(first).toMatchObject({ org: 'acme', orgCreated: true, configuredKeyCreated: true });
    const second = await ensureBootstrap(db.db, { orgName: 'acme', apiKey: KEY, now: new Date() });
    expect(second).toMatchObject({ org: 'acme', orgCreated: false, configuredKeyCreated: false });
    expect(second.generatedKey).toBeUndefined();
    const counts = await sql<{ orgs: number; keys: number; accounts: number }>`
      select (select count(*) from orgs) as orgs, (select count(*) from api_keys) as keys,
             (select count(*) from service_accounts) as accounts`.execute(db.db);
    expect(counts.rows[0]).toEqual({ orgs: 1, keys: 1, accounts: 1 });

    const app = await buildApp({ config: testConfig(), database: db, logger: false });
    cleanups.push(() => app.close());
    const res = await client(app, KEY).get('/api/v2/organizations/acme');
    expect(res.status).toBe(200);
    // the bootstrap key is an Admin key
    expect(
      (
        await client(app, KEY).put('/api/v2/organizations/acme/experimental_features', {
          experimental_features_enabled: true,
        })
      ).status,
    ).toBe(200);
  });

  it('generates and returns a key only on the first start of an empty database', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.close());
    const first = await ensureBootstrap(db.db, { orgName: undefined, apiKey: undefined, now: new Date() });
    expect(first.org).toBe('default');
    expect(first.generatedKey).toMatch(/^vty_[A-Za-z0-9_-]{43}$/);
    const again = await ensureBootstrap(db.db, { orgName: undefined, apiKey: undefined, now: new Date() });
    expect(again.generatedKey).toBeUndefined();
    expect(again.orgCreated).toBe(false);
  });

  it.skipIf(onPostgres)(
    'survives a restart of the embedded database on disk',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'verity-boot-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      for (let start = 0; start < 2; start++) {
        const handle = await openDatabase({ dataDir: dir });
        const applied = await migrateToLatest(handle);
        expect(applied.length).toBe(start === 0 ? Object.keys(migrations).length : 0);
        const result = await ensureBootstrap(handle.db, { orgName: 'acme', apiKey: KEY, now: new Date() });
        expect(result.orgCreated).toBe(start === 0);
        await handle.close();
      }
      // Creating an embedded database on disk (initdb) takes tens of seconds on a busy 2-core machine.
    },
    120_000,
  );

  it.skipIf(onPostgres)('refuses a second process on the same embedded database directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-lock-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, '.verity.lock'), String(process.ppid));
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(/in use by process/);
  });
});

describe.runIf(onPostgres)('migrations on PostgreSQL', () => {
  it('run once when two app instances start on one database at the same moment', async () => {
    const schema = newSchemaName();
    await adminQuery(`create schema ${schema}`);
    cleanups.push(() => dropSchema(schema));
    const handles = await Promise.all(
      [0, 1, 2].map(() => openDatabase({ databaseUrl: TEST_DATABASE_URL, searchPath: schema, poolMax: 4 })),
    );
    cleanups.push(async () => {
      for (const h of handles) {
        await h.close();
      }
    });
    const applied = await Promise.all(handles.map((h) => migrateToLatest(h)));
    const total = applied.reduce((n, a) => n + a.length, 0);
    expect(total).toBe(Object.keys(migrations).length);
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(handles[0]!.db);
    expect(rows.rows.map((r) => r.name).sort()).toEqual(Object.keys(migrations).sort());
    // and bootstrap on all three at once leaves one org, one account, one key
    const boots = await Promise.allSettled(
      handles.map((h) => ensureBootstrap(h.db, { orgName: 'acme', apiKey: KEY, now: new Date() })),
    );
    const retried = await Promise.all(
      boots.map(async (b, i) =>
        b.status === 'fulfilled'
          ? b.value
          : ensureBootstrap(handles[i]!.db, { orgName: 'acme', apiKey: KEY, now: new Date() }),
      ),
    );
    expect(retried.filter((r) => r.orgCreated).length).toBeLessThanOrEqual(1);
    const counts = await sql<{ orgs: number; keys: number }>`
      select (select count(*) from orgs) as orgs, (select count(*) from api_keys) as keys`.execute(
      handles[0]!.db,
    );
    expect(counts.rows[0]).toEqual({ orgs: 1, keys: 1 });
  });
});
