/**
 * Listing pages of a large organization: `GET /trails/{org}/{flow}` and `GET /artifacts/{org}?flow_name=`
 * at 100 a page, the first, the middle and the last page, of a flow holding 1,000 and then
 * 100,000 trails with an artifact each (seeded in SQL, as a long-lived organization grows),
 * with the read cache off and the transparency log off (so its sequencer does not integrate the
 * seed while the pages are timed). Prints the median of 10 sequential requests per page and its
 * ratio to the same page number's place in the small flow (its first, middle, last page).
 *
 * Run: `npx tsx bench/limits-lists.ts` (embedded database), `BENCH_LISTS_POSTGRES=1 npx tsx
 * bench/limits-lists.ts` (PostgreSQL at BENCH_DATABASE_URL). `BENCH_LISTS_SIZE` sets the large
 * size (default 100,000).
 */
import { sql } from 'kysely';
import { startApi, type RunningApi } from './harness.js';

const LARGE = Number(process.env.BENCH_LISTS_SIZE ?? 100_000);
const SMALL = 1_000;
const PER_PAGE = 100;
const REQUESTS = 10;

async function grow(api: RunningApi, org: string, from: number, to: number): Promise<void> {
  const db = api.db.db;
  const at = new Date('2026-01-01T00:00:00Z');
  for (let start = from; start <= to; start += 10_000) {
    const end = Math.min(to, start + 9_999);
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${org}, 'lt' || i, 'lists-flow', 'build-' || i, 'seed', ${at}::timestamptz + i * interval '1 second',
        ${at}, '{}'::jsonb, 'COMPLIANT', ${at}
      from generate_series(${start}::int, ${end}::int) i`.execute(db);
    await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, created_by, created_at,
        last_modified_at, state, compliance)
      select ${org}, 'la' || i, 'lists-flow', 'lt' || i, lpad(to_hex(i), 64, '0'),
        'ghcr.io/acme/service-' || (i % 500) || ':1.' || i, 'seed',
        ${at}::timestamptz + i * interval '1 second', ${at}, 'COMPLIANT', '{}'::jsonb
      from generate_series(${start}::int, ${end}::int) i`.execute(db);
  }
  await sql`analyze trails, artifacts`.execute(db);
}

/** Median milliseconds of REQUESTS sequential GETs (two more first, untimed). */
async function median(api: RunningApi, path: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS + 2; i++) {
    const start = performance.now();
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${api.key}` } });
    await res.text();
    if (res.status !== 200) {
      throw new Error(`${path}: ${res.status}`);
    }
    if (i >= 2) {
      times.push(performance.now() - start);
    }
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

type Row = { place: string; trails: number; artifacts: number };

async function pages(api: RunningApi, size: number): Promise<Row[]> {
  const last = Math.ceil(size / PER_PAGE);
  const out: Row[] = [];
  for (const [place, page] of [
    ['first', 1],
    ['middle', Math.ceil(last / 2)],
    ['last', last],
  ] as const) {
    const q = `per_page=${PER_PAGE}&page=${page}`;
    out.push({
      place: `${place} (${page})`,
      trails: await median(api, `/api/v2/trails/${api.org}/lists?${q}`),
      artifacts: await median(api, `/api/v2/artifacts/${api.org}?flow_name=lists&${q}`),
    });
  }
  return out;
}

const api = await startApi({
  postgres: process.env.BENCH_LISTS_POSTGRES === '1',
  env: { VERITY_READ_CACHE_ENTRIES: '0', VERITY_TRANSPARENCY_LOG: 'off' },
});
try {
  const db = api.db.db;
  const org = (await sql<{ id: string }>`select id from orgs where name = ${api.org}`.execute(db)).rows[0]!
    .id;
  const at = new Date('2026-01-01T00:00:00Z');
  await sql`insert into flows (org_id, id, name, created_by, created_at, last_modified_at)
    values (${org}, 'lists-flow', 'lists', 'seed', ${at}, ${at})`.execute(db);
  await grow(api, org, 1, SMALL);
  const small = await pages(api, SMALL);
  await grow(api, org, SMALL + 1, LARGE);
  const large = await pages(api, LARGE);
  const where = process.env.BENCH_LISTS_POSTGRES === '1' ? 'PostgreSQL' : 'embedded';
  console.log(`| page of 100, ${where} | trails, ${LARGE} vs ${SMALL} | artifacts, ${LARGE} vs ${SMALL} |`);
  console.log('| --- | --- | --- |');
  large.forEach((r, i) => {
    const s = small[i]!;
    const cell = (a: number, b: number) => `${a.toFixed(1)} vs ${b.toFixed(1)} ms (${(a / b).toFixed(1)}x)`;
    console.log(`| ${r.place} | ${cell(r.trails, s.trails)} | ${cell(r.artifacts, s.artifacts)} |`);
  });
} finally {
  await api.close();
}
