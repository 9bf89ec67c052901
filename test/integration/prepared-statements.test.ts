/**
 * PostgreSQL runs repeated statements as named prepared statements (storage/create-db.ts). When
 * another replica changes a table's columns under one (a rolling upgrade with a migration), the
 * statement still answers, with the new columns. As a connection ages its statements are planned
 * again, so plans made while the tables were empty do not stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { REPLAN_AFTER_EXECUTIONS, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { createTestDatabase, onPostgres, underMigrationLock } from '../helpers/database.js';

let handle: DatabaseHandle;

describe.runIf(onPostgres)('prepared statements on PostgreSQL', () => {
  beforeAll(async () => {
    // One connection: every statement below runs in the same session.
    handle = await createTestDatabase({ migrate: false, poolMax: 1 });
    await underMigrationLock(handle.db, sql`create table prep_probe (a int)`);
    await sql`insert into prep_probe values (1)`.execute(handle.db);
  });
  afterAll(async () => handle?.close());

  const read = () => sql<Record<string, number>>`select * from prep_probe where a = ${1}`.execute(handle.db);

  it('prepares a repeated statement once per connection', async () => {
    expect((await read()).rows).toEqual([{ a: 1 }]);
    expect((await read()).rows).toEqual([{ a: 1 }]);
    const prepared = await sql<{ n: number }>`
      select count(*)::int as n from pg_prepared_statements where statement like ${'%from prep_probe%'}`.execute(
      handle.db,
    );
    expect(prepared.rows[0]!.n).toBe(1);
  });

  it('answers with the new row shape after the table changed under it', async () => {
    await underMigrationLock(handle.db, sql`alter table prep_probe add column b int default 2`);
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
  });

  const runs = async () =>
    (
      await sql<{ n: number | null }>`
        select sum(generic_plans + custom_plans)::int as n from pg_prepared_statements
        where statement like ${'%from prep_probe where%'}`.execute(handle.db)
    ).rows[0]!.n ?? 0;

  it('plans its statements again once the connection has run enough of them', async () => {
    const first = REPLAN_AFTER_EXECUTIONS[0]!;
    // From a fresh plan: the statement's runs only grow until the connection replans.
    let before = await runs();
    let replanned = false;
    for (let i = 0; i < first * 2 && !replanned; i++) {
      expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
      const now = await runs();
      if (now < before) {
        replanned = true;
      }
      before = now;
    }
    expect(replanned).toBe(true);
    // Planned again, it keeps answering.
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
  });

  it('answers inside a transaction when a replan falls due in it, and keeps a failed transaction failed', async () => {
    const rows = await handle.db.transaction().execute(async (trx) => {
      const out: unknown[] = [];
      for (let i = 0; i < REPLAN_AFTER_EXECUTIONS[1]! + 10; i++) {
        out.push(...(await sql`select * from prep_probe where a = ${1}`.execute(trx)).rows);
      }
      return out;
    });
    expect(rows).toHaveLength(REPLAN_AFTER_EXECUTIONS[1]! + 10);
    expect(rows.every((r) => JSON.stringify(r) === JSON.stringify({ a: 1, b: 2 }))).toBe(true);

    await expect(
      handle.db.transaction().execute(async (trx) => {
        await sql`select 1 / ${0}::int`.execute(trx).catch(() => undefined);
        await sql`select * from prep_probe where a = ${1}`.execute(trx);
      }),
    ).rejects.toThrow(/current transaction is aborted/);
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
  });
});
