/**
 * A trail's evidence (attestations, trail events, trail facts) always names a trail that exists,
 * checked once per statement (migration 0305): a row naming a missing trail fails its whole
 * statement with SQLSTATE 23503 and writes nothing, on insert and on update; deleting a trail
 * deletes its evidence. Each row is checked by the trail's key, whether or not the trails table
 * was analyzed since it grew (storage/statistics.ts, where no autovacuum does it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { rowsRead } from '../helpers/table-reads.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { analyzeChangedTables } from '../../services/api/src/storage/statistics.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let ids: { org: string; flow: string; trail: string };

const attest = (trail: string, name: string) =>
  cli.multipart('POST', `/api/v2/attestations/acme/refs/trail/${trail}/generic`, [
    { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
  ]);

async function trailIds(name: string) {
  return (
    await sql<{ org: string; flow: string; trail: string }>`
      select t.org_id as org, t.flow_id as flow, t.id as trail from trails t where t.name = ${name}`.execute(
      t.db.db,
    )
  ).rows[0]!;
}

const count = async (table: 'attestations' | 'trail_events' | 'trail_facts', trailId: string) =>
  (
    await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(table)} where trail_id = ${trailId}`.execute(t.db.db)
  ).rows[0]!.n;

/** The SQLSTATE a statement fails with. */
async function sqlState(statement: Promise<unknown>): Promise<string | undefined> {
  try {
    await statement;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

const attestationRow = (id: string, trailId: string) => sql`(${ids.org}, ${id}, ${ids.flow}, ${trailId},
  'lint', 'generic', 'generic', true, '{}'::jsonb, '', '', 'test', now())`;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'refs', description: '' })).status).toBe(201);
  for (const name of ['kept', 'doomed']) {
    expect((await cli.json('PUT', '/api/v2/trails/acme/refs', { name })).status).toBe(201);
  }
  for (const trail of ['kept', 'doomed']) {
    expect((await attest(trail, 'lint')).status).toBe(201);
  }
  // Reports store a trail's facts only once every few (FACTS_WRITTEN_EVERY): these have some.
  await sql`insert into trail_facts (org_id, trail_id, last_id, facts)
    select org_id, id, null, '[]'::jsonb from trails where name in ('kept', 'doomed')`.execute(t.db.db);
  ids = await trailIds('kept');
});
afterAll(async () => t?.close());

describe('references from evidence to its trail', () => {
  it('refuses an insert naming a missing trail, with every row of its statement', async () => {
    const before = await count('attestations', ids.trail);
    const state = await sqlState(
      sql`insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant, payload,
          description, origin_url, created_by, created_at)
        values ${attestationRow('ref-good', ids.trail)}, ${attestationRow('ref-bad', 'no-such-trail')}`.execute(
        t.db.db,
      ),
    );
    expect(state).toBe('23503');
    expect(await count('attestations', ids.trail)).toBe(before);
    expect(
      await sqlState(
        sql`insert into trail_events (org_id, trail_id, type, occurred_at, data)
          values (${ids.org}, 'no-such-trail', 'trail_attestation_reported', now(), '{}'::jsonb)`.execute(
          t.db.db,
        ),
      ),
    ).toBe('23503');
    expect(
      await sqlState(
        sql`insert into trail_facts (org_id, trail_id, last_id, facts)
          values (${ids.org}, 'no-such-trail', null, '[]'::jsonb)`.execute(t.db.db),
      ),
    ).toBe('23503');
  });

  it('refuses an update that moves evidence to a missing trail', async () => {
    for (const table of ['attestations', 'trail_events', 'trail_facts'] as const) {
      expect(
        await sqlState(
          sql`update ${sql.table(table)} set trail_id = 'no-such-trail' where trail_id = ${ids.trail}`.execute(
            t.db.db,
          ),
        ),
      ).toBe('23503');
      expect(await count(table, ids.trail)).toBeGreaterThan(0);
    }
  });

  it('still takes evidence for trails that exist', async () => {
    expect((await attest('kept', 'after-checks')).status).toBe(201);
    const shown = (await cli.get('/api/v2/trails/acme/refs/kept')).json as {
      compliance_status: { attestations_statuses: Array<{ attestation_name: string }> };
    };
    expect(shown.compliance_status.attestations_statuses.map((s) => s.attestation_name)).toEqual([
      'lint',
      'after-checks',
    ]);
  });

  /**
   * Rows of trails read to check `events` trail events to trails `<prefix>-1..events`, after this
   * session checked a row while the organization held a few trails, analyzed as such, and the
   * organization then grew by 3,000; `analyze` says whether the table is analyzed again after.
   */
  async function readsAfterGrowth(prefix: string, events: number, analyze: boolean): Promise<number> {
    return t.db.db.connection().execute(async (c) => {
      await sql`analyze trails`.execute(c);
      await sql`insert into trail_events (org_id, trail_id, type, occurred_at, data)
        values (${ids.org}, ${ids.trail}, 'test_event', now(), '{}'::jsonb)`.execute(c);
      await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
          compliance, compliance_state, evaluated_at)
        select ${ids.org}, ${prefix} || '-' || i, ${ids.flow}, ${prefix} || '-' || i, 'test', now(), now(),
          '{}'::jsonb, 'INCOMPLETE', now()
        from generate_series(1, 3000) i`.execute(c);
      await sql`select pg_stat_force_next_flush()`.execute(c);
      if (analyze) {
        expect(await analyzeChangedTables(c)).toContain('trails');
      }
      const before = await rowsRead(c, 'trails');
      await sql`insert into trail_events (org_id, trail_id, type, occurred_at, data)
        select ${ids.org}, ${prefix} || '-' || i, 'test_event', now(), '{}'::jsonb
        from generate_series(1, ${events}::int) i`.execute(c);
      return (await rowsRead(c, 'trails')) - before;
    });
  }

  it('checks rows by trail key once the grown trails table is analyzed', async () => {
    // One entry per row checked, not the organization's trails for each.
    expect(await readsAfterGrowth('grown', 200, true)).toBeLessThanOrEqual(2 * 200);
    expect(
      await sqlState(
        sql`insert into trail_events (org_id, trail_id, type, occurred_at, data)
          select ${ids.org}, 'grown-' || i, 'test_event', now(), '{}'::jsonb from generate_series(2999, 3001) i`.execute(
          t.db.db,
        ),
      ),
    ).toBe('23503');
    await sql`delete from trails where id like 'grown-%'`.execute(t.db.db);
  });

  it('checks rows by trail key before the grown trails table is analyzed', async () => {
    // The check's plan is made for the table as it is now, not kept from when it was small
    // (migration 0381): a new organization's first minutes, before any statistics.
    expect(await readsAfterGrowth('young', 200, false)).toBeLessThanOrEqual(2 * 200);
    await sql`delete from trails where id like 'young-%'`.execute(t.db.db);
  });

  it("deletes a trail's evidence with the trail", async () => {
    const doomed = await trailIds('doomed');
    for (const table of ['attestations', 'trail_events', 'trail_facts'] as const) {
      expect(await count(table, doomed.trail)).toBeGreaterThan(0);
    }
    await sql`delete from trails where id = ${doomed.trail}`.execute(t.db.db);
    for (const table of ['attestations', 'trail_events', 'trail_facts'] as const) {
      expect(await count(table, doomed.trail)).toBe(0);
    }
    expect(await count('attestations', ids.trail)).toBeGreaterThan(0);
  });
});
