/**
 * `deployments_backfill`: one row once the deployments of the snapshots written before migration
 * 0387_deployments have been recorded from their history (usecases/runtime/delivery-backfill.ts),
 * so the API does it once, in the background, after the upgrade. A database without snapshots
 * has nothing to record: the row is written here. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table deployments_backfill (
    id integer primary key check (id = 1),
    finished_at timestamptz not null
  )`.execute(db);
  await sql`insert into deployments_backfill (id, finished_at)
    select 1, now() where not exists (select 1 from runtime_snapshots)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists deployments_backfill`.execute(db);
}
