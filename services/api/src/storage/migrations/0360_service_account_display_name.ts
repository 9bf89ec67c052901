/**
 * A service account's display name, when one was given; null shows the account's name. Adding a
 * nullable column without a default rewrites nothing, so it is safe on a large table.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table service_accounts add column display_name text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table service_accounts drop column display_name`.execute(db);
}
