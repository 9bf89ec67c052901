/**
 * The name search's trigram indexes (migration 0415) need `pg_trgm`, which the database's owner
 * may create. Run by a role that may not, the migration stops with what to do, and once the
 * extension exists the same start migrates. PostgreSQL only: the embedded database loads the
 * extension itself.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../../services/api/src/storage/migrate.js';
import { migrations } from '../../services/api/src/storage/migrations/index.js';
import { adminQuery, onPostgres, TEST_DATABASE_URL } from '../helpers/database.js';

const suffix = randomBytes(4).toString('hex');
const database = `verity_trgm_${suffix}`;
const role = `verity_trgm_${suffix}`;

const urlOf = (user: string, db: string) => {
  const u = new URL(TEST_DATABASE_URL!);
  u.username = user;
  u.password = '';
  u.pathname = `/${db}`;
  return u.toString();
};

describe.skipIf(!onPostgres)('a database where Verity may not create pg_trgm', () => {
  beforeAll(async () => {
    await adminQuery(`create role ${role} login`);
    await adminQuery(`create database ${database}`);
    // The role owns a schema of its own, but may not create extensions in the database.
    const admin = urlOf(new URL(TEST_DATABASE_URL!).username || 'postgres', database);
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(`revoke create on database ${database} from public`);
      await client.query(`create schema verity authorization ${role}`);
      await client.query(`alter role ${role} in database ${database} set search_path = verity`);
    } finally {
      await client.end();
    }
  });

  afterAll(async () => {
    await adminQuery(`drop database if exists ${database} with (force)`);
    await adminQuery(`drop role if exists ${role}`);
  });

  it('stops at the trigram migration saying what to run, and migrates once the extension exists', async () => {
    const handle = await openDatabase({ databaseUrl: urlOf(role, database) });
    try {
      const failed = await migrateToLatest(handle).then(
        () => null,
        (err: unknown) => err as Error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(failed!.message).toContain('0415_name_search_trigrams');
      expect(failed!.message).toContain("Run 'CREATE EXTENSION pg_trgm' in this database as its owner");

      const { default: pg } = await import('pg');
      const owner = new pg.Client({
        connectionString: urlOf(new URL(TEST_DATABASE_URL!).username || 'postgres', database),
      });
      await owner.connect();
      try {
        await owner.query('create extension pg_trgm with schema public');
      } finally {
        await owner.end();
      }
      // The failed start applied nothing (the migrations run in one transaction): all of them now.
      const applied = await migrateToLatest(handle);
      expect(applied[0]).toBe('0001_identity');
      expect(applied).toContain('0415_name_search_trigrams');
      expect(applied).toEqual(Object.keys(migrations));
    } finally {
      await handle.close();
    }
  });
});
