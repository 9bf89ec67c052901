/**
 * Trigram indexes for the name search (`GET /search/{org}/names`), which matches a text anywhere
 * in a name (`ILIKE '%text%'`): without them each search reads every flow, trail, environment and
 * artifact of the organization. A GIN index of `pg_trgm` finds the rows holding the text's
 * trigrams, so a search costs the names it matches, not the organization's size.
 *
 * `pg_trgm` ships with PostgreSQL (contrib) and is trusted since PostgreSQL 13: the database's
 * owner may create it. It goes into `public` unless it is installed already, and the operator
 * class is named with its schema, so a connection whose `search_path` leaves that schema out still
 * finds it. The embedded database loads the extension's bundle when it opens (`create-db.ts`).
 *
 * `fastupdate = off`: each insert files its trigrams at once rather than in a pending list that
 * only vacuum merges. The embedded database never vacuums by itself (nor a server with autovacuum
 * off), and a search reads the whole pending list, so with it the planner and the cost of a search
 * would depend on when the last vacuum ran.
 * A text with no run of three letters or digits has no trigram to look up: the search then reads
 * the newest trails and artifacts of the organization by creation time, which for trails takes
 * `trails_org_created_idx` (the existing one leads with the flow). Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  let schema = await trigramSchema(db);
  if (schema === undefined) {
    try {
      await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    } catch (err) {
      throw new Error(
        `Could not create the pg_trgm extension (${(err as Error).message}). Run 'CREATE EXTENSION pg_trgm' in this database as its owner, then start Verity again.`,
        { cause: err },
      );
    }
    schema = (await trigramSchema(db)) ?? 'public';
  }
  const ops = sql`${sql.id(schema)}.gin_trgm_ops`;
  await sql`create index flows_name_trgm_idx on flows using gin (name ${ops}) with (fastupdate = off)`.execute(
    db,
  );
  await sql`create index trails_name_trgm_idx on trails using gin (name ${ops}) with (fastupdate = off)`.execute(
    db,
  );
  await sql`create index environments_name_trgm_idx on environments using gin (name ${ops}) with (fastupdate = off)`.execute(
    db,
  );
  await sql`create index artifacts_filename_trgm_idx on artifacts using gin (filename ${ops}) with (fastupdate = off)`.execute(
    db,
  );
  await sql`create index trails_org_created_idx on trails (org_id, created_at desc)`.execute(db);
}

async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string }>`select n.nspname as schema
    from pg_extension e join pg_namespace n on n.oid = e.extnamespace
    where e.extname = 'pg_trgm'`.execute(db);
  return rows[0]?.schema;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists trails_org_created_idx`.execute(db);
  await sql`drop index if exists artifacts_filename_trgm_idx`.execute(db);
  await sql`drop index if exists environments_name_trgm_idx`.execute(db);
  await sql`drop index if exists trails_name_trgm_idx`.execute(db);
  await sql`drop index if exists flows_name_trgm_idx`.execute(db);
}
