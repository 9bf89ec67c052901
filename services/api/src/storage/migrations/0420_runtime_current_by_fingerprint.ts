/**
 * The current states of an environment in fingerprint order: a large environment's current
 * states are read in pages by fingerprint (storage/repositories/runtime.ts#currentStates), and
 * the former index (org_id, environment_id) made each page sort them all. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runtime_states_current_fp_idx on runtime_states (org_id, environment_id, fingerprint, from_index)
    where to_index is null`.execute(db);
  await sql`drop index runtime_states_current_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index runtime_states_current_idx on runtime_states (org_id, environment_id) where to_index is null`.execute(
    db,
  );
  await sql`drop index runtime_states_current_fp_idx`.execute(db);
}
