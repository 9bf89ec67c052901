/** What a benchmark file exports, and helpers to run the real API for one. */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../services/api/src/app.js';
import { loadConfig } from '../services/api/src/config.js';
import { openDatabase, type DatabaseHandle } from '../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../services/api/src/storage/migrate.js';
import { ensureBootstrap } from '../services/api/src/usecases/access/bootstrap.js';

/** One printed figure: a measured value, and when it has one, its target and verdict. */
export interface BenchFigure {
  name: string;
  /** Printed as given, e.g. "0.62 (6,200 vs 10,000 req/s)". */
  value: string;
  target?: string;
  pass?: boolean;
}

export interface BenchContext {
  log(line: string): void;
}

export interface BenchModule {
  default(ctx: BenchContext): Promise<BenchFigure[]>;
}

export const BENCH_DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A private schema on the benchmark PostgreSQL server, dropped by `drop`. */
export async function benchSchema(): Promise<{ url: string; schema: string; drop(): Promise<void> }> {
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  return {
    url: BENCH_DATABASE_URL,
    schema,
    async drop() {
      const c = new pg.Client({ connectionString: BENCH_DATABASE_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  org: string;
  key: string;
  db: DatabaseHandle;
  close(): Promise<void>;
}

/** Starts the real API on PostgreSQL (a private schema) or PGlite, listening on a free port. */
export async function startApi(options: {
  postgres: boolean;
  poolMax?: number;
  /** Settings on top of the quiet, unlimited defaults (e.g. `VERITY_READ_CACHE_ENTRIES: '0'`). */
  env?: Record<string, string>;
}): Promise<RunningApi> {
  const schema = options.postgres ? await benchSchema() : undefined;
  const db = schema
    ? await openDatabase({
        databaseUrl: schema.url,
        searchPath: schema.schema,
        poolMax: options.poolMax ?? 20,
      })
    : await openDatabase({ dataDir: 'memory://' });
  await migrateToLatest(db);
  const key = `bench-key-${randomBytes(16).toString('hex')}`;
  await ensureBootstrap(db.db, { orgName: 'bench', apiKey: key, now: new Date() });
  const config = loadConfig({ LOG_LEVEL: 'silent', VERITY_RATE_LIMIT_PER_MINUTE: '0', ...options.env });
  const app = await buildApp({ config, database: db, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    app,
    url,
    org: 'bench',
    key,
    db,
    async close() {
      await app.close();
      await db.close();
      await schema?.drop();
    },
  };
}
