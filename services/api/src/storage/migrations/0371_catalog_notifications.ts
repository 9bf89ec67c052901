/**
 * Change notifications for what replicas remember of an organization's repos and custom
 * attestation types (usecases/repos.ts `knownRepo`, attestation-verdict.ts): a committed change
 * sends the org id on channel verity_config__<schema> (the function of 0301), which moves the
 * organization's config epoch on every replica listening. These rows change rarely (a repo is
 * written only when its info changes), so the notification's commit-time lock costs little.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

const TABLES = ['repos', 'custom_attestation_types', 'custom_attestation_type_versions'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`
      create trigger ${sql.raw(`${table}_notify_config`)}
      after insert or update or delete on ${sql.table(table)}
      for each row execute function verity_notify_config()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`drop trigger if exists ${sql.raw(`${table}_notify_config`)} on ${sql.table(table)}`.execute(db);
  }
}
