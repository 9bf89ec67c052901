/**
 * PostgreSQL runs repeated statements as named prepared statements (storage/create-db.ts). When
 * another replica changes a table's columns under one (a rolling upgrade with a migration), the
 * statement still answers, with the new columns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { createTestDatabase, onPostgres } from '../helpers/database.js';

let handle: DatabaseHandle;

describe.runIf(onPostgres)('prepared statements on PostgreSQL', () => {
  beforeAll(async () => {
    // One connection: every statement below runs in the same session.
    handle = await createTestDatabase({ migrate: false, poolMax: 1 });
    await sql`create table prep_probe (a int)`.execute(handle.db);
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
    await sql`alter table prep_probe add column b int default 2`.execute(handle.db);
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
  });
});
