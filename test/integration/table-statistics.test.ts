/**
 * Table statistics where no autovacuum keeps them (storage/statistics.ts): a table is analyzed
 * once more than 50 rows plus a tenth of it changed since its last analysis, and then not again
 * until it changes that much more. An app with the background workers on analyzes at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { analyzeChangedTables, autovacuumRuns } from '../../services/api/src/storage/statistics.js';
import { buildApp } from '../../services/api/src/app.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

let t: TestApp;
let ids: { org: string; flow: string };
let added = 0;

/** Adds `n` trails, and flushes this session's counts so the statistics views show them. */
async function addTrails(n: number): Promise<void> {
  const from = added + 1;
  added += n;
  await t.db.db.connection().execute(async (c) => {
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${ids.org}, 'stats-' || i, ${ids.flow}, 'stats-' || i, 'test', now(), now(), '{}'::jsonb,
        'INCOMPLETE', now()
      from generate_series(${from}::int, ${added}::int) i`.execute(c);
    await sql`select pg_stat_force_next_flush()`.execute(c);
  });
}

/** When the trails table was last analyzed (null: never). */
const lastAnalyzed = async () =>
  (
    await sql<{ at: Date | null }>`select last_analyze as at from pg_stat_user_tables
      where schemaname = current_schema() and relname = 'trails'`.execute(t.db.db)
  ).rows[0]!.at;

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

  it('is done by the background workers, where no autovacuum does it', async (ctx) => {
    if (await autovacuumRuns(t.db.db, t.db.dialect)) {
      // The server keeps them (and may analyze the table meanwhile): nothing to watch here.
      ctx.skip();
    }
    const before = await lastAnalyzed();
    await addTrails(200);
    const app = await buildApp({
      config: testConfig({ VERITY_NOTIFIER_ENABLED: 'true' }),
      database: t.db,
      logger: false,
    });
    try {
      await app.ready();
      const deadline = Date.now() + 10_000;
      let after = await lastAnalyzed();
      while (after?.getTime() === before?.getTime() && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        after = await lastAnalyzed();
      }
      expect(after!.getTime()).toBeGreaterThan(before!.getTime());
    } finally {
      await app.close();
    }
  });
});
