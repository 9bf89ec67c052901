/**
 * Opens the database: embedded PGlite (a directory, or memory) when no URL is given,
 * PostgreSQL through `pg` otherwise. The same SQL runs on both.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database } from './database.js';

export type DialectName = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Closes the pool or the embedded database and releases its directory lock. */
  close(): Promise<void>;
  /** Embedded only: a dump of the whole database, which `loadDataDir` can start from. */
  dump?: () => Promise<Blob>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; when absent the embedded database is used. */
  databaseUrl?: string | undefined;
  /** Embedded database directory, or `memory://`. */
  dataDir?: string;
  poolMax?: number;
  /** PostgreSQL only: a schema to use instead of `public` (tests). */
  searchPath?: string;
  /** Embedded only: start from a dump of another embedded database (tests start from a migrated one). */
  loadDataDir?: Blob;
}

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

/** Opens the configured database. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolMax ?? 10,
      types: pgTypes,
      ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    });
    // An idle client that loses its server must not crash the process.
    pool.on('error', () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }

  const dataDir = options.dataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  let release = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    release = lockDirectory(dataDir);
  }
  try {
    const client = await PGlite.create({
      ...(inMemory ? {} : { dataDir: resolve(dataDir) }),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      parsers: { [pgliteTypes.INT8]: (v: string) => Number(v), [NUMERIC_OID]: (v: string) => Number(v) },
    });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
    return {
      db,
      dialect: 'pglite',
      dump: async () => await client.dumpDataDir('none'),
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
 * The embedded database is one process's: a second process on the same directory would corrupt it.
 * A lock file holds the owner's pid; a stale one (dead pid) is taken over.
 */
function lockDirectory(dir: string): () => void {
  const path = join(dir, '.verity.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
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
