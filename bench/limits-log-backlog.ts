/**
 * The transparency log catching up on a backlog, on the embedded database: BENCH_BACKLOG records
 * (default 100,000 trails, seeded in SQL in statements of 10,000, each queued by the log's
 * trigger as any write is) are integrated by the sequencer while a reader asks for a page of
 * trails every 100 ms and `/healthz` is asked every 50 ms. A backlog comes from a burst of
 * ingest, a retention run (each removal is an entry), or the first start of a version with the
 * log over an existing database. Prints how long the log took to catch up, and the readers'
 * median and longest answers meanwhile, and the event loop's longest block: on the embedded
 * database every statement, the sequencer's included, runs on the API's thread, and one
 * transaction holds the database. `BENCH_BACKLOG_NOTIFIER=false` turns the background workers
 * (table statistics among them) off.
 *
 * Run: `npx tsx bench/limits-log-backlog.ts`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { startApi } from './harness.js';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000);

const api = await startApi({
  postgres: false,
  env: {
    VERITY_READ_CACHE_ENTRIES: '0',
    ...(process.env.BENCH_BACKLOG_NOTIFIER === 'false' ? { VERITY_NOTIFIER_ENABLED: 'false' } : {}),
  },
});
const db = api.db.db;
const auth = { authorization: `Bearer ${api.key}` };
const ms = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(0)} ms, longest ${s[s.length - 1]!.toFixed(0)} ms (${s.length} answers)`;
};
try {
  const org = (await sql<{ id: string }>`select id from orgs where name = ${api.org}`.execute(db)).rows[0]!
    .id;
  const at = new Date('2026-01-01T00:00:00Z');
  await sql`insert into flows (org_id, id, name, created_by, created_at, last_modified_at)
    values (${org}, 'backlog-flow', 'backlog', 'seed', ${at}, ${at})`.execute(db);
  await api.app.transparencyLog.sequence();
  const start = performance.now();
  for (let from = 1; from <= BACKLOG; from += 10_000) {
    const to = Math.min(BACKLOG, from + 9_999);
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${org}, 'bt' || i, 'backlog-flow', 'build-' || i, 'seed', ${at}, ${at}, '{}'::jsonb, 'COMPLIANT', ${at}
      from generate_series(${from}::int, ${to}::int) i`.execute(db);
  }
  // The API runs in this process: the event loop's longest block is every request's longest wait.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const pages: number[] = [];
  const health: number[] = [];
  let done = false;
  const timed = async (path: string, into: number[], every: number) => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${api.url}${path}`, { headers: auth });
      await res.text();
      if (res.status !== 200) {
        throw new Error(`${path}: ${res.status}`);
      }
      into.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, every));
    }
  };
  const readers = [
    timed(`/api/v2/trails/${api.org}/backlog?per_page=10`, pages, 100),
    timed('/healthz', health, 50),
  ];
  for (;;) {
    const left = await sql<{
      n: number;
    }>`select count(*)::int as n from (select 1 from log_queue limit 1) q`.execute(db);
    if (left.rows[0]!.n === 0) {
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const caughtUp = (performance.now() - start) / 1000;
  done = true;
  loop.disable();
  await Promise.all(readers);
  const size = (
    await sql<{ n: number }>`select size::int as n from log_heads where org_id = ${org}`.execute(db)
  ).rows[0]!.n;
  console.log(`backlog of ${BACKLOG} records: in the log after ${caughtUp.toFixed(1)} s (log size ${size})`);
  console.log(`  a page of trails meanwhile: ${ms(pages)}`);
  console.log(`  /healthz meanwhile: ${ms(health)}`);
  console.log(`  the event loop's longest block meanwhile: ${(loop.max / 1e6).toFixed(0)} ms`);
} finally {
  await api.close();
}
