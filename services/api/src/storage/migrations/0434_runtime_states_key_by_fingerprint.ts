/**
 * The runtime states' primary key leads with the fingerprint, (org_id, fingerprint,
 * environment_id, from_index), and the separate index by fingerprint (0351) goes: the key now
 * answers both a fingerprint's states across environments (exposure, components, re-evaluation
 * marks) and one environment's states of a fingerprint, so every state written or ended maintained
 * one index more than its reads needed. Reads by environment and snapshot use the from, to and
 * current indexes, as before.
 *
 * A rollout that replaces every image ends and starts one state per fingerprint: on PostgreSQL 15,
 * 50,000 states inserted took 571 to 600 ms with this key against 752 to 818 ms before, and
 * 50,000 ended 516 to 553 ms against 725 to 778 ms. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runtime_states drop constraint runtime_states_pkey`.execute(db);
  await sql`alter table runtime_states add constraint runtime_states_pkey
    primary key (org_id, fingerprint, environment_id, from_index)`.execute(db);
  await sql`drop index runtime_states_fingerprint_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index runtime_states_fingerprint_idx on runtime_states (org_id, fingerprint)`.execute(db);
  await sql`alter table runtime_states drop constraint runtime_states_pkey`.execute(db);
  await sql`alter table runtime_states add constraint runtime_states_pkey
    primary key (org_id, environment_id, fingerprint, from_index)`.execute(db);
}
