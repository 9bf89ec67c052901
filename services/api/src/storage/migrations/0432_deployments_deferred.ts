/**
 * `deployments_deferred`: snapshots whose deployments are recorded after their own transaction.
 * A snapshot that starts very many fingerprints at once (a rollout of every image of a large
 * cluster) answers its report without them; a worker, or the environment's next snapshot before
 * anything else, records them from the snapshot's history (usecases/runtime/delivery-deferred.ts)
 * and removes the row. `compliant_before` is the environment's compliance just before the
 * snapshot, which marking the deployments that broke compliance needs. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table deployments_deferred (
    org_id text not null,
    environment_id text not null,
    snapshot_index integer not null,
    compliant_before boolean,
    created_at timestamptz not null,
    primary key (org_id, environment_id, snapshot_index),
    foreign key (org_id, environment_id) references environments(org_id, id) on delete cascade
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists deployments_deferred`.execute(db);
}
