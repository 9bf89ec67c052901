/**
 * Applies the static migration list on start. On PostgreSQL an advisory lock makes replicas
 * that start together take turns: the first migrates, the rest find nothing to do.
 */
import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely';
import type { DatabaseHandle } from './create-db.js';
import { syncLogTriggers } from './log-triggers.js';
import { migrations } from './migrations/index.js';

/** An arbitrary constant naming Verity's migration lock among the server's advisory locks. */
export const MIGRATION_LOCK_KEY = 7_166_145_238_041;

/**
 * Migrates to the latest version, then installs the transparency log's triggers (or removes them
 * with `transparencyLog: false`); returns the migrations this call applied.
 */
export async function migrateToLatest(
  handle: DatabaseHandle,
  options: { transparencyLog?: boolean } = {},
): Promise<string[]> {
  // Kysely finds its bookkeeping tables by name across schemas; naming ours keeps it in this one.
  const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]
    ?.schema;
  const run = async () => {
    const migrator = new Migrator({
      db: handle.db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r: MigrationResult) => r.status === 'Error');
      throw new Error(
        `Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
        { cause: error },
      );
    }
    await syncLogTriggers(handle.db as unknown as Kysely<unknown>, options.transparencyLog ?? true);
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  // PGlite is one connection in one process; there is nobody to race.
  if (handle.dialect === 'pglite') {
    return run();
  }
  return handle.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      return await run();
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
    }
  });
}
