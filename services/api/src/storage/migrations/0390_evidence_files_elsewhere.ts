/**
 * Evidence files whose bytes live in an object store: their row keeps the digest, size and age,
 * and no content (null). A row with content is in the database. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table evidence_files alter column content drop not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Rows without content cannot be kept by the older schema: their bytes are elsewhere.
  await sql`delete from evidence_files where content is null`.execute(db);
  await sql`alter table evidence_files alter column content set not null`.execute(db);
}
