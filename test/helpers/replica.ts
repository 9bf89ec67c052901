/**
 * Another replica of the app on the test app's database (PostgreSQL only): its own pool on the
 * same schema, as another process would have, closed after `run`.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { testConfig, type TestApp } from './app.js';
import { TEST_DATABASE_URL } from './database.js';

export async function withReplica(
  t: TestApp,
  run: (replica: FastifyInstance) => Promise<void>,
): Promise<void> {
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.db.db)).rows[0]!.s;
  const replicaDb = await openDatabase({ databaseUrl: TEST_DATABASE_URL, searchPath: schema, poolMax: 4 });
  const replica = await buildApp({ config: testConfig(), database: replicaDb, logger: false });
  try {
    await replica.ready();
    await run(replica);
  } finally {
    await replica.close();
    await replicaDb.close();
  }
}
