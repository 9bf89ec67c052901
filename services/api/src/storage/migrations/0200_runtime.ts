/**
 * Runtime: environments, live state, snapshots (as runs of states), policies, allowlists, actions
 * and the notification outbox. Frozen once shipped. See tables/runtime.ts for what each holds.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  sql`create table environments (
    org_id text not null references orgs(id) on delete cascade,
    id text not null,
    name text not null,
    type text not null check (type in ('K8S','ECS','S3','lambda','server','docker','azure-apps','cloud-run','logical')),
    description text not null default '',
    require_provenance boolean not null default false,
    archived boolean not null default false,
    tags jsonb not null default '{}'::jsonb,
    created_by text not null,
    created_at timestamptz not null,
    last_modified_at timestamptz not null,
    last_reported_at timestamptz,
    last_changed_at timestamptz,
    latest_snapshot integer not null default 0,
    compliant boolean,
    last_report_hash text,
    last_report_raw_hash text,
    primary key (org_id, id),
    unique (org_id, name)
  )`,
  sql`create table environment_members (
    org_id text not null,
    logical_id text not null,
    physical_id text not null,
    primary key (org_id, logical_id, physical_id),
    foreign key (org_id, logical_id) references environments(org_id, id) on delete cascade,
    foreign key (org_id, physical_id) references environments(org_id, id) on delete cascade
  )`,
  sql`create table policies (
    org_id text not null references orgs(id) on delete cascade,
    id text not null,
    name text not null,
    description text not null default '',
    type text not null default 'env',
    created_by text not null,
    created_at timestamptz not null,
    last_modified_at timestamptz not null,
    archived boolean not null default false,
    latest_version integer not null,
    primary key (org_id, id),
    unique (org_id, name)
  )`,
  sql`create table policy_versions (
    org_id text not null,
    policy_id text not null,
    version integer not null,
    policy_yaml text not null,
    content_hash text not null,
    parsed jsonb not null,
    comment text not null default '',
    created_by text not null,
    created_at timestamptz not null,
    primary key (org_id, policy_id, version),
    foreign key (org_id, policy_id) references policies(org_id, id) on delete cascade
  )`,
  sql`create table policy_events (
    org_id text not null,
    id text not null,
    policy_id text not null,
    type text not null,
    at timestamptz not null,
    user_name text not null,
    data jsonb not null default '{}'::jsonb,
    primary key (org_id, id),
    foreign key (org_id, policy_id) references policies(org_id, id) on delete cascade
  )`,
  sql`create index policy_events_policy_idx on policy_events (org_id, policy_id, at)`,
  sql`create table environment_policies (
    org_id text not null,
    environment_id text not null,
    policy_id text not null,
    attached_at timestamptz not null,
    primary key (org_id, environment_id, policy_id),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade,
    foreign key (org_id, policy_id) references policies(org_id, id) on delete cascade
  )`,
  sql`create index environment_policies_policy_idx on environment_policies (org_id, policy_id)`,
  sql`create table runtime_live (
    org_id text not null,
    environment_id text not null,
    fingerprint text not null,
    name text not null,
    instance_count integer not null,
    detail_hash text not null,
    detail jsonb not null,
    primary key (org_id, environment_id, fingerprint),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`,
  sql`create index runtime_live_fingerprint_idx on runtime_live (org_id, fingerprint)`,
  sql`create table runtime_details (
    org_id text not null references orgs(id) on delete cascade,
    hash text not null,
    detail jsonb not null,
    primary key (org_id, hash)
  )`,
  sql`create table runtime_verdicts (
    org_id text not null references orgs(id) on delete cascade,
    hash text not null,
    compliant boolean,
    provenance jsonb not null,
    decisions jsonb not null,
    reasons jsonb not null,
    allowlisted boolean not null default false,
    primary key (org_id, hash)
  )`,
  sql`create table runtime_states (
    org_id text not null,
    environment_id text not null,
    fingerprint text not null,
    from_index integer not null,
    to_index integer,
    exited boolean not null default false,
    exit_count integer,
    name text not null,
    instance_count integer not null,
    was_count integer not null,
    change text not null,
    detail_hash text not null,
    verdict_hash text not null,
    run_start integer not null,
    primary key (org_id, environment_id, fingerprint, from_index),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`,
  sql`create index runtime_states_from_idx on runtime_states (org_id, environment_id, from_index)`,
  sql`create index runtime_states_to_idx on runtime_states (org_id, environment_id, to_index)`,
  sql`create index runtime_states_current_idx on runtime_states (org_id, environment_id) where to_index is null`,
  sql`create table runtime_snapshots (
    org_id text not null,
    environment_id text not null,
    index integer not null,
    created_at timestamptz not null,
    compliant boolean,
    started integer not null,
    changed integer not null,
    exited integer not null,
    artifact_count integer not null,
    cause text not null,
    applied_policies jsonb not null,
    reported_by text,
    primary key (org_id, environment_id, index),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`,
  sql`create index runtime_snapshots_time_idx on runtime_snapshots (org_id, environment_id, created_at)`,
  sql`create table reevaluation_marks (
    org_id text not null,
    id text not null,
    environment_id text not null,
    marked_at timestamptz not null,
    reason text not null,
    primary key (org_id, id)
  )`,
  sql`create index reevaluation_marks_time_idx on reevaluation_marks (marked_at)`,
  sql`create table allowlist_entries (
    org_id text not null,
    id text not null,
    environment_id text not null,
    fingerprint text not null,
    artifact_name text not null,
    description text not null,
    created_by text not null,
    created_at timestamptz not null,
    primary key (org_id, environment_id, fingerprint),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`,
  sql`create table actions (
    org_id text not null references orgs(id) on delete cascade,
    id text not null,
    number integer not null,
    name text not null,
    type text not null check (type in ('env','flow')),
    environments jsonb not null default '[]'::jsonb,
    flows jsonb not null default '[]'::jsonb,
    triggers jsonb not null,
    created_by text not null,
    created_at timestamptz not null,
    last_modified_at timestamptz not null,
    primary key (org_id, id),
    unique (org_id, number),
    unique (org_id, name)
  )`,
  sql`create table action_targets (
    org_id text not null,
    action_id text not null,
    position integer not null,
    type text not null check (type in ('SLACK','WEBHOOK','EMAIL')),
    webhook text,
    payload_version text,
    emails jsonb,
    last_success_at timestamptz,
    last_failure_at timestamptz,
    last_error text,
    primary key (org_id, action_id, position),
    foreign key (org_id, action_id) references actions(org_id, id) on delete cascade
  )`,
  sql`create table outbox (
    org_id text not null references orgs(id) on delete cascade,
    id text not null,
    action_id text not null,
    target_position integer not null,
    target jsonb not null,
    trigger text not null,
    payload jsonb not null,
    created_at timestamptz not null,
    attempts integer not null default 0,
    next_attempt_at timestamptz not null,
    lease_until timestamptz,
    delivered_at timestamptz,
    failed_at timestamptz,
    last_error text,
    primary key (org_id, id)
  )`,
  sql`create index outbox_due_idx on outbox (next_attempt_at) where delivered_at is null and failed_at is null`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) {
    await statement.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'outbox',
    'action_targets',
    'actions',
    'allowlist_entries',
    'reevaluation_marks',
    'runtime_snapshots',
    'runtime_states',
    'runtime_verdicts',
    'runtime_details',
    'runtime_live',
    'environment_policies',
    'policy_events',
    'policy_versions',
    'policies',
    'environment_members',
    'environments',
  ]) {
    await sql`drop table if exists ${sql.table(table)} cascade`.execute(db);
  }
}
