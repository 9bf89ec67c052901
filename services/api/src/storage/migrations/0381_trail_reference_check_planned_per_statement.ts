/**
 * The per-statement trail reference check (migration 0305) planned each time it runs, not once
 * per connection. Its query has no parameters, so PL/pgSQL kept the first plan a connection made
 * for as long as the connection lived, or until the trails table was next analyzed. Made while
 * the table was small (a new installation, an organization's first minutes), that plan looked
 * trails up by the (org_id, flow_id, created_at) index with org_id alone and filtered by id:
 * every row checked then read all of its organization's trails. Measured after 10 s of CI runs
 * on a new database (`BENCH_AB_PRE=10 npx tsx bench/pipeline-ab.ts bound`): 1,605 to 1,765
 * attestations/s and 0.36 ms of PostgreSQL CPU each, against 3,125 to 3,138 and half the CPU
 * once the tables were analyzed. Planned on each run, the check sees the table's current size
 * and probes the primary key.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

/** What the check raises for a row naming a missing trail (`missing`), as a foreign key would. */
const RAISE_MISSING = sql`
  raise foreign_key_violation using
    message = format('insert on table "%s" names trail %s of organization %s, which does not exist',
      tg_table_name, missing.trail_id, missing.org_id),
    table = tg_table_name;`;

async function currentSchema(db: Kysely<unknown>): Promise<string> {
  return (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const schema = await currentSchema(db);
  const trails = `"${schema.replaceAll('"', '""')}".trails`;
  // Dynamic SQL sees the statement's transition table (changed_rows) as static SQL does.
  const check = `select c.org_id, c.trail_id from changed_rows c
    where not exists (select 1 from ${trails} t where t.org_id = c.org_id and t.id = c.trail_id)
    limit 1`;
  await sql`
    create or replace function verity_check_trail_refs() returns trigger language plpgsql as $$
    declare
      missing record;
      found_rows bigint;
    begin
      execute ${sql.lit(check)} into missing;
      get diagnostics found_rows = row_count;
      if found_rows > 0 then ${RAISE_MISSING}
      end if;
      return null;
    end $$`.execute(db);
}

/** Back to migration 0305's function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const trails = sql.table(`${await currentSchema(db)}.trails`);
  await sql`
    create or replace function verity_check_trail_refs() returns trigger language plpgsql as $$
    declare
      missing record;
    begin
      select c.org_id, c.trail_id into missing from changed_rows c
        where not exists (select 1 from ${trails} t where t.org_id = c.org_id and t.id = c.trail_id)
        limit 1;
      if found then ${RAISE_MISSING}
      end if;
      return null;
    end $$`.execute(db);
}
