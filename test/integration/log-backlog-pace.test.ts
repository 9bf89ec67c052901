/**
 * The transparency log taking a backlog on the embedded database: its rounds hold the one
 * connection, so it takes the backlog in batches of 500 and rests between them, and a reader
 * asking meanwhile is answered before the log has caught up. (PostgreSQL takes it at full speed:
 * its rounds hold one connection of a pool, and the other tests of the log run there.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const BACKLOG = 1_400;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme'));
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'backlog', description: '' })).status).toBe(
    201,
  );
  await t.app.transparencyLog.sequence();
});
afterAll(async () => t?.close());

const logSize = async () =>
  (
    await sql<{ n: number }>`select h.size::int as n from log_heads h join orgs o on o.id = h.org_id
      where o.name = 'acme'`.execute(t.db.db)
  ).rows[0]!.n;

describe('a backlog of log records', () => {
  it('lets a reader through before it has caught up, on the embedded database', async (ctx) => {
    if (t.db.dialect !== 'pglite') {
      ctx.skip();
    }
    const before = await logSize();
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select f.org_id, 'bl-' || i, f.id, 'build-' || i, 'test', now(), now(), '{}'::jsonb, 'INCOMPLETE', now()
      from flows f, generate_series(1, ${BACKLOG}::int) i where f.name = 'backlog'`.execute(t.db.db);
    const sequencing = t.app.transparencyLog.sequence();
    // The first round has begun; the reader's queries wait for it, then run while the log rests.
    await new Promise((r) => setImmediate(r));
    const r = await cli.get('/api/v2/trails/acme/backlog?per_page=5');
    expect(r.status, r.body).toBe(200);
    // The log has not caught up yet when the reader has its answer.
    expect(await logSize()).toBeLessThan(before + BACKLOG);
    await sequencing;
    expect(await logSize()).toBe(before + BACKLOG);
  });
});
