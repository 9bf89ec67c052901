/**
 * Opens the database: embedded PGlite (a directory, or memory) when no URL is given,
 * PostgreSQL through `pg` otherwise. The same SQL runs on both.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Readable } from 'node:stream';
import { removeStaleStaging, streamDataDirBackup } from './backup-tar.js';
import {
  EMBEDDED_READ_PAGE_ROWS,
  EMBEDDED_STATEMENT_BYTES,
  EMBEDDED_UPDATE_ROWS,
  runtimeWrites,
} from './repositories/runtime.js';
import pg from 'pg';
import { setImmediate as turn } from 'node:timers/promises';
import { listenPglite, listenPostgres, type ChangeHandlers, type ChangeListener } from './change-listener.js';
import type { Database } from './database.js';
import { DatabaseTimeoutError } from './errors.js';
import { deallocateAll } from './pg-replan.js';

export type DialectName = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Closes the pool or the embedded database and releases its directory lock. */
  close(): Promise<void>;
  /**
   * Embedded only: a consistent tar of the whole database, which `loadDataDir` can start from;
   * streamed in constant memory when the database is in a directory.
   */
  dump?: () => Promise<Readable>;
  /** Follows committed changes (migration 0300) for in-process caches. */
  listen(handlers: ChangeHandlers): Promise<ChangeListener>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; when absent the embedded database is used. */
  databaseUrl?: string | undefined;
  /** Embedded database directory, or `memory://`. */
  dataDir?: string;
  poolMax?: number;
  /** PostgreSQL only: prepare repeated statements per connection (default true). */
  preparedStatements?: boolean;
  /** PostgreSQL only: a schema to use instead of `public` (tests). */
  searchPath?: string;
  /** Embedded only: start from a dump of another embedded database (tests start from a migrated one). */
  loadDataDir?: Blob;
  /**
   * PostgreSQL only: the server cancels any statement running longer (`statement_timeout`), and
   * the driver gives up on a connection that has not answered shortly after. Unset or 0: no bound
   * (migrations and admin jobs).
   */
  statementTimeoutMs?: number;
  /** PostgreSQL only: how long opening a connection, or waiting for a free one, may take. */
  connectTimeoutMs?: number;
}

/** Default bound on opening (or waiting for) a PostgreSQL connection. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long after the statement timeout a query may stay unanswered before its connection is
 * taken for dead: the server's own cancellation has had time to arrive by then.
 */
export const QUERY_DEADLINE_GRACE_MS = 2_000;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// Counts and sums come back as numbers on both dialects (pg's default is a string).
const toNumber = (v: string): number => Number(v);
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID || oid === NUMERIC_OID
      ? toNumber
      : (pg.types.getTypeParser(oid, format ?? 'text') as unknown)) as typeof pg.types.getTypeParser,
};

/** Statements a connection keeps prepared; beyond this, new texts run unprepared. */
export const MAX_PREPARED_PER_CONNECTION = 500;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * When a connection forgets its prepared statements so they are planned again: after the step's
 * number of executions or its time since the last planning, whichever comes first; the last step
 * repeats.
 */
export const REPLAN_AFTER_EXECUTIONS = [100, 1_000, 10_000, 100_000];
const REPLAN_AFTER_MS = [10_000, 60_000, 600_000];

/**
 * Runs repeated data statements as named prepared statements, so PostgreSQL plans each once per
 * connection instead of on every request (planning a join costs more than running it). The
 * names are hashes of the SQL text; a connection prepares at most MAX_PREPARED_PER_CONNECTION
 * distinct texts, so queries built with varying shapes cannot grow it without bound.
 *
 * PostgreSQL settles on a generic plan after a statement's fifth run, with the table sizes of
 * that moment: on a new installation, plans for empty tables (scanning a whole organization
 * where an index finds one trail). So a connection drops its statements and plans them again
 * as it ages (REPLAN_AFTER_EXECUTIONS, REPLAN_AFTER_MS), when the tables have grown.
 */
