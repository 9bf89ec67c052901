/**
 * Table upkeep where no autovacuum does it (storage/statistics.ts). A table is analyzed once more
 * than 50 rows plus a tenth of it changed since its last analysis, and then not again until it
 * changes that much more. The queues are vacuumed by autovacuum's rule (more than 50 rows plus a
 * fifth dead): the transparency log's queue, once its records are in the log, and the
 * sequencer's read of it then no longer steps over the entries of the records it took. An app
 * with the background workers on does both at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  analyzeChangedTables,
  autovacuumRuns,
  vacuumQueues,
} from '../../services/api/src/storage/statistics.js';
import { transparencyLogRepository } from '../../services/api/src/storage/repositories/transparency-log.js';
import { buildApp } from '../../services/api/src/app.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { until } from '../helpers/wait.js';

let t: TestApp;
let ids: { org: string; flow: string };
let added = 0;

/** Runs `f` on one connection and flushes its statistics, so the views show what it did. */
async function flushed(f: (db: typeof t.db.db) => Promise<unknown>): Promise<void> {
  await t.db.db.connection().execute(async (c) => {
    await f(c);
    await sql`select pg_stat_force_next_flush()`.execute(c);
  });
}

/** Adds `n` trails (each also queues a log record). */
async function addTrails(n: number): Promise<void> {
  const from = added + 1;
  added += n;
  await flushed((c) =>
    sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${ids.org}, 'stats-' || i, ${ids.flow}, 'stats-' || i, 'test', now(), now(), '{}'::jsonb,
        'INCOMPLETE', now()
      from generate_series(${from}::int, ${added}::int) i`.execute(c),
  );
}

/** Adds `n` trails and sequences their log records: `n` removed rows in the log's queue. */
async function logTrails(n: number): Promise<void> {
  await addTrails(n);
  await t.app.transparencyLog.sequence();
  await flushed(() => Promise.resolve());
}

/** When the trails table was last analyzed (null: never). */
const lastAnalyzed = async () =>
  (
    await sql<{ at: Date | null }>`select last_analyze as at from pg_stat_user_tables
      where schemaname = current_schema() and relname = 'trails'`.execute(t.db.db)
  ).rows[0]!.at;

/** The log queue's dead rows and last vacuum. */
const queueStats = async () =>
  (
    await sql<{ dead: number; vacuumed: Date | null }>`select n_dead_tup::int as dead, last_vacuum as vacuumed
      from pg_stat_user_tables where schemaname = current_schema() and relname = 'log_queue'`.execute(t.db.db)
  ).rows[0]!;

/** Index blocks the sequencer's look for organizations with queued records reads. */
async function blocksOfQueueRead(): Promise<number> {
  const read = async () =>
    Number(
      (
        await sql<{ n: string }>`select coalesce(sum(idx_blks_hit + idx_blks_read), 0) as n
          from pg_statio_user_indexes where schemaname = current_schema() and relname = 'log_queue'`.execute(
          t.db.db,
        )
      ).rows[0]!.n,
    );
  const before = await read();
  await flushed(async (c) => expect(await transparencyLogRepository.queuedOrgs(c, 100)).toEqual([]));
  return (await read()) - before;
}

beforeAll(async () => {
  t = await createTestApp();
  const cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'stats', description: '' })).status).toBe(201);
  ids = (
    await sql<{
      org: string;
      flow: string;
    }>`select org_id as org, id as flow from flows where name = 'stats'`.execute(t.db.db)
  ).rows[0]!;
  await analyzeChangedTables(t.db.db);
});
afterAll(async () => t?.close());

describe('table statistics without autovacuum', () => {
  it('analyzes a table only once enough of it changed', async () => {
    await addTrails(40);
    expect(await analyzeChangedTables(t.db.db)).not.toContain('trails');
    expect(await lastAnalyzed()).toBeNull();

    await addTrails(30);
    expect(await analyzeChangedTables(t.db.db)).toContain('trails');
    const analyzed = await lastAnalyzed();
    expect(analyzed).not.toBeNull();

    // 50 rows plus a tenth of the table as it is then must change again: 55 of 125 is not enough,
    // 65 of 135 is.
    await addTrails(55);
    expect(await analyzeChangedTables(t.db.db)).not.toContain('trails');
    await addTrails(10);
    expect(await analyzeChangedTables(t.db.db)).toContain('trails');
    expect((await lastAnalyzed())!.getTime()).toBeGreaterThan(analyzed!.getTime());
  });

  it('gathers none for the log’s record documents and leaf hashes, which no query filters on', async () => {
    await t.app.transparencyLog.sequence();
    await sql`analyze log_entries`.execute(t.db.db);
    const columns = await sql<{ name: string }>`select attname as name from pg_stats
      where schemaname = current_schema() and tablename = 'log_entries' order by attname`.execute(t.db.db);
    expect(columns.rows.map((r) => r.name)).toEqual(['index', 'kind', 'org_id', 'record_id']);
  });

  it('knows where autovacuum keeps them instead', async () => {
    const expected =
      t.db.dialect === 'pglite'
        ? false
        : (await sql<{ v: string }>`select current_setting('autovacuum') as v`.execute(t.db.db)).rows[0]!
            .v === 'on';
    expect(await autovacuumRuns(t.db.db, t.db.dialect)).toBe(expected);
  });

  it('vacuums the log queue by autovacuum’s rule, and its reads stop paying for old records', async (ctx) => {
    if (await autovacuumRuns(t.db.db, t.db.dialect)) {
      // The server vacuums it whenever it likes: nothing here would be ours to see.
      ctx.skip();
    }
    // On a server, a vacuum keeps what another session's open snapshot may still see (the other
    // test files' transactions): how many dead rows it leaves is not this test's to know there.
    const alone = t.db.dialect === 'pglite';
    // What the tests before left in the queue, taken and vacuumed away first.
    await logTrails(0);
    await flushed((c) => vacuumQueues(c));
    if (alone) {
      await logTrails(40);
      expect((await queueStats()).dead).toBe(40);
      expect(await vacuumQueues(t.db.db)).not.toContain('log_queue');
    }
    await logTrails(3000);
    const unvacuumed = await blocksOfQueueRead();
    // 3,000 removed entries fill a dozen index pages, walked by every read until the vacuum.
    expect(unvacuumed).toBeGreaterThanOrEqual(10);
    expect(await vacuumQueues(t.db.db)).toContain('log_queue');
    await flushed(() => Promise.resolve());
    expect((await queueStats()).vacuumed).not.toBeNull();
    if (alone) {
      expect((await queueStats()).dead).toBe(0);
      expect(await blocksOfQueueRead()).toBeLessThanOrEqual(3);
    }
  });

  it('is done by the background workers, where no autovacuum does it', async (ctx) => {
    if (await autovacuumRuns(t.db.db, t.db.dialect)) {
      // The server keeps them (and may analyze the table meanwhile): nothing to watch here.
      ctx.skip();
    }
    const analyzed = await lastAnalyzed();
    const vacuumed = (await queueStats()).vacuumed;
    await logTrails(200);
    const app = await buildApp({
      config: testConfig({ VERITY_NOTIFIER_ENABLED: 'true' }),
      database: t.db,
      logger: false,
    });
    try {
      await app.ready();
      const later = (a: Date | null, b: Date | null) =>
        a && a.getTime() > (b?.getTime() ?? 0) ? a : undefined;
      await until(async () => later(await lastAnalyzed(), analyzed));
      await until(async () => later((await queueStats()).vacuumed, vacuumed));
    } finally {
      await app.close();
    }
  });
});
