/**
 * A fresh, migrated database per test file: PGlite in memory by default, or a private schema on
 * the PostgreSQL server named by TEST_DATABASE_URL (dropped again on close).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { MIGRATION_LOCK_KEY, migrateToLatest } from '../../services/api/src/storage/migrate.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = TEST_DATABASE_URL !== undefined;

/** Runs SQL on the test server outside any test schema. */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Drops a test schema under the migration lock: a migration elsewhere introspects every schema,
 * and a schema dropped under its feet fails it with "relation ... does not exist".
 */
export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(
    `begin; select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}); drop schema if exists ${schema} cascade; commit`,
  );
}

/**
 * Runs DDL on a test's own tables under the migration lock, for the same reason as `dropSchema`:
 * a table renamed while another file's migration introspects fails that migration.
 */
export async function underMigrationLock<DB>(db: Kysely<DB>, ddl: RawBuilder<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (onPostgres) {
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    }
    await ddl.execute(trx);
  });
}

/** A new private schema name. */
export function newSchemaName(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

let template: Blob | undefined;
function templateBlob(): Blob {
  template ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
  return template;
}

/** Opens a database for one test file; `migrate: false` leaves it empty. */
export async function createTestDatabase(
  options: { migrate?: boolean; poolMax?: number } = {},
): Promise<DatabaseHandle> {
  let handle: DatabaseHandle;
  if (TEST_DATABASE_URL) {
    const schema = newSchemaName();
    await adminQuery(`create schema ${schema}`);
    const inner = await openDatabase({
      databaseUrl: TEST_DATABASE_URL,
      searchPath: schema,
      poolMax: options.poolMax ?? 10,
    });
    handle = {
      ...inner,
      close: async () => {
        await inner.close();
        await dropSchema(schema);
      },
    };
  } else if (options.migrate !== false) {
    // Start from the migrated template the global setup dumped; migrating again is then a no-op.
    handle = await openDatabase({ dataDir: 'memory://', loadDataDir: templateBlob() });
  } else {
    handle = await openDatabase({ dataDir: 'memory://' });
  }
  if (options.migrate !== false) {
    await migrateToLatest(handle);
  }
  return handle;
}
