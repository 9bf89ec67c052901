/**
 * The queues vacuumed where no autovacuum does it (storage/statistics.ts): the transparency
 * log's queue, once its records are in the log, is vacuumed by autovacuum's rule (more than 50
 * rows plus a fifth of it dead), and the sequencer's read of the queue then no longer steps over
 * the index entries of the records it already took. The background workers do it on their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { autovacuumRuns, vacuumQueues } from '../../services/api/src/storage/statistics.js';
import { transparencyLogRepository } from '../../services/api/src/storage/repositories/transparency-log.js';
import { buildApp } from '../../services/api/src/app.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

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

/** Adds `n` trails (each queues a log record) and sequences them: `n` removed queue rows. */
async function logTrails(n: number): Promise<void> {
  const from = added + 1;
  added += n;
  await flushed((c) =>
    sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${ids.org}, 'vac-' || i, ${ids.flow}, 'vac-' || i, 'test', now(), now(), '{}'::jsonb,
        'INCOMPLETE', now()
      from generate_series(${from}::int, ${added}::int) i`.execute(c),
  );
  await t.app.transparencyLog.sequence();
  await flushed(() => Promise.resolve());
}

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
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'vac', description: '' })).status).toBe(201);
  ids = (
    await sql<{
      org: string;
      flow: string;
    }>`select org_id as org, id as flow from flows where name = 'vac'`.execute(t.db.db)
  ).rows[0]!;
  await t.app.transparencyLog.sequence();
  await vacuumQueues(t.db.db);
});
afterAll(async () => t?.close());

describe('the queues, where no autovacuum runs', () => {
  it('vacuums the log queue by autovacuum’s rule, and its reads stop paying for old records', async (ctx) => {
    if (await autovacuumRuns(t.db.db, t.db.dialect)) {
      // The server vacuums it whenever it likes: nothing here would be ours to see.
      ctx.skip();
    }
    await flushed((c) => vacuumQueues(c));
    await logTrails(40);
    expect((await queueStats()).dead).toBeGreaterThanOrEqual(40);
    expect(await vacuumQueues(t.db.db)).not.toContain('log_queue');

    await logTrails(3000);
    const unvacuumed = await blocksOfQueueRead();
    expect(await vacuumQueues(t.db.db)).toContain('log_queue');
    await flushed(() => Promise.resolve());
    const stats = await queueStats();
    expect(stats.vacuumed).not.toBeNull();
    // 3,040 removed entries fill a dozen index pages, walked by every read until the vacuum.
    expect(unvacuumed).toBeGreaterThanOrEqual(10);
    if (t.db.dialect !== 'pglite') {
      // On a server, a vacuum keeps what another session's open snapshot may still see (the other
      // test files' transactions): what it removes here is not this test's to know.
      return;
    }
    expect(stats.dead).toBe(0);
    expect(await blocksOfQueueRead()).toBeLessThanOrEqual(3);
  });

  it('is done by the background workers', async (ctx) => {
    if (await autovacuumRuns(t.db.db, t.db.dialect)) {
      ctx.skip();
    }
    await logTrails(200);
    const before = (await queueStats()).vacuumed;
    const app = await buildApp({
      config: testConfig({ VERITY_NOTIFIER_ENABLED: 'true' }),
      database: t.db,
      logger: false,
    });
    try {
      await app.ready();
      const deadline = Date.now() + 10_000;
      let after = (await queueStats()).vacuumed;
      while (after?.getTime() === before?.getTime() && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        after = (await queueStats()).vacuumed;
      }
      expect(after).not.toBeNull();
      expect(after!.getTime()).toBeGreaterThan(before?.getTime() ?? 0);
    } finally {
      await app.close();
    }
  });
});
