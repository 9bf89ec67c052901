/**
 * The evidence change log (migration 0302, storage/change-feed.ts): every committed write to an
 * evidence table, whoever made it, reaches every replica's feed once; a transaction that commits
 * after a younger one is not missed; read rows are deleted after the retention; a feed that
 * cannot read is unhealthy and starts over when it can again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { startChangeFeed, type ChangeFeed } from '../../services/api/src/storage/change-feed.js';
import {
  createTestDatabase,
  onPostgres,
  TEST_DATABASE_URL,
  underMigrationLock,
} from '../helpers/database.js';

let handle: DatabaseHandle;
let feeds: ChangeFeed[] = [];

beforeAll(async () => {
  handle = await createTestDatabase();
  await sql`insert into orgs (id, name, display_name) values ('o1', 'acme', 'Acme'), ('o2', 'globex', 'Globex')`.execute(
    handle.db,
  );
});
afterEach(async () => {
  await Promise.all(feeds.map((f) => f.close()));
  feeds = [];
});
afterAll(async () => handle?.close());

/** A feed polled by hand (a long interval keeps its own polls out of the way). */
function feed(options: { retentionMs?: number; now?: () => number } = {}) {
  const changes: string[] = [];
  let resets = 0;
  const errors: Error[] = [];
  const f = startChangeFeed(handle.db, {
    intervalMs: 60_000,
    staleAfterMs: 60_000,
    ...options,
    onChange: (org) => changes.push(org),
    onReset: () => (resets += 1),
    onError: (err) => errors.push(err),
  });
  feeds.push(f);
  return {
    f,
    changes,
    errors,
    get resets() {
      return resets;
    },
  };
}

const createFlow = (org: string, name: string) =>
  sql`insert into flows (org_id, id, name, description, visibility, created_by, created_at, last_modified_at)
      values (${org}, ${`${org}-${name}`}, ${name}, '', 'private', 'test', now(), now())`.execute(handle.db);

describe('evidence change log', () => {
  it('reports each committed write once, by organization, to every feed', async () => {
    const a = feed();
    const b = feed();
    await a.f.poll();
    await b.f.poll();
    expect(a.resets).toBe(1);
    await createFlow('o1', 'web');
    await createFlow('o2', 'api');
    await a.f.poll();
    await b.f.poll();
    expect(a.changes.sort()).toEqual(['o1', 'o2']);
    expect(b.changes.sort()).toEqual(['o1', 'o2']);
    await a.f.poll();
    expect(a.changes).toHaveLength(2);
    expect(a.f.healthy).toBe(true);
  });

  it('records one row per transaction and organization, however many rows it wrote', async () => {
    const a = feed();
    await a.f.poll();
    await handle.db.transaction().execute(async (trx) => {
      await sql`update flows set description = 'x' where org_id = 'o1'`.execute(trx);
      await sql`update flows set description = 'y' where org_id = 'o1'`.execute(trx);
    });
    await a.f.poll();
    expect(a.changes).toEqual(['o1']);
  });

  it('deletes rows once every feed has had the retention period to read them', async () => {
    let clock = 1_000_000;
    const a = feed({ retentionMs: 1_000, now: () => clock });
    await a.f.poll();
    await createFlow('o1', 'retained');
    await a.f.poll();
    expect(a.changes).toEqual(['o1']);
    const count = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from evidence_changes`.execute(handle.db)).rows[0]!
        .n;
    expect(await count()).toBeGreaterThan(0);
    // Deleted once the oldest running transaction anywhere on the server (other tests' too) is
    // younger than the row, and a retention period has passed since.
    await expect
      .poll(
        async () => {
          clock += 1_500;
          await a.f.poll();
          return count();
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(0);
    expect(a.changes).toEqual(['o1']);
  });

  it('is unhealthy while it cannot read, and starts over when it can', async () => {
    let clock = 2_000_000;
    const a = feed({ now: () => clock });
    await a.f.poll();
    expect(a.f.healthy).toBe(true);
    await underMigrationLock(handle.db, sql`alter table evidence_changes rename to evidence_changes_away`);
    try {
      clock += 61_000;
      await a.f.poll();
      expect(a.errors.length).toBeGreaterThan(0);
      expect(a.f.healthy).toBe(false);
    } finally {
      await underMigrationLock(handle.db, sql`alter table evidence_changes_away rename to evidence_changes`);
    }
    await a.f.poll();
    expect(a.f.healthy).toBe(true);
    expect(a.resets).toBe(2);
  });

  it.runIf(onPostgres)('does not miss a transaction that commits after a younger one', async () => {
    const a = feed();
    await a.f.poll();
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(handle.db)).rows[0]!.s;
    const older = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` });
    await older.connect();
    try {
      await older.query('begin');
      await older.query(`update flows set description = 'older' where org_id = 'o2'`);
      // A younger transaction commits first, and the feed reads it.
      await sql`update flows set description = 'younger' where org_id = 'o1'`.execute(handle.db);
      await a.f.poll();
      expect(a.changes).toEqual(['o1']);
      await older.query('commit');
      await a.f.poll();
      expect(a.changes).toEqual(['o1', 'o2']);
    } finally {
      await older.end();
    }
  });
});
