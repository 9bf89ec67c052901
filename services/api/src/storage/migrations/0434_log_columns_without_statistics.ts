/**
 * No planner statistics for the log's record documents and leaf hashes: no query filters or
 * joins on them, and gathering them was half of each `analyze` of `log_entries` (300,000
 * entries: 380 to 490 ms, 180 to 200 ms without), which runs every time a tenth of the log is
 * new (storage/statistics.ts, or autovacuum). The queue's rows likewise. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table log_entries alter column record set statistics 0,
    alter column leaf set statistics 0`.execute(db);
  await sql`alter table log_queue alter column row set statistics 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table log_entries alter column record set statistics -1,
    alter column leaf set statistics -1`.execute(db);
  await sql`alter table log_queue alter column row set statistics -1`.execute(db);
}
