/**
 * Table upkeep where no autovacuum does it: the embedded database (PGlite runs no background
 * workers) and a server with autovacuum off. Statistics first: without them the planner guesses,
 * and its guesses go wrong as tables grow: the trigger that checks each attestation's and trail
 * event's trail (migration 0305) looked trails up by the (org_id, flow_id, created_at) index with
 * org_id alone, reading the organization's trails for every row checked (a 5,000-pod report's 500
 * trail events: 100 ms in that check). So a table is analyzed by the rule autovacuum applies with
 * its default settings: once more than 50 rows plus a tenth of the table changed since the last
 * analysis.
 *
 * Then the queues (QUEUE_TABLES): tables whose rows are written, read once and removed, all day.
 * A removed row's index entry stays until a vacuum, and every read of a queue in key order steps
 * over the entries of everything it ever held: unvacuumed, the log's sequencer read 300,000
 * removed entries in 2.5 ms a statement, three statements a round, growing with the
 * organization's history. They are vacuumed by autovacuum's own rule (more than 50 rows plus a
 * fifth of the table dead). A queue holds little at any time, so its vacuum costs what it removed
 * since the last one, not the history. Larger tables are left alone: their vacuum reads every
 * index whole, which on the embedded database would hold the API's thread.
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

/** Tables of work in passing: their live rows are few, their removed ones many. */
export const QUEUE_TABLES = [
  'log_queue',
  'outbox',
  'evidence_changes',
  'reevaluation_marks',
  'deployments_deferred',
  'oidc_logins',
] as const;

/**
 * Vacuums the queues with more dead rows than autovacuum's rule allows; returns their names. One
 * that another session is vacuuming (a replica's round) is skipped.
 */
export async function vacuumQueues(db: Db): Promise<string[]> {
  const due = await sql<{ name: string }>`
    select relname as name from pg_stat_user_tables
    where schemaname = current_schema() and relname = any(${[...QUEUE_TABLES]}::text[])
      -- autovacuum's default vacuum threshold (50 rows) and scale factor (a fifth)
      and n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0)
    order by relname`.execute(db);
  const names = due.rows.map((r) => r.name);
  for (const name of names) {
    await sql`vacuum (skip_locked) ${sql.table(name)}`.execute(db);
  }
  return names;
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
