/**
 * Notification configs and the durable record of API-key expiry warnings.
 *
 * `notification_configs` / `notification_config_targets`: per organization and notification
 * type, the targets that replace the derived recipients; targets keep a stable identity and a
 * delivery record as action targets do. `api_key_expiry_warnings`: one row per key and
 * threshold once that warning was written, so restarts and replicas never repeat it (the
 * primary key decides between two replicas). `outbox.source` says where a row's target lives:
 * an action (`action_id` is the action's id), a notification config, or the derived recipients
 * kept on the row (for both, `action_id` is the notification type). Two partial indexes serve
 * the sweep: service-account keys that may expire, by expiry, and keys by the key they replaced.
 * Frozen once shipped. See tables/notification-config.ts for what each holds.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  sql`create table notification_configs (
    org_id text not null references orgs(id) on delete cascade,
    notification_type text not null,
    created_by text not null,
    created_at timestamptz not null,
    last_modified_at timestamptz not null,
    primary key (org_id, notification_type)
  )`,
  sql`create table notification_config_targets (
    org_id text not null,
    notification_type text not null,
    id text not null,
    position integer not null,
    type text not null check (type in ('SLACK','WEBHOOK','EMAIL')),
    webhook text,
    payload_version text,
    emails jsonb,
    last_success_at timestamptz,
    last_failure_at timestamptz,
    last_error text,
    primary key (org_id, notification_type, id),
    foreign key (org_id, notification_type)
      references notification_configs(org_id, notification_type) on delete cascade
  )`,
  sql`create table api_key_expiry_warnings (
    org_id text not null references orgs(id) on delete cascade,
    key_id text not null references api_keys(id) on delete cascade,
    threshold_days integer not null,
    expires_at timestamptz not null,
    warned_at timestamptz not null,
    recipients text not null check (recipients in ('configured','admins','none')),
    primary key (org_id, key_id, threshold_days)
  )`,
  sql`create index api_key_expiry_warnings_key_idx on api_key_expiry_warnings (key_id)`,
  sql`alter table outbox add column source text not null default 'action'
    check (source in ('action','notification_config','notification_default'))`,
  sql`create index api_keys_expiry_idx on api_keys (expires_at)
    where service_account_id is not null and revoked_at is null and expires_at is not null`,
  sql`create index api_keys_rotated_from_idx on api_keys (rotated_from) where rotated_from is not null`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) {
    await statement.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists api_keys_rotated_from_idx`.execute(db);
  await sql`drop index if exists api_keys_expiry_idx`.execute(db);
  await sql`alter table outbox drop column if exists source`.execute(db);
  await sql`drop table if exists api_key_expiry_warnings`.execute(db);
  await sql`drop table if exists notification_config_targets`.execute(db);
  await sql`drop table if exists notification_configs`.execute(db);
}
