/**
 * Change notifications for the per-organization notification settings the domain-event
 * subscriber keeps in process (plugins/caches.ts): a committed change of an org's actions sends
 * the org id on channel verity_config__<schema>, to every replica listening. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function verity_notify_config() returns trigger language plpgsql as $$
    begin
      -- identical payloads within one transaction are delivered once
      perform pg_notify('verity_config__' || current_schema(), coalesce(new.org_id, old.org_id));
      return null;
    end $$`.execute(db);
  await sql`
    create trigger actions_notify_config
    after insert or update or delete on actions
    for each row execute function verity_notify_config()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists actions_notify_config on actions`.execute(db);
  await sql`drop function if exists verity_notify_config()`.execute(db);
}
