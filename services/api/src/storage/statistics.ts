/**
 * Table statistics where no autovacuum keeps them: the embedded database (PGlite runs no
 * background workers) and a server with autovacuum off. Without statistics the planner guesses,
 * and its guesses go wrong as tables grow: the trigger that checks each attestation's and trail
 * event's trail (migration 0305) looked trails up by the (org_id, flow_id, created_at) index with
 * org_id alone, reading the organization's trails for every row checked (a 5,000-pod report's 500
 * trail events: 100 ms in that check). So a table is analyzed by the rule autovacuum applies with
 * its default settings: once more than 50 rows plus a tenth of the table changed since the last
 * analysis.
 */
import { sql } from 'kysely';
import type { Db } from './database.js';
import type { DialectName } from './create-db.js';

/** Whether the database keeps its own statistics: a server whose autovacuum is on. */
export async function autovacuumRuns(db: Db, dialect: DialectName): Promise<boolean> {
  if (dialect === 'pglite') {
    return false;
  }
  const r = await sql<{ enabled: boolean }>`select current_setting('autovacuum') = 'on' as enabled`.execute(
    db,
  );
  return r.rows[0]?.enabled === true;
}

/**
 * Analyzes this schema's tables changed enough since their last analysis; returns their names.
 * A table this role does not own is skipped by PostgreSQL with a warning.
 */
export async function analyzeChangedTables(db: Db): Promise<string[]> {
  const changed = await sql<{ name: string }>`
    select relname as name from pg_stat_user_tables
    where schemaname = current_schema()
      -- autovacuum's default analyze threshold (50 rows) and scale factor (a tenth)
      and n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0)
    order by relname`.execute(db);
  const names = changed.rows.map((r) => r.name);
  for (const name of names) {
    await sql`analyze ${sql.table(name)}`.execute(db);
  }
  return names;
}
