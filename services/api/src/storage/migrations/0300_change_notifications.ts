/**
 * Change notifications for in-process caches (plugins/caches.ts). Triggers send, inside the
 * writing transaction, the org whose evidence changed (channel verity_evidence__<schema>) or the fact
 * that credentials changed (channel verity_auth__<schema>); the schema keeps installations that
 * share a database apart. PostgreSQL delivers a notification only when the
 * transaction commits, and to every replica listening, so every replica's caches follow every
 * write, whoever made it. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

/** Tables whose rows make up evidence read views (artifact records and trails). */
export const EVIDENCE_TABLES = [
  'flows',
  'flow_aliases',
  'trails',
  'artifacts',
  'attestations',
  'trail_events',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function verity_notify_evidence() returns trigger language plpgsql as $$
    begin
      -- identical payloads within one transaction are delivered once
      perform pg_notify('verity_evidence__' || current_schema(), coalesce(new.org_id, old.org_id));
      return null;
    end $$`.execute(db);
  for (const table of EVIDENCE_TABLES) {
    await sql`
      create trigger ${sql.raw(`${table}_notify_evidence`)}
      after insert or update or delete on ${sql.table(table)}
      for each row execute function verity_notify_evidence()`.execute(db);
  }

  await sql`
    create function verity_notify_auth() returns trigger language plpgsql as $$
    begin
      perform pg_notify('verity_auth__' || current_schema(), '');
      return null;
    end $$`.execute(db);
  // A key's use (last_used_at) changes nothing a cache holds; revocation and expiry do.
  await sql`
    create trigger api_keys_notify_auth after update on api_keys for each row
    when (old.revoked_at is distinct from new.revoked_at or old.expires_at is distinct from new.expires_at)
    execute function verity_notify_auth()`.execute(db);
  await sql`
    create trigger api_keys_delete_notify_auth after delete on api_keys
    for each statement execute function verity_notify_auth()`.execute(db);
  for (const table of ['service_accounts', 'orgs', 'memberships']) {
    await sql`
      create trigger ${sql.raw(`${table}_notify_auth`)}
      after update or delete on ${sql.table(table)}
      for each statement execute function verity_notify_auth()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of EVIDENCE_TABLES) {
    await sql`drop trigger if exists ${sql.raw(`${table}_notify_evidence`)} on ${sql.table(table)}`.execute(
      db,
    );
  }
  await sql`drop trigger if exists api_keys_notify_auth on api_keys`.execute(db);
  await sql`drop trigger if exists api_keys_delete_notify_auth on api_keys`.execute(db);
  for (const table of ['service_accounts', 'orgs', 'memberships']) {
    await sql`drop trigger if exists ${sql.raw(`${table}_notify_auth`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists verity_notify_evidence()`.execute(db);
  await sql`drop function if exists verity_notify_auth()`.execute(db);
}
