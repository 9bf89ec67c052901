/**
 * With its PostgreSQL server unreachable the API answers 503 with a message and Retry-After
 * (never a 500), its readiness probe says so and its liveness probe does not; a statement over
 * the statement timeout is cancelled by the server and answers 503 too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { createServer } from 'node:net';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { isDatabaseUnavailable } from '../../services/api/src/storage/errors.js';
import { testConfig } from '../helpers/app.js';
import { TEST_DATABASE_URL, onPostgres } from '../helpers/database.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('PostgreSQL unreachable', () => {
  let handle: DatabaseHandle;
  let app: FastifyInstance;
  beforeAll(async () => {
    handle = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/verity`,
      connectTimeoutMs: 1_000,
    });
    app = await buildApp({ config: testConfig(), database: handle, logger: false });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await handle?.close();
  });

  it('answers 503 with a message and Retry-After, readiness 503, liveness 200', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/api/v2/environments/acme',
      headers: { authorization: 'Bearer vty_anything-at-all-0123456789' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ message: expect.stringMatching(/database/i) });
    expect(res.headers['retry-after']).toBe('5');
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe.skipIf(!onPostgres)('the statement timeout', () => {
  it('cancels a statement that runs longer, as a database-unavailable error', async () => {
    const handle = await openDatabase({
      databaseUrl: TEST_DATABASE_URL,
      statementTimeoutMs: 200,
      poolMax: 1,
    });
    try {
      expect(
        (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(handle.db)).rows[0]!
          .statement_timeout,
      ).toBe('200ms');
      const err = await sql`select pg_sleep(2)`.execute(handle.db).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as { code?: string }).code).toBe('57014');
      expect(isDatabaseUnavailable(err)).toBe(true);
      // The connection is still good for the next statement.
      expect((await sql<{ one: number }>`select 1 as one`.execute(handle.db)).rows[0]!.one).toBe(1);
    } finally {
      await handle.close();
    }
  });
});
