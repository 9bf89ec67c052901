/**
 * Requests at the documented limits, and what they cost every other tenant: for each workload,
 * the request time, the longest `GET /healthz` answer while it ran (pinged every 50 ms from a
 * worker thread, `limits-probe.ts`), the process's peak resident memory and the cost per item,
 * on PGlite and PostgreSQL (BENCH_DATABASE_URL, a schema per run). The baseline of each section
 * is its smallest input in the same run: a cost per item that grows with the input is a
 * super-linear step.
 *
 * Sections: K8S reports of 1,000, 10,000 and 50,000 pods (the cap, MAX_REPORT_ARTIFACTS), the
 * first report and one that rolls every image. Further workloads (exposure, GET artifact) are a
 * further `Section` in `sections`.
 *
 * BENCH_LIMITS_DATABASES=pglite,postgres picks the databases; BENCH_LIMITS_PODS=1000,10000,50000
 * the report sizes.
 *
 * The API runs in a child process of its own, as the image starts it (`pipeline-server.ts`: the
 * compiled build, or the sources with BENCH_API_SOURCE=1; BENCH_API_NODE_FLAGS for a profile),
 * the embedded database in a directory on disk as in a deployment (opened once before, see
 * `restartedOn`); the memory figures are that process's. BENCH_LIMITS_API=inline runs it in the benchmark's own process instead, with the
 * embedded database in memory (the layout of the first figures: the bench's own reports and the
 * whole database then count in its memory).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext, BenchFigure } from './harness.js';
import { startApi } from './harness.js';
import { measureUnderLoad } from './limits-probe.js';
import { ensureDatabase, startApiProcess, type ApiProcess } from './pipeline-server.js';

/** The API under measurement: its address, an administrator's key, and its process when a child. */
interface Api {
  url: string;
  org: string;
  key: string;
  pid?: number;
  /** Prometheus metrics, when the API runs in a process of its own. */
  metricsUrl?: string;
  close(): Promise<void>;
}

/**
 * The API on an embedded database that has been opened before, as after a deployment's first
 * start: creating the database (initdb) grows PGlite's WebAssembly memory to about 430 MiB,
 * which the process never gives back; a process opening an existing directory starts at about
 * 195 MiB of it. The first start also runs the migrations.
 */
export async function restartedOn(dir: string, env: Record<string, string> = {}): Promise<ApiProcess> {
  await (await startApiProcess({ embeddedDir: dir, env })).stop();
  return startApiProcess({ embeddedDir: dir, env });
}

