/**
 * Retention classes, legal holds and disposition records (README "Retention", "Legal holds").
 *
 * `retention_settings`: an organization's retention classes, the document `PUT /retention/{org}`
 * stored (no row: everything is kept forever). `legal_holds`: one row per hold, by name; nothing in
 * a hold's scope is removed while its row exists. `dispositions`: one row per removal the
 * retention job made (what kind, how many, which ids and digests, under which rule, as of when,
 * who ran it), kept apart from the audit log so a transparency log can record each one.
 * `runtime_snapshots.superseded_at`: when the next snapshot was taken, set on a kept snapshot when
 * retention removes the one after it, so the kept one still says when it stopped being current.
 * `deployments_org_artifact_idx` finds the deployments that cite the artifact records of removed
 * trails (they keep the deployment and lose the link).
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table retention_settings (
    org_id text primary key references orgs(id) on delete cascade,
    settings jsonb not null,
    updated_by text not null,
    updated_at timestamptz not null
  )`.execute(db);
  await sql`create table legal_holds (
    org_id text not null references orgs(id) on delete cascade,
    name text not null,
    reason text not null,
    flows jsonb not null,
    environments jsonb not null,
    from_at timestamptz,
    to_at timestamptz,
    created_by text not null,
    created_at timestamptz not null,
    primary key (org_id, name)
  )`.execute(db);
  await sql`create table dispositions (
    org_id text not null references orgs(id) on delete cascade,
    id text not null,
    kind text not null,
    count integer not null,
    items jsonb not null,
    digests jsonb not null,
    rule jsonb not null,
    as_of timestamptz not null,
    removed_at timestamptz not null,
    run_by text not null,
    primary key (org_id, id)
  )`.execute(db);
  await sql`create index dispositions_removed_at_idx on dispositions (org_id, removed_at, id)`.execute(db);
  await sql`alter table runtime_snapshots add column superseded_at timestamptz`.execute(db);
  await sql`create index deployments_org_artifact_idx on deployments (org_id, artifact_id)
    where artifact_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists deployments_org_artifact_idx`.execute(db);
  await sql`alter table runtime_snapshots drop column if exists superseded_at`.execute(db);
  await sql`drop table if exists dispositions`.execute(db);
  await sql`drop table if exists legal_holds`.execute(db);
  await sql`drop table if exists retention_settings`.execute(db);
}
