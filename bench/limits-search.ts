/**
 * Search by name (`GET /search/{org}/names`) in an organization of 100,000 artifacts and
 * trails, against the same organization while it held 10: the time of a search that matches one
 * artifact, one that matches thousands (newest 20 shown), one that matches none, and a
 * two-character one (no trigram, the index cannot help). Each is the median and the longest of
 * REQUESTS sequential requests over HTTP, with the read cache off. The plan of the artifacts
 * query for the one-match text is printed, to show the trigram index at work.
 *
 * Names look like image names: `ghcr.io/acme/service-<n % 500>:1.<n>`, so their trigrams are
 * mostly common ones, the harder case for a trigram index. The searches of the large organization
 * then run again with the trigram indexes of artifacts and trails dropped: the cost before them.
 *
 * Run: `npx tsx bench/limits-search.ts` (embedded database), `BENCH_SEARCH_POSTGRES=1 npx tsx
 * bench/limits-search.ts` (PostgreSQL at BENCH_DATABASE_URL). `BENCH_SEARCH_ARTIFACTS` sets the
 * size (default 100,000).
 */
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { nameSearchQueries } from '../services/api/src/storage/repositories/name-search.js';
import { startApi, type BenchFigure, type RunningApi } from './harness.js';

const ARTIFACTS = Number(process.env.BENCH_SEARCH_ARTIFACTS ?? 100_000);
const SMALL = 10;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20);
/** A search page of the large organization may take this many times the small one's. */
const GROWTH_TARGET = 3;

const TEXTS: { label: string; text: (n: number) => string; trigram: boolean }[] = [
  { label: 'one match', text: (n) => `service-${(n - 7) % 500}:1.${n - 7}`, trigram: true },
  { label: 'thousands of matches', text: () => 'service-42:', trigram: true },
  { label: 'no match', text: () => 'no-such-image', trigram: true },
  { label: 'two characters, no match', text: () => 'zq', trigram: false },
];

async function seed(api: RunningApi, from: number, to: number): Promise<void> {
  const db = api.db.db;
  const { rows } = await sql<{ id: string }>`select id from orgs where name = ${api.org}`.execute(db);
  const org = rows[0]!.id;
  const at = new Date('2026-01-01T00:00:00Z');
  if (from === 1) {
    await sql`insert into flows (org_id, id, name, created_by, created_at, last_modified_at)
      values (${org}, 'search-flow', 'search', 'seed', ${at}, ${at})`.execute(db);
  }
  // In statements of 10,000 rows, as a long-lived organization grows.
  for (let start = from; start <= to; start += 10_000) {
    const end = Math.min(to, start + 9_999);
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${org}, 'st' || i, 'search-flow', 'build-' || i, 'seed',
        ${at}::timestamptz + i * interval '1 second', ${at}, '{}'::jsonb, 'COMPLIANT', ${at}
      from generate_series(${start}::int, ${end}::int) i`.execute(db);
    await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, created_by,
        created_at, last_modified_at, state, compliance)
      select ${org}, 'sa' || i, 'search-flow', 'st' || i, lpad(to_hex(i), 64, '0'),
        'ghcr.io/acme/service-' || (i % 500) || ':1.' || i, 'seed',
        ${at}::timestamptz + i * interval '1 second', ${at}, 'COMPLIANT', '{}'::jsonb
      from generate_series(${start}::int, ${end}::int) i`.execute(db);
  }
  await sql`analyze flows, trails, artifacts`.execute(db);
}

async function timeSearch(
  api: RunningApi,
  text: string,
): Promise<{ p50: number; max: number; found: number }> {
  const url = `${api.url}/api/v2/search/${api.org}/names?q=${encodeURIComponent(text)}`;
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < REQUESTS + 2; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${api.key}` } });
    const body = (await res.json()) as { artifacts: unknown[] };
    const ms = performance.now() - start;
    if (res.status !== 200) {
      throw new Error(`search ${text}: ${res.status} ${JSON.stringify(body)}`);
    }
    found = body.artifacts.length;
    if (i >= 2) {
      times.push(ms);
    }
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, max: times[times.length - 1]!, found };
}

/** The figures of the name search on one database; `log` prints progress and the plan. */
export async function nameSearchLimits(
  postgres: boolean,
  log: (line: string) => void = console.log,
): Promise<BenchFigure[]> {
  const api = await startApi({ postgres, env: { VERITY_READ_CACHE_ENTRIES: '0' } });
  const dbName = postgres ? 'PostgreSQL' : 'embedded';
  const figures: BenchFigure[] = [];
  try {
    await seed(api, 1, SMALL);
    const small = [];
    for (const t of TEXTS) {
      small.push(await timeSearch(api, t.text(SMALL)));
    }
    const started = performance.now();
    await seed(api, SMALL + 1, ARTIFACTS);
    log(
      `${dbName}: seeded ${ARTIFACTS.toLocaleString('en-US')} artifacts and trails in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const { rows } = await sql<{ id: string }>`select id from orgs where name = ${api.org}`.execute(
      api.db.db,
    );
    const plan = await nameSearchQueries
      .artifacts(api.db.db, rows[0]!.id, TEXTS[0]!.text(ARTIFACTS), 20)
      .explain();
    log(`plan of the artifacts query, one match:\n${plan.map((r) => Object.values(r).join(' ')).join('\n')}`);
    const large = [];
    for (const t of TEXTS) {
      large.push(await timeSearch(api, t.text(ARTIFACTS)));
    }
    // The same searches without the trigram indexes: what each cost before them.
    await sql`drop index artifacts_filename_trgm_idx, trails_name_trgm_idx`.execute(api.db.db);
    const unindexed = [];
    for (const t of TEXTS) {
      unindexed.push(await timeSearch(api, t.text(ARTIFACTS)));
    }
    for (const [i, t] of TEXTS.entries()) {
      const s = small[i]!;
      const l = large[i]!;
      const u = unindexed[i]!;
      const ratio = l.p50 / s.p50;
      log(
        `${dbName}, ${t.label} (q=${t.text(ARTIFACTS)}): ${SMALL} artifacts p50 ${s.p50.toFixed(1)} ms (max ${s.max.toFixed(1)}), ` +
          `${ARTIFACTS.toLocaleString('en-US')} p50 ${l.p50.toFixed(1)} ms (max ${l.max.toFixed(1)}), ${ratio.toFixed(2)}x, ` +
          `${l.found} artifacts shown; without the trigram indexes p50 ${u.p50.toFixed(1)} ms (max ${u.max.toFixed(1)})`,
      );
      figures.push({
        name: `name search, ${dbName}, ${t.label}: ${ARTIFACTS.toLocaleString('en-US')} vs ${SMALL} artifacts (p50)`,
        value: `${l.p50.toFixed(1)} vs ${s.p50.toFixed(1)} ms (${ratio.toFixed(2)}x; unindexed ${u.p50.toFixed(1)} ms)`,
        // A text without a trigram reads a window of NAME_SEARCH_WINDOW rows: bounded, not flat.
        ...(t.trigram ? { target: `<= ${GROWTH_TARGET}x`, pass: ratio <= GROWTH_TARGET } : {}),
      });
    }
  } finally {
    await api.close();
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await nameSearchLimits(process.env.BENCH_SEARCH_POSTGRES === '1');
  console.table(figures);
}