function preparePlans(client: pg.PoolClient, now: () => number = Date.now): void {
  // '' marks a text this connection runs unprepared from now on.
  const names = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let executions = 0;
  let step = 0;
  let plannedAt = now();
  const replanDue = () =>
    names.size > 0 &&
    (executions >= REPLAN_AFTER_EXECUTIONS[Math.min(step, REPLAN_AFTER_EXECUTIONS.length - 1)]! ||
      now() - plannedAt >= REPLAN_AFTER_MS[Math.min(step, REPLAN_AFTER_MS.length - 1)]!);
  /** Forgets every prepared statement, on the server and in the driver's own record of them. */
  const replan = async () => {
    await deallocateAll(client, (text) => query(text) as Promise<unknown>);
    names.clear();
    executions = 0;
    step += 1;
    plannedAt = now();
  };
  const run = (text: string, values: unknown[]) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_PER_CONNECTION) {
      name = `v_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    if (!name) {
      return query(text, values) as Promise<unknown>;
    }
    executions += 1;
    return (query({ name, text, values }) as Promise<unknown>).catch(async (err: unknown) => {
      // Another replica migrated a table under this prepared statement (a rolling upgrade):
      // PostgreSQL refuses its old row shape. Run the text unprepared on this connection from now
      // on; outside a transaction the retry answers, inside one the original error stands.
      if (!isStalePlan(err)) {
        throw err;
      }
      names.set(text, '');
      return (query(text, values) as Promise<unknown>).catch(() => {
        throw err;
      });
    });
  };
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
    text: unknown,
    values?: unknown,
    ...rest: unknown[]
  ) => {
    if (typeof text !== 'string' || !Array.isArray(values) || !PREPARABLE.test(text) || rest.length > 0) {
      return query(text, values, ...rest);
    }
    if (!replanDue()) {
      return run(text, values);
    }
    // In a failed transaction the deallocation fails too: the statements stay, and so does the due replan.
    return replan().then(
      () => run(text, values),
      () => run(text, values),
    );
  };
}

/** PostgreSQL's "cached plan must not change result type" (SQLSTATE 0A000). */
function isStalePlan(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { code?: unknown }).code === '0A000' &&
    /cached plan must not change result type/.test(String((err as { message?: unknown }).message))
  );
}

/**
 * Bounds every query of a connection: unanswered `deadlineMs` after it was sent, the connection
 * is taken for dead (a server gone without closing its sockets, a connection a firewall dropped
 * silently), its socket destroyed and the query failed with {@link DatabaseTimeoutError}. The
 * pool then discards the connection instead of handing it out again.
 */
function boundQueries(client: pg.PoolClient, deadlineMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (!(result instanceof Promise)) {
      return result;
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new DatabaseTimeoutError(deadlineMs);
        reject(err);
        destroyConnection(client);
      }, deadlineMs);
    });
    return Promise.race([result, deadline]).finally(() => clearTimeout(timer));
  };
}

/** Closes a connection's socket at once, without the goodbye a dead peer would never answer. */
export function destroyConnection(client: pg.Client | pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  stream?.destroy();
}

/**
 * The embedded database's buffer cache. Its WebAssembly memory grows to hold the buffers once they
 * fill and never shrinks, so PGlite's default (128 MB) stayed in the process for good after one
 * large report; the data files are still cached by the operating system. With 32 MB a 50,000-pod
 * rollout peaked about 100 MiB lower, no slower (`npm run bench -- limits`).
 */
const EMBEDDED_SHARED_BUFFERS = '32MB';

/**
 * The embedded database's statistics target. ANALYZE (storage/statistics.ts keeps statistics
 * there, as autovacuum would) runs on the API's thread and samples 300 rows per unit of the
 * target: at PostgreSQL's default, 100, analyzing a table of 100,000 instance details held every
 * other request for 670 ms on a slow core (150 ms with the JSON column left out), 65 ms at 10.
 * The embedded database's reads are key lookups, which ten histogram buckets plan as well.
 */
const EMBEDDED_STATISTICS_TARGET = '10';

/** The embedded database's bounds on a report's statements and pages (repositories/runtime.ts). */
const EMBEDDED_BOUNDS: typeof runtimeWrites = {
  statementBytes: EMBEDDED_STATEMENT_BYTES,
  updateRows: EMBEDDED_UPDATE_ROWS,
  readPageRows: EMBEDDED_READ_PAGE_ROWS,
};

/**
 * Binary values (evidence files, log hashes and keys) to and from the embedded database's text
 * form (`\x` and hex), with Node's native hex codec: PGlite's own converts byte by byte in
 * JavaScript, on the API's thread, about ten times slower. Storing a 2.2 MiB `evidence.tgz`
 * held every other request for 330 to 440 ms (40 to 46 ms this way), reading it back 138 ms (12
 * to 14 ms).
 */
const byteaToText = (v: Uint8Array): string => {
  if (!(v instanceof Uint8Array)) {
    throw new TypeError('a bytea parameter must be a Buffer or Uint8Array');
  }
  return `\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
};
const byteaFromText = (v: string): Buffer => Buffer.from(v.slice(2), 'hex');

