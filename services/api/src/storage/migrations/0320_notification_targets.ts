/**
 * Notification targets get a stable identity and an optional signing secret, outbox rows name
 * the target they are for by that identity (not by position, which moves when targets change),
 * and each organization gets a webhook signing key (with the previous one kept for a grace
 * period after a rotation). Frozen once shipped. See tables/runtime.ts for what each holds.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  sql`alter table action_targets add column id text`,
  sql`update action_targets set id = replace(gen_random_uuid()::text, '-', '')`,
  sql`alter table action_targets alter column id set not null`,
  sql`alter table action_targets add column secret text`,
  sql`create unique index action_targets_id_idx on action_targets (org_id, action_id, id)`,
  sql`alter table outbox add column target_id text`,
  sql`update outbox set target_id = t.id from action_targets t
      where t.org_id = outbox.org_id and t.action_id = outbox.action_id
        and t.position = outbox.target_position`,
  sql`create table webhook_signing_keys (
    org_id text primary key references orgs(id) on delete cascade,
    key text not null,
    created_at timestamptz not null,
    previous_key text,
    rotated_at timestamptz
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) {
    await statement.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists webhook_signing_keys`.execute(db);
  await sql`alter table outbox drop column if exists target_id`.execute(db);
  await sql`drop index if exists action_targets_id_idx`.execute(db);
  await sql`alter table action_targets drop column if exists secret`.execute(db);
  await sql`alter table action_targets drop column if exists id`.execute(db);
}
