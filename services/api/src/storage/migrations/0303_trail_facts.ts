/**
 * Per trail, the reports its evaluation depends on (`essentialAttestations` in usecases/evaluation.ts)
 * and the id of the latest report they include. Reporting to a trail reads these instead of the
 * trail's whole history, so a trail attested ten thousand times reports as fast as a new one.
 * They stand only while that id is still the trail's latest report (a replica of an older
 * version may have reported since); otherwise the whole history is read, and the next report
 * writes them again. Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table trail_facts (
      org_id text not null,
      trail_id text not null,
      last_id text,
      facts jsonb not null,
      primary key (org_id, trail_id),
      foreign key (org_id, trail_id) references trails(org_id, id) on delete cascade
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists trail_facts`.execute(db);
}
