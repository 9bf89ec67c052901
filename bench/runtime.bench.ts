/**
 * Runtime scale on PostgreSQL (issue: Performance). A K8S environment of 5,000 pods over 500
 * fingerprints: the first report, the identical report again, one deployment rolling to a new
 * image; then 1,000 consecutive single-deployment rollouts: database growth per snapshot, and
 * reading snapshot #1 and the latest. Server time is measured in process (`inject`: parsing,
 * validation, the transaction and the answer), next to a baseline request of the same run.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { BenchContext, BenchFigure, RunningApi } from './harness.js';
import { startApi } from './harness.js';
import { deploymentPods } from './k8s-pods.js';

const DEPLOYMENTS = 500;
const REPLICAS = 10;
const ROLLOUTS = 1000;

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function podsOf(d: number, version: number) {
  const rs = sha(`${d}:${version}`).slice(0, 10);
  return deploymentPods(
    d,
    rs,
    { [`registry.example/svc-${d}:v${version}`]: sha(`image ${d} v${version}`) },
    { replicas: REPLICAS, createdAt: 1_700_000_000 + version * 100 },
  );
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const api = await startApi({ postgres: true });
  try {
    const headers = { authorization: `Bearer ${api.key}`, 'content-type': 'application/json; charset=utf-8' };
    const call = async (method: 'GET' | 'PUT', url: string, body?: unknown) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const start = process.hrtime.bigint();
      const res = await api.app.inject({
        method,
        url,
        headers,
        ...(payload !== undefined ? { payload } : {}),
      });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (res.statusCode >= 300) {
        throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
      return { ms, body: res.body };
    };
    const env = 'cluster';
    await call('PUT', `/api/v2/environments/${api.org}`, { name: env, type: 'K8S', description: 'bench' });
    const reportUrl = `/api/v2/environments/${api.org}/${env}/report/K8S`;
    const versions = Array.from({ length: DEPLOYMENTS }, () => 1);
    const report = () => ({ artifacts: versions.flatMap((v, d) => podsOf(d, v)) });

    // Baseline: a small authenticated read, in the same process and run.
    for (let i = 0; i < 20; i++) {
      await call('GET', `/api/v2/environments/${api.org}/${env}`);
    }
    const baselineRuns: number[] = [];
    for (let i = 0; i < 30; i++) {
      baselineRuns.push((await call('GET', `/api/v2/environments/${api.org}/${env}`)).ms);
    }
    const baseline = median(baselineRuns);
    ctx.log(`baseline GET environment: ${baseline.toFixed(2)} ms`);

    const first = await call('PUT', reportUrl, report());
    ctx.log(
      `first report (${DEPLOYMENTS * REPLICAS} pods, ${DEPLOYMENTS} fingerprints): ${first.ms.toFixed(0)} ms -> ${first.body}`,
    );

    const identical: number[] = [];
    for (let i = 0; i < 7; i++) {
      identical.push((await call('PUT', reportUrl, report())).ms);
    }
    const identicalMs = median(identical);

    const rolls: number[] = [];
    for (let i = 0; i < 7; i++) {
      versions[i] = (versions[i] ?? 1) + 1;
      rolls.push((await call('PUT', reportUrl, report())).ms);
    }
    const rollMs = median(rolls);

    await sql`vacuum analyze`.execute(api.db.db);
    const before = await sizeOf(api);
    const snapshotsBefore = Number(
      JSON.parse((await call('GET', `/api/v2/environments/${api.org}/${env}`)).body).latest_snapshot_index,
    );
    const started = Date.now();
    for (let r = 0; r < ROLLOUTS; r++) {
      const d = (r * 7) % DEPLOYMENTS;
      versions[d] = (versions[d] ?? 1) + 1;
      await call('PUT', reportUrl, report());
      // What autovacuum does on a live server: dead rows of the live state become reusable.
      if (r % 100 === 99) {
        await sql`vacuum environments, runtime_states`.execute(api.db.db);
      }
    }
    await sql`vacuum analyze`.execute(api.db.db);
    const after = await sizeOf(api);
    const latest = Number(
      JSON.parse((await call('GET', `/api/v2/environments/${api.org}/${env}`)).body).latest_snapshot_index,
    );
    const made = latest - snapshotsBefore;
    const perSnapshot = (after - before) / made;
    ctx.log(
      `${ROLLOUTS} rollouts in ${((Date.now() - started) / 1000).toFixed(1)} s: ${made} snapshots, ${((after - before) / 1024) | 0} KiB (${(perSnapshot / 1024).toFixed(2)} KiB per snapshot)`,
    );

    const read = async (expr: string) => {
      const runs: number[] = [];
      let size = 0;
      for (let i = 0; i < 7; i++) {
        const res = await call('GET', `/api/v2/snapshots/${api.org}/${env}/${expr}`);
        runs.push(res.ms);
        size = res.body.length;
      }
      ctx.log(`GET snapshot ${expr}: ${median(runs).toFixed(1)} ms, ${(size / 1024) | 0} KiB`);
      return median(runs);
    };
    const readFirst = await read('1');
    const readLatest = await read('-1');

    const ratio = (ms: number) => `${(ms / baseline).toFixed(0)}x baseline ${baseline.toFixed(2)} ms`;
    return [
      {
        name: 'first report, 5,000 pods / 500 fingerprints',
        value: `${first.ms.toFixed(0)} ms (${ratio(first.ms)})`,
        target: '< 1000 ms',
        pass: first.ms < 1000,
      },
      {
        name: 'identical report again',
        value: `${identicalMs.toFixed(0)} ms (${ratio(identicalMs)})`,
        target: '< 150 ms',
        pass: identicalMs < 150,
      },
      {
        name: 'one deployment rolls to a new image',
        value: `${rollMs.toFixed(0)} ms (${ratio(rollMs)})`,
        target: '< 300 ms',
        pass: rollMs < 300,
      },
      {
        name: `database growth per snapshot (${made} rollouts)`,
        value: `${(perSnapshot / 1024).toFixed(2)} KiB`,
        target: '< 20 KB',
        pass: perSnapshot < 20_000,
      },
      {
        name: `read snapshot #1 of ${latest}`,
        value: `${readFirst.toFixed(1)} ms (${ratio(readFirst)})`,
        target: '< 100 ms',
        pass: readFirst < 100,
      },
      {
        name: `read the latest snapshot (#${latest})`,
        value: `${readLatest.toFixed(1)} ms (${ratio(readLatest)})`,
        target: '< 100 ms',
        pass: readLatest < 100,
      },
    ];
  } finally {
    await api.close();
  }
}

async function sizeOf(api: RunningApi): Promise<number> {
  const row = await sql<{ bytes: number }>`select sum(pg_total_relation_size(c.oid))::bigint as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind = 'r'`.execute(api.db.db);
  return Number(row.rows[0]?.bytes ?? 0);
}
