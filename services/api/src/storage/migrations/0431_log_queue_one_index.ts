/**
 * The log's queue keeps one index, (org_id, id): every read and removal of queued rows names the
 * organization (the sequencer reads and moves an organization's rows in id order), so the
 * primary key on id alone was a second index every logged write paid for and nothing read.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table log_queue drop constraint log_queue_pkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table log_queue add primary key (id)`.execute(db);
}
