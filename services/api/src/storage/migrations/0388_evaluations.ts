/**
 * Server-side policy evaluations and per-organization feature switches.
 *
 * `evaluations`: one row per evaluation requested, the durable queue the evaluation workers claim
 * from (`pending`, then `running` under a lease, then `completed` or `failed`). The request (trails,
 * bundle, params, decision target) is kept as sent, with the bundle's digest; the outcome and the
 * decision attestation written are kept beside it. `evaluations_queue_idx` lists the rows still to
 * run, oldest first, without reading finished ones.
 *
 * `org_features`: a switch per organization and feature; no row means the feature's default.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table evaluations (
    org_id text not null,
    id text not null,
    status text not null,
    request jsonb not null,
    policy_digest text not null,
    requested_by text not null,
    requested_at timestamptz not null,
    claimed_until timestamptz,
    attempts integer not null default 0,
    finished_at timestamptz,
    result jsonb,
    error jsonb,
    input_digest text,
    decision_attestation_id text,
    primary key (org_id, id)
  )`.execute(db);
  await sql`create index evaluations_queue_idx on evaluations (org_id, requested_at, id)
    where status in ('pending', 'running')`.execute(db);
  await sql`create table org_features (
    org_id text not null,
    feature text not null,
    enabled boolean not null,
    updated_at timestamptz not null,
    primary key (org_id, feature)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table org_features`.execute(db);
  await sql`drop table evaluations`.execute(db);
}
