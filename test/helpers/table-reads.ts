import { sql, type Kysely } from 'kysely';

/**
 * Rows of `table` (this schema's) read so far, by index and by sequential scans: what a read
 * cost in rows. This session's counts are flushed first (a session's own counts wait), so read
 * it on the connection that did the work.
 */
export async function rowsRead<DB>(c: Kysely<DB>, table: string): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(c);
  const r = await sql<{ n: number }>`select
      (select coalesce(sum(idx_tup_read), 0) from pg_stat_user_indexes
        where schemaname = current_schema() and relname = ${table})::int
      + (select coalesce(sum(seq_tup_read), 0) from pg_stat_user_tables
        where schemaname = current_schema() and relname = ${table})::int as n`.execute(c);
  return r.rows[0]!.n;
}
