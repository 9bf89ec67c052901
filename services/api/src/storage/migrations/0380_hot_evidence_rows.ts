/**
 * The rows every attestation rewrites, kept cheap to rewrite:
 * - an artifact's row is rewritten by each attestation to its trail (its state and compliance).
 *   Its pages were filled to the brim, so most new versions found no room on their page: the
 *   update then wrote a new entry in each of the table's six indexes (and later cleaned them up)
 *   instead of a heap-only tuple. Half of each new page is now left free for them;
 * - compliance documents (an artifact's, a trail's) and trail facts are compressed with lz4 where
 *   the server has it, not pglz: they are compressed again on every rewrite.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

const COMPRESSED = [
  ['artifacts', 'compliance'],
  ['trails', 'compliance'],
  ['trail_facts', 'facts'],
] as const;

async function hasLz4(db: Kysely<unknown>): Promise<boolean> {
  const r = await sql<{ lz4: boolean }>`
    select coalesce((select 'lz4' = any(enumvals) from pg_settings
      where name = 'default_toast_compression'), false) as lz4`.execute(db);
  return r.rows[0]?.lz4 === true;
}

async function compress(db: Kysely<unknown>, method: 'lz4' | 'default'): Promise<void> {
  for (const [table, column] of COMPRESSED) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set compression ${sql.raw(method)}`.execute(
      db,
    );
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table artifacts set (fillfactor = 50)`.execute(db);
  if (await hasLz4(db)) {
    await compress(db, 'lz4');
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table artifacts reset (fillfactor)`.execute(db);
  await compress(db, 'default');
}