/** How the embedded database's values are read and written: counts as numbers, bytea as above. */
const EMBEDDED_TYPES = {
  parsers: {
    [pgliteTypes.INT8]: (v: string) => Number(v),
    [NUMERIC_OID]: (v: string) => Number(v),
    [pgliteTypes.BYTEA]: byteaFromText,
  },
  serializers: { [pgliteTypes.BYTEA]: byteaToText },
};

const EMBEDDED_START_PARAMS = [
  ...PGlite.defaultStartParams,
  ...['-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  ...['-c', `default_statistics_target=${EMBEDDED_STATISTICS_TARGET}`],
];

/** Opens the configured database. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const statementTimeoutMs = options.statementTimeoutMs ?? 0;
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolMax ?? 10,
      types: pgTypes,
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      // A server that vanished (host down, connection dropped) is noticed on idle connections too.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
      ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    });
    // A connection that loses its server must not crash the process, idle (the pool's 'error')
    // or checked out between two queries (the client's own 'error', which pg emits with no
    // listener attached while a connection is lent): the query in flight fails, the pool
    // discards the connection on release, and the next request opens a new one.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
      if (statementTimeoutMs > 0) {
        boundQueries(client, statementTimeoutMs + QUERY_DEADLINE_GRACE_MS);
      }
    });
    if (options.preparedStatements !== false) {
      pool.on('connect', (client) => preparePlans(client));
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const databaseUrl = options.databaseUrl;
    return {
      db,
      dialect: 'postgres',
      close: () => db.destroy(),
      listen: async (handlers) =>
        listenPostgres(
          {
            connectionString: databaseUrl,
            searchPath: options.searchPath,
            connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
          },
          handlers,
        ),
    };
  }

  const dataDir = options.dataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  let release = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    release = lockDirectory(dataDir);
    removeStaleStaging(dataDir);
  }
  try {
    const client = await PGlite.create({
      ...(inMemory ? {} : { dataDir: resolve(dataDir) }),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      // Trigram indexes of the name search (migration 0415).
      extensions: { pg_trgm },
      startParams: EMBEDDED_START_PARAMS,
      ...EMBEDDED_TYPES,
    });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(yieldingEachStatement(client)) });
    Object.assign(runtimeWrites, EMBEDDED_BOUNDS);
    return {
      db,
      dialect: 'pglite',
      dump: inMemory
        ? async () => Readable.fromWeb((await client.dumpDataDir('none')).stream())
        : async () => streamDataDirBackup(client, resolve(dataDir)),
      listen: (handlers) => listenPglite(client, handlers),
      close: async () => {
        try {
          await db.destroy();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * PGlite runs a statement on this thread and answers in a microtask, so a transaction of
 * thousands of statements (a 50,000-pod report) would hold every other request, `/healthz`
 * included, for its whole length. Each statement first lets the event loop turn once: the
 * longest wait of another request becomes one statement, which the repositories bound in rows.
 */
function yieldingEachStatement(client: PGlite): PGlite {
  const query = async (...args: Parameters<PGlite['query']>) => {
    await turn();
    return client.query(...args);
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') {
        return query;
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The embedded database is one process's: a second process on the same directory would corrupt it.
 * A lock file holds the owner's pid; a stale one (dead pid) is taken over.
 */
export function lockDirectory(dir: string): () => void {
  const path = join(dir, '.verity.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(
          `The embedded database in '${dir}' is in use by process ${owner}. Stop it first, or set DATABASE_URL to use PostgreSQL.`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`Could not lock the embedded database directory '${dir}'`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