async function startLimitsApi(database: Database): Promise<Api> {
  if (process.env.BENCH_LIMITS_API === 'inline') {
    const api = await startApi({ postgres: database === 'postgres' });
    return { url: api.url, org: api.org, key: api.key, close: () => api.close() };
  }
  const dir = database === 'pglite' ? mkdtempSync(join(tmpdir(), 'verity-limits-')) : undefined;
  if (!dir) {
    await ensureDatabase();
  }
  const api = dir ? await restartedOn(dir) : await startApiProcess({});
  return {
    url: api.url,
    org: api.org,
    key: api.adminKey,
    pid: api.pid,
    metricsUrl: api.metricsUrl,
    async close() {
      await api.stop();
      if (dir) {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The targets at the report cap: a rollout answers in time, and nobody else waits long. */
const ROLLOUT_TARGET_MS = 5_000;
const HEALTHZ_TARGET_MS = 250;

type Database = 'pglite' | 'postgres';
type Section = (api: Api, database: Database, ctx: BenchContext) => Promise<BenchFigure[]>;

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const list = (value: string | undefined, fallback: string) => (value ?? fallback).split(',').filter(Boolean);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/**
 * As many images as pods, each its own fingerprint (the costly case), in the fewest bytes a
 * reporter sends for a pod (no owners), so that 50,000 pods fit the 10 MiB body limit.
 */
function k8sReport(pods: number, version: number): string {
  const artifacts = Array.from({ length: pods }, (_, d) => ({
    podName: `svc-${d}-${version}`,
    namespace: `team-${d % 20}`,
    digests: { [`r.example/svc-${d}:v${version}`]: sha(`image ${d} v${version}`) },
    creationTimestamp: 1_700_000_000 + version,
  }));
  return JSON.stringify({ artifacts });
}

/** Seconds spent so far in each step of environment reports (`verity_report_phase_seconds`). */
async function reportSteps(api: Api): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!api.metricsUrl) {
    return out;
  }
  const text = await (await fetch(api.metricsUrl)).text();
  for (const m of text.matchAll(/^verity_report_phase_seconds_sum\{phase="(\w+)"\} (\S+)$/gm)) {
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** Deployments recorded so far in an environment (`verity_deployments_total`). */
async function deploymentsRecorded(api: Api, env: string): Promise<number> {
  if (!api.metricsUrl) {
    return 0;
  }
  const text = await (await fetch(api.metricsUrl)).text();
  const m = new RegExp(
    `^verity_deployments_total\\{org="${api.org}",environment="${env}"\\} (\\S+)$`,
    'm',
  ).exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Sends a report and waits until its deployments are recorded (after the answer, for a report that
 * starts VERITY_DEPLOYMENTS_DEFER_FROM fingerprints or more): the answer's time and the whole.
 */
async function reportAndDeployments(
  api: Api,
  env: string,
  send: () => Promise<string>,
  expected: number,
): Promise<{ answer: string; answeredMs: number }> {
  const start = performance.now();
  const answer = await send();
  const answeredMs = performance.now() - start;
  const deadline = Date.now() + 300_000;
  while (api.metricsUrl && (await deploymentsRecorded(api, env)) < expected) {
    if (Date.now() > deadline) {
      throw new Error(`${env}: ${expected} deployments not recorded within 5 minutes`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { answer, answeredMs };
}

/** The steps one report took, from the counts before and after it. */
const stepsBetween = (before: Map<string, number>, after: Map<string, number>) =>
  [...after].map(([step, total]) => `${step} ${(total - (before.get(step) ?? 0)).toFixed(2)} s`).join(', ');

async function put(api: Api, path: string, body: string): Promise<string> {
  const res = await fetch(`${api.url}${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json; charset=utf-8' },
    body,
  });
  const text = await res.text();
  if (res.status >= 300) {
    throw new Error(`PUT ${path}: ${res.status} ${text.slice(0, 300)}`);
  }
  return text;
}

const k8sReports: Section = async (api, database, ctx) => {
  const sizes = list(process.env.BENCH_LIMITS_PODS, '1000,10000,50000').map(Number);
  const figures: BenchFigure[] = [];
  const baseline: Record<string, number> = {};
  for (const pods of sizes) {
    const env = `limits-${pods}`;
    await put(api, `/api/v2/environments/${api.org}`, JSON.stringify({ name: env, type: 'K8S' }));
    const path = `/api/v2/environments/${api.org}/${env}/report/K8S`;
    for (const [step, version] of [
      ['first', 1],
      ['rolling every image', 2],
    ] as const) {
      const body = k8sReport(pods, version);
      const stepsBefore = await reportSteps(api);
      // Every pod starts a fingerprint of its own: one deployment each.
      const m = await measureUnderLoad(
        api.url,
        () => reportAndDeployments(api, env, () => put(api, path, body), pods * version),
        api.pid,
      );
      const steps = stepsBetween(stepsBefore, await reportSteps(api));
      const { answeredMs } = m.result;
      const perPod = (answeredMs * 1000) / pods;
      baseline[step] ??= perPod;
      const ratio = perPod / baseline[step];
      ctx.log(
        `${database} ${pods} pods, ${step} (${mib(body.length)} body): answered in ${answeredMs.toFixed(0)} ms, ` +
          `deployments recorded by ${m.ms.toFixed(0)} ms, ` +
          `/healthz max ${m.maxHealthzMs.toFixed(0)} ms (${m.pings} pings), peak RSS ${mib(m.peakRssBytes)}, ` +
          `${perPod.toFixed(1)} µs/pod (${ratio.toFixed(2)}x the ${sizes[0]}-pod cost) -> ${m.result.answer}` +
          (steps ? `; steps: ${steps}` : ''),
      );
      const atCap = pods >= 50_000;
      figures.push(
        {
          name: `${database}: ${pods} pods, ${step}`,
          value:
            `answered in ${answeredMs.toFixed(0)} ms, deployments recorded by ${m.ms.toFixed(0)} ms, ` +
            `${perPod.toFixed(1)} µs/pod (${ratio.toFixed(2)}x per pod vs ${sizes[0]} pods), ${mib(m.peakRssBytes)} peak RSS`,
          ...(atCap && step !== 'first'
            ? { target: `< ${ROLLOUT_TARGET_MS} ms`, pass: answeredMs < ROLLOUT_TARGET_MS }
            : {}),
        },
        {
          name: `${database}: ${pods} pods, ${step}: longest /healthz`,
          value: `${m.maxHealthzMs.toFixed(0)} ms`,
          target: `< ${HEALTHZ_TARGET_MS} ms`,
          pass: m.maxHealthzMs < HEALTHZ_TARGET_MS,
        },
      );
    }
  }
  return figures;
};

const sections: Record<string, Section> = { 'K8S reports': k8sReports };

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  for (const database of list(process.env.BENCH_LIMITS_DATABASES, 'pglite,postgres') as Database[]) {
    const api = await startLimitsApi(database);
    try {
      for (const [name, section] of Object.entries(sections)) {
        ctx.log(`${name} on ${database}`);
        figures.push(...(await section(api, database, ctx)));
      }
    } finally {
      await api.close();
    }
  }
  return figures;
}
