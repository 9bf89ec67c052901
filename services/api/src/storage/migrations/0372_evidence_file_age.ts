/**
 * Evidence files by when they were stored: a collector pass (usecases/evidence-store.ts) reads
 * only the files stored since the previous pass, not the whole store. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index evidence_files_created_at_idx on evidence_files (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists evidence_files_created_at_idx`.execute(db);
}
