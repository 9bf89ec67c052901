/**
 * Flows, trails, artifacts, attestations, evidence files, custom attestation types, controls,
 * repos and trail events (the evidence area, migrations 0100-0199). Frozen once shipped.
 * Fingerprints and commits use the C collation so prefix searches (`like 'abc%'`) use the index.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const orgFk = (name: string) =>
    sql.raw(`constraint ${name} foreign key (org_id) references orgs(id) on delete cascade`);

  await sql`
    create table flows (
      org_id text not null,
      id text not null,
      name text not null,
      description text not null default '',
      visibility text not null default 'private',
      template_yaml text,
      template jsonb,
      legacy_template jsonb,
      tags jsonb not null default '{}'::jsonb,
      archived boolean not null default false,
      created_by text not null,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      primary key (org_id, id),
      ${orgFk('flows_org_fk')}
    )`.execute(db);
  await sql`create unique index flows_org_name_key on flows (org_id, name)`.execute(db);

  // Old names of renamed flows: they answer until another flow takes the name (spec rule 1).
  await sql`
    create table flow_aliases (
      org_id text not null,
      name text not null,
      flow_id text not null,
      primary key (org_id, name),
      foreign key (org_id, flow_id) references flows(org_id, id) on delete cascade
    )`.execute(db);

  await sql`
    create table trails (
      org_id text not null,
      id text not null,
      flow_id text not null,
      name text not null,
      description text not null default '',
      template_yaml text,
      template jsonb,
      git_commit_info jsonb,
      repo_info jsonb,
      repo_id text,
      origin_url text,
      external_urls jsonb,
      user_data jsonb,
      created_by text not null,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      compliance jsonb not null,
      compliance_state text not null,
      evaluated_at timestamptz not null,
      primary key (org_id, id),
      foreign key (org_id, flow_id) references flows(org_id, id) on delete cascade
    )`.execute(db);
  await sql`create unique index trails_org_flow_name_key on trails (org_id, flow_id, name)`.execute(db);
  await sql`create index trails_org_flow_created_idx on trails (org_id, flow_id, created_at desc)`.execute(
    db,
  );

  await sql`
    create table artifacts (
      org_id text not null,
      id text not null,
      flow_id text not null,
      trail_id text not null,
      seq bigint generated always as identity,
      fingerprint text collate "C" not null,
      filename text not null,
      template_reference_name text,
      description text,
      git_commit text collate "C",
      git_commit_info jsonb,
      repo_info jsonb,
      repo_id text,
      build_url text,
      commit_url text,
      repo_url text,
      commits_list jsonb,
      external_urls jsonb,
      annotations jsonb,
      user_data jsonb,
      legacy_template jsonb,
      created_by text not null,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      state text not null,
      compliance jsonb not null,
      primary key (org_id, id),
      foreign key (org_id, trail_id) references trails(org_id, id) on delete cascade
    )`.execute(db);
  await sql`create unique index artifacts_org_trail_fp_key on artifacts (org_id, trail_id, fingerprint)`.execute(
    db,
  );
  await sql`create index artifacts_org_fp_idx on artifacts (org_id, fingerprint)`.execute(db);
  await sql`create index artifacts_org_flow_fp_idx on artifacts (org_id, flow_id, fingerprint)`.execute(db);
  await sql`create index artifacts_org_commit_idx on artifacts (org_id, git_commit)`.execute(db);
  await sql`create index artifacts_org_created_idx on artifacts (org_id, created_at desc)`.execute(db);

  await sql`
    create table attestations (
      org_id text not null,
      id text not null,
      flow_id text not null,
      trail_id text not null,
      seq bigint generated always as identity,
      name text not null,
      type text not null,
      kind text not null,
      is_compliant boolean not null,
      artifact_fingerprint text collate "C",
      target_artifacts jsonb,
      git_commit text collate "C",
      payload jsonb not null default '{}'::jsonb,
      description text not null default '',
      origin_url text not null default '',
      user_data jsonb,
      annotations jsonb,
      external_urls jsonb,
      git_commit_info jsonb,
      repo_info jsonb,
      repo_id text,
      evidence_sha256 text,
      evidence_filename text,
      evidence_size bigint,
      evidence_content_type text,
      created_by text not null,
      created_at timestamptz not null,
      primary key (org_id, id),
      foreign key (org_id, trail_id) references trails(org_id, id) on delete cascade
    )`.execute(db);
  await sql`create index attestations_org_trail_idx on attestations (org_id, trail_id, seq)`.execute(db);
  await sql`create index attestations_org_flow_created_idx on attestations (org_id, flow_id, created_at)`.execute(
    db,
  );
  await sql`create index attestations_org_seq_idx on attestations (org_id, seq)`.execute(db);

  await sql`
    create table trail_events (
      org_id text not null,
      trail_id text not null,
      seq bigint generated always as identity,
      type text not null,
      fingerprint text collate "C",
      occurred_at timestamptz not null,
      data jsonb not null default '{}'::jsonb,
      primary key (org_id, trail_id, seq),
      foreign key (org_id, trail_id) references trails(org_id, id) on delete cascade
    )`.execute(db);
  await sql`create index trail_events_org_trail_fp_idx on trail_events (org_id, trail_id, fingerprint, seq)`.execute(
    db,
  );

  await sql`
    create table evidence_files (
      org_id text not null,
      sha256 text not null,
      size bigint not null,
      content bytea not null,
      created_at timestamptz not null,
      primary key (org_id, sha256),
      ${orgFk('evidence_files_org_fk')}
    )`.execute(db);

  await sql`
    create table custom_attestation_types (
      org_id text not null,
      id text not null,
      name text not null,
      description text,
      archived boolean not null default false,
      created_by text not null,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      primary key (org_id, id),
      ${orgFk('custom_attestation_types_org_fk')}
    )`.execute(db);
  await sql`create unique index custom_attestation_types_org_name_key on custom_attestation_types (org_id, name)`.execute(
    db,
  );
  await sql`
    create table custom_attestation_type_versions (
      org_id text not null,
      type_id text not null,
      version integer not null,
      description text,
      comment text,
      type_schema jsonb,
      evaluator jsonb,
      summary jsonb,
      created_by text not null,
      created_at timestamptz not null,
      primary key (org_id, type_id, version),
      foreign key (org_id, type_id) references custom_attestation_types(org_id, id) on delete cascade
    )`.execute(db);

  await sql`
    create table controls (
      org_id text not null,
      id text not null,
      identifier text not null,
      archived boolean not null default false,
      tags jsonb not null default '{}'::jsonb,
      events jsonb not null default '[]'::jsonb,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      primary key (org_id, id),
      ${orgFk('controls_org_fk')}
    )`.execute(db);
  await sql`create unique index controls_org_identifier_key on controls (org_id, identifier)`.execute(db);
  await sql`
    create table control_versions (
      org_id text not null,
      control_id text not null,
      version integer not null,
      name text not null,
      description text not null default '',
      links jsonb not null default '{}'::jsonb,
      created_by text not null,
      created_at timestamptz not null,
      primary key (org_id, control_id, version),
      foreign key (org_id, control_id) references controls(org_id, id) on delete cascade
    )`.execute(db);

  await sql`
    create table repos (
      org_id text not null,
      id text not null,
      name text not null,
      provider text not null default '',
      url text not null,
      external_id text,
      description text,
      vcs_instance text,
      namespace_path jsonb,
      additional_info jsonb,
      tags jsonb not null default '{}'::jsonb,
      created_at timestamptz not null,
      last_modified_at timestamptz not null,
      primary key (org_id, id),
      ${orgFk('repos_org_fk')}
    )`.execute(db);
  await sql`create unique index repos_org_name_provider_key on repos (org_id, name, provider)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'repos',
    'control_versions',
    'controls',
    'custom_attestation_type_versions',
    'custom_attestation_types',
    'evidence_files',
    'trail_events',
    'attestations',
    'artifacts',
    'trails',
    'flow_aliases',
    'flows',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
