/** Questions about the database itself, not about any one table's rows. */
import { sql } from 'kysely';
import type { Db } from './database.js';

/** A trivial query: resolves when the database answers. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** How many organizations and applied migrations a database holds (a restore checks both). */
export async function countOrgsAndMigrations(db: Db): Promise<{ organizations: number; migrations: number }> {
  const orgs = await sql<{ n: number }>`select count(*)::int as n from orgs`.execute(db);
  const migrations = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db);
  return { organizations: orgs.rows[0]?.n ?? 0, migrations: migrations.rows[0]?.n ?? 0 };
}
