/**
 * The runtime events of each artifact (started and stopped running), by their own index: an
 * artifact's answer reads its latest one per environment for `running` and `exited`, and an
 * artifact attested forty thousand times would otherwise have every event of its history read
 * to find its few runtime ones. Its predicate is the literal list the read names
 * (repositories/trail-events.ts `artifactHistoryColumns`). Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index trail_events_runtime_idx on trail_events (org_id, trail_id, fingerprint, seq)
    where type in ('artifact_started_running', 'artifact_stopped_running')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists trail_events_runtime_idx`.execute(db);
}
