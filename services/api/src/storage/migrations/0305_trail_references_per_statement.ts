/**
 * The references from a trail's evidence (attestations, trail events, trail facts) to its trail,
 * checked once per statement instead of once per row. A foreign key checks each row on its own,
 * locking the trail row each time; a report batch writes dozens of rows per statement, and those
 * checks cost as much as the rest of the write. The triggers here keep what the keys kept:
 * - no row is inserted to name a trail that does not exist (SQLSTATE 23503, as a foreign key would
 *   answer): one check per statement;
 * - nor updated to: a row trigger that runs only when a row's trail changes, which nothing does
 *   (a statement trigger on update would make the trail facts' upsert pay for a transition table);
 * - deleting trails deletes their evidence (as `on delete cascade` did).
 * What the per-row lock gave, a trail that cannot be deleted before the writing transaction
 * commits, comes from the writers: every statement that writes a trail's evidence also updates
 * the trail row or holds its lock, so a delete waits for it and its cascade then sees its rows.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

const TABLES = ['attestations', 'trail_events', 'trail_facts'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  const table = (name: string) => sql.table(`${schema}.${name}`);
  await sql`
    create function verity_check_trail_refs() returns trigger language plpgsql as $$
    declare
      missing record;
    begin
      select c.org_id, c.trail_id into missing from changed_rows c
        where not exists (select 1 from ${table('trails')} t where t.org_id = c.org_id and t.id = c.trail_id)
        limit 1;
      if found then
        raise foreign_key_violation using
          message = format('insert on table "%s" names trail %s of organization %s, which does not exist',
            tg_table_name, missing.trail_id, missing.org_id),
          table = tg_table_name;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create function verity_check_trail_ref() returns trigger language plpgsql as $$
    begin
      if not exists (select 1 from ${table('trails')} t where t.org_id = new.org_id and t.id = new.trail_id) then
        raise foreign_key_violation using
          message = format('update on table "%s" names trail %s of organization %s, which does not exist',
            tg_table_name, new.trail_id, new.org_id),
          table = tg_table_name;
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create function verity_delete_trail_evidence() returns trigger language plpgsql as $$
    begin
      delete from ${table('attestations')} x using gone g where x.org_id = g.org_id and x.trail_id = g.id;
      delete from ${table('trail_events')} x using gone g where x.org_id = g.org_id and x.trail_id = g.id;
      delete from ${table('trail_facts')} x using gone g where x.org_id = g.org_id and x.trail_id = g.id;
      return null;
    end $$`.execute(db);
  for (const t of TABLES) {
    await sql`alter table ${sql.table(t)} drop constraint ${sql.raw(`${t}_org_id_trail_id_fkey`)}`.execute(
      db,
    );
    await sql`
      create trigger ${sql.raw(`${t}_trail_ref_ins`)}
      after insert on ${sql.table(t)}
      referencing new table as changed_rows
      for each statement execute function verity_check_trail_refs()`.execute(db);
    await sql`
      create trigger ${sql.raw(`${t}_trail_ref_upd`)}
      before update on ${sql.table(t)}
      for each row when (new.org_id is distinct from old.org_id or new.trail_id is distinct from old.trail_id)
      execute function verity_check_trail_ref()`.execute(db);
  }
  await sql`
    create trigger trails_delete_evidence after delete on trails
    referencing old table as gone
    for each statement execute function verity_delete_trail_evidence()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists trails_delete_evidence on trails`.execute(db);
  for (const t of TABLES) {
    for (const suffix of ['ins', 'upd']) {
      await sql`drop trigger if exists ${sql.raw(`${t}_trail_ref_${suffix}`)} on ${sql.table(t)}`.execute(db);
    }
    await sql`
      alter table ${sql.table(t)} add constraint ${sql.raw(`${t}_org_id_trail_id_fkey`)}
      foreign key (org_id, trail_id) references trails(org_id, id) on delete cascade`.execute(db);
  }
  await sql`drop function if exists verity_delete_trail_evidence()`.execute(db);
  await sql`drop function if exists verity_check_trail_ref()`.execute(db);
  await sql`drop function if exists verity_check_trail_refs()`.execute(db);
}
