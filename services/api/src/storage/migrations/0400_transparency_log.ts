/**
 * The per-organization transparency log (RFC 9162 hashing, C2SP checkpoints). Frozen once shipped.
 *
 * `log_queue`: records written and not yet in the log. Triggers on the logged tables (installed
 * from the registry of kinds, storage/log-triggers.ts) add a row in the write's own transaction;
 * the sequencer turns queued rows into entries and deletes them.
 * `log_entries`: entry `index` of an organization's log: its kind, the record's id and the record
 * (the object whose RFC 8785 canonical JSON is the leaf's data).
 * `log_nodes`: the hash of every complete subtree: level 0 holds the leaf hashes, level `l` index
 * `i` the root of leaves `[i * 2^l, (i + 1) * 2^l)`. A proof reads O(log n) of them.
 * `log_heads`: per organization the tree size, root and the latest signed checkpoint; its row is
 * locked while a sequencer appends, so replicas take turns.
 * `log_keys`: signing keys generated per organization (none when keys come from a file); a
 * retired key stays listed so older checkpoints still verify.
 */
import { sql, type Kysely } from 'kysely';

const STATEMENTS = [
  sql`create table log_queue (
    id bigint generated always as identity primary key,
    org_id text not null,
    kind text not null,
    op text not null,
    row jsonb not null
  )`,
  sql`create index log_queue_org_idx on log_queue (org_id, id)`,
  sql`create table log_heads (
    org_id text primary key references orgs(id) on delete cascade,
    size bigint not null default 0,
    root bytea,
    checkpoint text,
    updated_at timestamptz not null
  )`,
  sql`create table log_entries (
    org_id text not null,
    index bigint not null,
    kind text not null,
    record_id text not null,
    record jsonb not null,
    primary key (org_id, index),
    foreign key (org_id) references orgs(id) on delete cascade
  )`,
  sql`create index log_entries_record_idx on log_entries (org_id, kind, record_id, index)`,
  sql`create table log_nodes (
    org_id text not null,
    level smallint not null,
    idx bigint not null,
    hash bytea not null,
    primary key (org_id, level, idx),
    foreign key (org_id) references orgs(id) on delete cascade
  )`,
  sql`create table log_keys (
    org_id text not null references orgs(id) on delete cascade,
    key_id text not null,
    public_key bytea not null,
    private_key bytea,
    created_at timestamptz not null,
    retired_at timestamptz,
    primary key (org_id, key_id)
  )`,
  sql`create table log_trigger_state (
    id integer primary key,
    fingerprint text not null
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of STATEMENTS) {
    await s.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['log_trigger_state', 'log_keys', 'log_nodes', 'log_entries', 'log_heads', 'log_queue']) {
    await sql`drop table if exists ${sql.table(t)}`.execute(db);
  }
}
