/**
 * Delivery insight at scale on PostgreSQL. Seeded in SQL (not through the API): 100,000
 * deployments over one year in 20 environments and 10 repositories (a fiftieth of them
 * rollbacks, a twentieth rolled back, a thirty-third non-compliant at once), and 5,000 stretches of
 * non-compliance. Then `GET /dora/{org}` over the year (by week and by day, for the organization,
 * one environment and one repository) and the first and a deep page of `GET /deployments/{org}`,
 * p99 over repeated queries, each next to a baseline request of the same run (a single-row
 * indexed read). Server time is measured in process (`inject`).
 *
 * BENCH_INSIGHT_DEPLOYMENTS scales the seed.
 */
import { sql } from 'kysely';
import type { Db } from '../services/api/src/storage/database.js';
import type { BenchContext, BenchFigure } from './harness.js';
import { startApi } from './harness.js';

const DEPLOYMENTS = Number(process.env.BENCH_INSIGHT_DEPLOYMENTS ?? 100_000);
const ENVIRONMENTS = 20;
const REPOS = 10;
const INCIDENTS = 5_000;
const YEAR_S = 365 * 86_400;
const T0 = Date.parse('2026-01-01T00:00:00Z') / 1000;

const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function seed(db: Db, orgId: string, envIds: string[]): Promise<void> {
  await sql`
    insert into deployments (org_id, id, environment_id, snapshot_index, started_at, fingerprint,
      artifact_name, artifact_id, flow_name, trail_name, git_commit, html_url, repo_name, replaced,
      rollback, commit_lead_time, build_lead_time, change_lead_time, commits, compliant,
      rolled_back_at, broke_compliance_at)
    select ${orgId}, lpad(i::text, 12, '0'), (${envIds}::text[])[1 + i % ${ENVIRONMENTS}], i,
      to_timestamp(${T0} + i * (${YEAR_S}::double precision / ${DEPLOYMENTS})),
      encode(sha256(convert_to('fp ' || i, 'UTF8')), 'hex'), 'registry.example/app:' || i, null,
      'flow-' || (i % ${REPOS}), 'trail-' || i, null, null, 'org/repo-' || (i % ${REPOS}), '[]',
      i % 50 = 0, 3600 + (i::bigint * 7919) % 259200, 1800 + (i::bigint * 104729) % 7200,
      case when i % 50 = 0 then null else 3600 + (i::bigint * 7919) % 259200 end, '[]', i % 33 <> 0,
      case when i % 20 = 0 then to_timestamp(${T0} + i * (${YEAR_S}::double precision / ${DEPLOYMENTS}) + 3600) end,
      case when i % 33 = 0 then to_timestamp(${T0} + i * (${YEAR_S}::double precision / ${DEPLOYMENTS})) end
    from generate_series(1, ${DEPLOYMENTS}) as i`.execute(db);
  await sql`
    insert into compliance_incidents (org_id, environment_id, started_index, started_at, restored_index, restored_at)
    select ${orgId}, (${envIds}::text[])[1 + i % ${ENVIRONMENTS}], i,
      to_timestamp(${T0} + i * (${YEAR_S}::double precision / ${INCIDENTS})), i + 1,
      to_timestamp(${T0} + i * (${YEAR_S}::double precision / ${INCIDENTS}) + 60 + (i::bigint * 7919) % 86400)
    from generate_series(1, ${INCIDENTS}) as i`.execute(db);
}

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const api = await startApi({ postgres: true });
  try {
    const headers = { authorization: `Bearer ${api.key}` };
    const call = async (method: 'GET' | 'PUT', url: string, payload?: unknown) => {
      const start = process.hrtime.bigint();
      const res = await api.app.inject({
        method,
        url,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (res.statusCode >= 300) {
        throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
      return { ms, body: res.body };
    };
    const db = api.db.db;
    const org = (
      await db.selectFrom('orgs').select('id').where('name', '=', api.org).executeTakeFirstOrThrow()
    ).id;
    for (let e = 0; e < ENVIRONMENTS; e++) {
      await call('PUT', `/api/v2/environments/${api.org}`, {
        name: `env-${e}`,
        type: 'K8S',
        description: '',
      });
    }
    const envIds = (
      await db
        .selectFrom('environments')
        .select(['id', 'name'])
        .where('org_id', '=', org)
        .orderBy('name')
        .execute()
    ).map((e) => e.id);

    const seedStart = Date.now();
    await seed(db, org, envIds);
    await sql`vacuum analyze`.execute(db);
    ctx.log(
      `seeded ${DEPLOYMENTS} deployments in ${ENVIRONMENTS} environments over a year and ${INCIDENTS} stretches of non-compliance in ${((Date.now() - seedStart) / 1000).toFixed(0)} s`,
    );

    const baselineUrl = `/api/v2/environments/${api.org}/env-1`;
    for (let i = 0; i < 20; i++) {
      await call('GET', baselineUrl);
    }
    const baselineRuns: number[] = [];
    for (let i = 0; i < 50; i++) {
      baselineRuns.push((await call('GET', baselineUrl)).ms);
    }
    const baseline = percentile(baselineRuns, 50);
    ctx.log(`baseline GET environment: ${baseline.toFixed(2)} ms`);

    const year = `from=${T0}&to=${T0 + YEAR_S}`;
    const queries = {
      'organization by week': `/api/v2/dora/${api.org}?${year}&bucket=week`,
      'organization by day': `/api/v2/dora/${api.org}?${year}&bucket=day`,
      'one environment by week': `/api/v2/dora/${api.org}?${year}&bucket=week&environment=env-3`,
      'one repository by day': `/api/v2/dora/${api.org}?${year}&bucket=day&repo=org/repo-4`,
    };
    const p99s: Record<string, number> = {};
    for (const [name, url] of Object.entries(queries)) {
      const answer = JSON.parse((await call('GET', url)).body) as {
        total: { deployment_frequency: { deployments: number } };
      };
      const runs: number[] = [];
      for (let i = 0; i < 30; i++) {
        runs.push((await call('GET', url)).ms);
      }
      p99s[name] = percentile(runs, 99);
      ctx.log(
        `DORA ${name}: ${answer.total.deployment_frequency.deployments} deployments, p50 ${percentile(runs, 50).toFixed(1)} ms, p99 ${p99s[name].toFixed(1)} ms`,
      );
    }
    // Pages: the first, and one deep in the list through its next links' cursor.
    let next: string | null = `/api/v2/deployments/${api.org}?per_page=500`;
    const pageRuns: number[] = [];
    for (let i = 0; i < 40 && next; i++) {
      const r = await call('GET', next.replace(/^https?:\/\/[^/]+/, ''));
      pageRuns.push(r.ms);
      next = (JSON.parse(r.body) as { next: string | null }).next;
    }
    const pageP99 = percentile(pageRuns, 99);
    ctx.log(`deployments pages of 500, ${pageRuns.length} pages deep: p99 ${pageP99.toFixed(1)} ms`);

    const worst = Math.max(...Object.values(p99s));
    const ratio = (ms: number) => `${(ms / baseline).toFixed(0)}x baseline ${baseline.toFixed(2)} ms`;
    return [
      {
        name: `DORA answer for a year, worst p99 of org/env/repo by day and week (${DEPLOYMENTS} deployments)`,
        value: `${worst.toFixed(1)} ms (${ratio(worst)})`,
        target: '< 500 ms',
        pass: worst < 500,
      },
      {
        name: 'deployments page of 500, p99 over the first 40 pages',
        value: `${pageP99.toFixed(1)} ms (${ratio(pageP99)})`,
        target: '< 200 ms',
        pass: pageP99 < 200,
      },
    ];
  } finally {
    await api.close();
  }
}
