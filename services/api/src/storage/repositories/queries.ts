/** Query pieces several repositories share. */
import { sql, type Insertable, type SelectQueryBuilder } from 'kysely';
import type { Database, Db } from '../database.js';

/**
 * The tables with `org_id` and `name` columns. (insertUnlessNameTaken needs a unique index on the
 * two, which environments, flows, policies, service accounts and custom attestation types have.)
 */
type NamedTable = {
  [T in keyof Database]: Database[T] extends { org_id: string; name: string } ? T : never;
}[keyof Database];

/** Inserts a named row; undefined, and nothing written, when the organization has that name already. */
export async function insertUnlessNameTaken<T extends NamedTable>(
  db: Db,
  table: T,
  row: Insertable<Database[T]>,
) {
  return db
    .insertInto(table)
    .values(row)
    .onConflict((oc) => oc.columns(['org_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * How many rows a query finds, whatever it selects; call it before adding order and paging.
 * (The row type is stated because TypeScript cannot work out a selection on a generic query.)
 */
export async function countRows<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  const { n } = await q
    .clearSelect()
    .select((eb) => eb.fn.countAll().as('n'))
    .$castTo<{ n: string | number | bigint }>()
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * How many rows a query finds, counted up to `cap + 1`: past the cap the count stops, so a list
 * matching millions costs what `cap` index entries do. Call it before adding order and paging.
 */
export async function countRowsUpTo<DB, TB extends keyof DB, O>(
  db: Db,
  q: SelectQueryBuilder<DB, TB, O>,
  cap: number,
): Promise<number> {
  const r = await sql<{ n: string | number }>`select count(*) as n from (${q.limit(cap + 1)}) as c`.execute(
    db,
  );
  return Number(r.rows[0]?.n ?? 0);
}
