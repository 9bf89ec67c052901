/**
 * The runtime states of a fingerprint across all environments, for exposure ("where and when did
 * these artifacts run"): without it, a read of many fingerprints probes every environment's
 * primary key for each. One index entry per state, and states are written only on changes.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runtime_states_fingerprint_idx on runtime_states (org_id, fingerprint)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index runtime_states_fingerprint_idx`.execute(db);
}
