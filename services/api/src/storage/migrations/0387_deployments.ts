/**
 * Delivery insight, recorded as runtime history is written (never derived by scanning at read
 * time):
 *
 * `deployments`: one row per new fingerprint starting to run in an environment (a rollback is a
 * fingerprint that ran there before and replaces another), with what it replaced, the commits it
 * brought, its lead times and its compliance when it landed; `rolled_back_at` and
 * `broke_compliance_at` are set once, by the later snapshot that rolled it back or in which the
 * environment became non-compliant because of it. Read newest first per organization, environment,
 * repository or flow (keyset paging on `started_at, id`), and aggregated by the DORA query over
 * the organization index, which carries the aggregated columns.
 *
 * `compliance_incidents`: each stretch an environment spent non-compliant, from the snapshot
 * that made it so to the one that restored it (open while `restored_at` is null).
 *
 * `artifact_lead_times`: per artifact record and environment, the first moment it ran there and
 * the seconds from its commit and from its creation to that moment; fixed once written.
 *
 * Filled here from the history recorded so far, where the history tells exactly: the stretches of
 * non-compliance from the snapshots' compliance, and the lead times of the artifact records each
 * run started with. Deployments are not: what a past start replaced and the commits it brought
 * were never recorded, so deployments start with this migration.
 *
 * `artifacts_org_flow_seq_idx`: the artifacts of a flow in the order they were reported, for the
 * commits a deployment brought (those between the replaced artifact and the deployed one);
 * `artifacts_org_repo_created_idx`: a repository's builds over time, for its delivery view.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table deployments (
    org_id text not null,
    id text collate "C" not null,
    environment_id text not null,
    snapshot_index integer not null,
    started_at timestamptz not null,
    fingerprint text collate "C" not null,
    artifact_name text not null,
    artifact_id text,
    flow_name text,
    trail_name text,
    git_commit text,
    html_url text,
    repo_name text,
    replaced jsonb not null,
    rollback boolean not null,
    commit_lead_time double precision,
    build_lead_time double precision,
    change_lead_time double precision,
    commits jsonb not null,
    compliant boolean,
    rolled_back_at timestamptz,
    broke_compliance_at timestamptz,
    primary key (org_id, id),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`.execute(db);
  await sql`create index deployments_org_time_idx on deployments (org_id, started_at desc, id desc)
    include (environment_id, repo_name, change_lead_time, rolled_back_at, broke_compliance_at)`.execute(db);
  await sql`create index deployments_org_env_time_idx
    on deployments (org_id, environment_id, started_at desc, id desc)`.execute(db);
  await sql`create index deployments_org_repo_time_idx
    on deployments (org_id, repo_name, started_at desc, id desc) where repo_name is not null`.execute(db);
  await sql`create index deployments_org_flow_time_idx
    on deployments (org_id, flow_name, started_at desc, id desc) where flow_name is not null`.execute(db);
  await sql`create index deployments_org_env_fp_idx
    on deployments (org_id, environment_id, fingerprint, started_at desc)`.execute(db);
  await sql`create table compliance_incidents (
    org_id text not null,
    environment_id text not null,
    started_index integer not null,
    started_at timestamptz not null,
    restored_index integer,
    restored_at timestamptz,
    primary key (org_id, environment_id, started_index),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`.execute(db);
  await sql`create index compliance_incidents_restored_idx
    on compliance_incidents (org_id, restored_at) include (environment_id, started_at)`.execute(db);
  await sql`create index compliance_incidents_open_idx
    on compliance_incidents (org_id, environment_id) where restored_at is null`.execute(db);
  await sql`create table artifact_lead_times (
    org_id text not null,
    artifact_id text not null,
    environment_id text not null,
    snapshot_index integer not null,
    first_ran_at timestamptz not null,
    commit_lead_time double precision,
    build_lead_time double precision not null,
    primary key (org_id, artifact_id, environment_id),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`.execute(db);
  await backfill(db);
  await sql`create index artifacts_org_flow_seq_idx on artifacts (org_id, flow_id, seq)`.execute(db);
  await sql`create index artifacts_org_repo_created_idx on artifacts (org_id, repo_id, created_at)
    where repo_id is not null`.execute(db);
}

/** The stretches of non-compliance and the artifact lead times the recorded history holds. */
async function backfill(db: Kysely<unknown>): Promise<void> {
  // A stretch opens where a snapshot is non-compliant after one that was not (or none), and
  // closes at the next snapshot that is not non-compliant.
  await sql`
    with s as (
      select org_id, environment_id, index, created_at, compliant,
        lag(compliant) over (partition by org_id, environment_id order by index) as prev
      from runtime_snapshots
    ), opened as (
      select * from s where compliant is false and prev is distinct from false
    ), closed as (
      select * from s where compliant is distinct from false and prev is false
    )
    insert into compliance_incidents (org_id, environment_id, started_index, started_at, restored_index, restored_at)
    select o.org_id, o.environment_id, o.index, o.created_at, c.index, c.created_at
    from opened o
    left join lateral (
      select c.index, c.created_at from closed c
      where c.org_id = o.org_id and c.environment_id = o.environment_id and c.index > o.index
      order by c.index limit 1
    ) c on true`.execute(db);
  // Each artifact record a run started with, measured at the first start of its fingerprint there.
  await sql`
    insert into artifact_lead_times (org_id, artifact_id, environment_id, snapshot_index, first_ran_at,
      commit_lead_time, build_lead_time)
    select distinct on (a.org_id, a.id, st.environment_id)
      a.org_id, a.id, st.environment_id, st.from_index, sn.created_at,
      case when jsonb_typeof(a.git_commit_info -> 'timestamp') = 'number'
        then extract(epoch from sn.created_at) - (a.git_commit_info ->> 'timestamp')::double precision end,
      extract(epoch from sn.created_at - a.created_at)
    from runtime_states st
    join runtime_snapshots sn
      on sn.org_id = st.org_id and sn.environment_id = st.environment_id and sn.index = st.from_index
    join runtime_verdicts v on v.org_id = st.org_id and v.hash = st.verdict_hash
    cross join lateral jsonb_array_elements(v.provenance) p
    join artifacts a on a.org_id = st.org_id and a.id = p ->> 'artifact_id'
    where st.change = 'started'
    order by a.org_id, a.id, st.environment_id, st.from_index`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists artifacts_org_repo_created_idx`.execute(db);
  await sql`drop index if exists artifacts_org_flow_seq_idx`.execute(db);
  await sql`drop table if exists artifact_lead_times`.execute(db);
  await sql`drop table if exists compliance_incidents`.execute(db);
  await sql`drop table if exists deployments`.execute(db);
}
