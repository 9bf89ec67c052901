/**
 * The runtime benchmark's 5,000-pod K8S report, sent over HTTP to the pipeline benchmark's API
 * process, so that it runs on the same organizations as the ingest workloads (the empty one and
 * the one grown to 1,000,000 attestations). Its pods run the organization's own artifacts: 500
 * deployments of 10 replicas, each deployment on one fingerprint read from the `artifacts` table,
 * so provenance resolves as it does in production. Reported as the reporter sends it.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { deploymentPods } from './k8s-pods.js';
import { json, send, type Target } from './pipeline-client.js';
import { PIPELINE_DATABASE_URL, withOptions } from './pipeline-server.js';

const DEPLOYMENTS = 500;
const REPLICAS = 10;
/** Reports timed for the identical and the rollout figure; each figure is their median. */
const REPEATS = 7;
/**
 * New environments each sent the first report; the figure is their median. One report varies by
 * a quarter from one environment to the next, and the process's very first one also pays for
 * compiling the code it runs.
 */
const FIRSTS = 3;

export interface K8sFigures {
  /** The median of the first reports to FIRSTS new environments. */
  firstMs: number;
  /** Each of those first reports, in the order they were sent. */
  firstsMs: number[];
  identicalMs: number;
  rolloutMs: number;
  /** Deployments whose fingerprint is an artifact of the organization. */
  known: number;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Fingerprints of the organization's artifacts, at most `n`, read from its schema. */
async function artifactFingerprints(schema: string, n: number): Promise<string[]> {
  const c = new pg.Client({
    connectionString: withOptions(PIPELINE_DATABASE_URL, `-c search_path=${schema}`),
  });
  await c.connect();
  try {
    const rows = await c.query<{ fingerprint: string }>(
      'select distinct fingerprint from artifacts order by fingerprint limit $1',
      [n],
    );
    return rows.rows.map((r) => r.fingerprint);
  } finally {
    await c.end();
  }
}

/** Deployment d's pods in environment `env`: other environments' pods have other namespaces. */
function podsOf(env: string, d: number, fingerprint: string) {
  return deploymentPods(
    d,
    fingerprint.slice(0, 10),
    { [`registry.example/svc-${d}@sha256:${fingerprint}`]: fingerprint },
    { replicas: REPLICAS, createdAt: 1_700_000_000, namespace: `${env}-team-${d % 20}` },
  );
}

/**
 * First reports to new environments, then to the first of them the identical report again, and
 * single-deployment rollouts to other artifacts.
 */
export async function k8sReports(t: Target & { schema: string }, env: string): Promise<K8sFigures> {
  const found = await artifactFingerprints(t.schema, DEPLOYMENTS + REPEATS);
  const fingerprintOf = (i: number) => found[i] ?? sha(`not an artifact ${i}`);
  const running = Array.from({ length: DEPLOYMENTS }, (_, d) => fingerprintOf(d));
  const put = async (name = env): Promise<number> => {
    const body = json({ artifacts: running.flatMap((fp, d) => podsOf(name, d, fp)) });
    const start = process.hrtime.bigint();
    const res = await send(t, 'PUT', `/api/v2/environments/${t.org}/${name}/report/K8S`, body);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status >= 300) {
      throw new Error(`K8S report: ${res.status} ${res.body.slice(0, 300)}`);
    }
    return ms;
  };
  const firstsMs: number[] = [];
  for (let i = 0; i < FIRSTS; i++) {
    const name = i === 0 ? env : `${env}-${i + 1}`;
    const created = await send(
      t,
      'PUT',
      `/api/v2/environments/${t.org}`,
      json({ name, type: 'K8S', description: 'bench' }),
    );
    if (created.status >= 300) {
      throw new Error(`create environment: ${created.status} ${created.body.slice(0, 300)}`);
    }
    firstsMs.push(await put(name));
  }
  const identical: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    identical.push(await put());
  }
  const rollouts: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Deployment i rolls to a build it did not run before.
    running[i] = fingerprintOf(DEPLOYMENTS + i);
    rollouts.push(await put());
  }
  return {
    firstMs: median(firstsMs),
    firstsMs,
    identicalMs: median(identical),
    rolloutMs: median(rollouts),
    known: Math.min(found.length, DEPLOYMENTS),
  };
}
