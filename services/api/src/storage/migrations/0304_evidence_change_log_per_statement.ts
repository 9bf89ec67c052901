/**
 * The evidence change log (0302) written once per statement instead of once per row: a report
 * batch writes dozens of rows per statement, and a trigger call per row cost more than the row.
 * Each evidence table gets three statement triggers (insert, update, delete: a trigger with a
 * transition table handles one event) that log the distinct orgs of the rows changed. Frozen
 * once shipped.
 */
import { sql, type Kysely } from 'kysely';
import { EVIDENCE_TABLES } from './0300_change_notifications.js';

const EVENTS = [
  { event: 'insert', suffix: 'ins', transition: 'new' },
  { event: 'update', suffix: 'upd', transition: 'new' },
  { event: 'delete', suffix: 'del', transition: 'old' },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  const table = sql.table(`${schema}.evidence_changes`);
  await sql`
    create function verity_log_evidence() returns trigger language plpgsql as $$
    begin
      insert into ${table} (org_id) select distinct org_id from changed_rows on conflict do nothing;
      return null;
    end $$`.execute(db);
  for (const t of EVIDENCE_TABLES) {
    await sql`drop trigger ${sql.raw(`${t}_notify_evidence`)} on ${sql.table(t)}`.execute(db);
    for (const e of EVENTS) {
      await sql`
        create trigger ${sql.raw(`${t}_log_evidence_${e.suffix}`)}
        after ${sql.raw(e.event)} on ${sql.table(t)}
        referencing ${sql.raw(e.transition)} table as changed_rows
        for each statement execute function verity_log_evidence()`.execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of EVIDENCE_TABLES) {
    for (const e of EVENTS) {
      await sql`drop trigger if exists ${sql.raw(`${t}_log_evidence_${e.suffix}`)} on ${sql.table(t)}`.execute(
        db,
      );
    }
    await sql`
      create trigger ${sql.raw(`${t}_notify_evidence`)}
      after insert or update or delete on ${sql.table(t)}
      for each row execute function verity_notify_evidence()`.execute(db);
  }
  await sql`drop function if exists verity_log_evidence()`.execute(db);
}
