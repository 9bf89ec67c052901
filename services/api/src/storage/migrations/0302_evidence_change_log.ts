/**
 * Evidence changes as rows instead of notifications. A transaction that sends NOTIFY takes a
 * database-wide lock at commit that serializes every such commit, WAL flush included; with every
 * attestation notifying, ingest ran at a third of its rate. The evidence triggers of 0300 now
 * record the org id and the writing transaction's id in `evidence_changes` (one row per
 * transaction and org), and each replica reads the new rows every few milliseconds
 * (storage/change-feed.ts). The table is unlogged: after a crash it starts empty, and so do the
 * caches of every replica, which reconnect. Credential and action changes are rare and keep
 * their notifications. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  await sql`
    create unlogged table evidence_changes (
      xid xid8 not null default pg_current_xact_id(),
      org_id text not null,
      primary key (xid, org_id)
    )`.execute(db);
  // Qualified: the trigger also fires for sessions with another search path (an operator's psql).
  const table = sql.table(`${schema}.evidence_changes`);
  await sql`
    create or replace function verity_notify_evidence() returns trigger language plpgsql as $$
    begin
      insert into ${table} (org_id) values (coalesce(new.org_id, old.org_id)) on conflict do nothing;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function verity_notify_evidence() returns trigger language plpgsql as $$
    begin
      perform pg_notify('verity_evidence__' || current_schema(), coalesce(new.org_id, old.org_id));
      return null;
    end $$`.execute(db);
  await sql`drop table if exists evidence_changes`.execute(db);
}
