/**
 * A deep page of a long listing reads what it shows: the artifacts of a flow of 3,000, 100 a
 * page, newest first, join their trails' and flow's names for the page's rows only, not for the
 * 2,900 artifacts of the pages before it. The trails listing pages the same way, and both show
 * every row once across their pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { rowsRead } from '../helpers/table-reads.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const FLOW = 'long';
const COUNT = 3_000;
const PER_PAGE = 100;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

/** Rows of trails read so far, on a connection of the test's own. */
const trailReads = () => t.db.db.connection().execute((c) => rowsRead(c, 'trails'));

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme'));
  expect((await cli.json('PUT', `/api/v2/flows/acme`, { name: FLOW, description: '' })).status).toBe(201);
  // Trail i holds artifact i, made i seconds after the first: the newest is number 3,000.
  await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
      compliance, compliance_state, evaluated_at)
    select f.org_id, 'lt-' || i, f.id, 'build-' || i, 'test', timestamptz '2026-01-01' + i * interval '1 second',
      now(), '{}'::jsonb, 'INCOMPLETE', now()
    from flows f, generate_series(1, ${COUNT}::int) i where f.name = ${FLOW}`.execute(t.db.db);
  await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, created_by, created_at,
      last_modified_at, state, compliance)
    select f.org_id, 'la-' || i, f.id, 'lt-' || i, lpad(to_hex(i), 64, '0'), 'service:1.' || i, 'test',
      timestamptz '2026-01-01' + i * interval '1 second', now(), 'INCOMPLETE', '{}'::jsonb
    from flows f, generate_series(1, ${COUNT}::int) i where f.name = ${FLOW}`.execute(t.db.db);
  await sql`analyze trails, artifacts`.execute(t.db.db);
});
afterAll(async () => t?.close());

/** The numbers (`service:1.<n>`, `build-<n>`) a page shows, in order. */
const numbers = (names: string[]) => names.map((n) => Number(n.split(/[.-]/).pop()));

describe('a deep page of a long listing', () => {
  it('lists the artifacts of its page, joining names for those alone', async () => {
    const page = 28;
    const before = await trailReads();
    const r = await cli.get(`/api/v2/artifacts/acme?flow_name=${FLOW}&per_page=${PER_PAGE}&page=${page}`);
    const read = (await trailReads()) - before;
    expect(r.status, r.body).toBe(200);
    const rows = r.json as Array<{ filename: string; trail_name: string; flow_name: string }>;
    // Newest first: page 28 holds numbers 300 down to 201.
    const first = COUNT - (page - 1) * PER_PAGE;
    expect(numbers(rows.map((a) => a.filename))).toEqual(
      Array.from({ length: PER_PAGE }, (_, i) => first - i),
    );
    expect(numbers(rows.map((a) => a.trail_name))).toEqual(numbers(rows.map((a) => a.filename)));
    expect(new Set(rows.map((a) => a.flow_name))).toEqual(new Set([FLOW]));
    // The 100 trails of the page (and what presenting them reads), not the 2,800 before them.
    expect(read).toBeLessThan(300);
  });

  it('shows every artifact once across its pages', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= COUNT / PER_PAGE + 1; page++) {
      const r = await cli.get(`/api/v2/artifacts/acme?flow_name=${FLOW}&per_page=${PER_PAGE}&page=${page}`);
      expect(r.status, r.body).toBe(200);
      seen.push(...numbers((r.json as Array<{ filename: string }>).map((a) => a.filename)));
    }
    expect(seen).toEqual(Array.from({ length: COUNT }, (_, i) => COUNT - i));
  });

  it('lists the trails of a deep page, with the count of them all', async () => {
    const r = await cli.get(`/api/v2/trails/acme/${FLOW}?per_page=${PER_PAGE}&page=30`);
    expect(r.status, r.body).toBe(200);
    const body = r.json as { data: Array<{ name: string }>; pagination: Record<string, number> };
    expect(numbers(body.data.map((d) => d.name))).toEqual(
      Array.from({ length: PER_PAGE }, (_, i) => 100 - i),
    );
    expect(body.pagination).toEqual({ total: COUNT, page: 30, per_page: PER_PAGE, page_count: 30 });
  });
});
