/**
 * The API as production runs it (`tsx services/api/src/main.ts`) in a child process, so a fault
 * test can watch it survive a database outage or kill it; and a small HTTP client that records
 * every answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { goMultipart } from '../helpers/multipart.js';
import { freePort } from './cluster.js';

const MAIN = join(process.cwd(), 'services', 'api', 'src', 'main.ts');

export const ORG = 'faults';
export const KEY = 'vty_fault-test-admin-key-0123456789';

export interface ApiProcess {
  base: string;
  child: ChildProcess;
  output(): string;
  /** True while the process runs. */
  alive(): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the API on `databaseUrl` and waits until it answers `/readyz`. The port is free when
 * chosen, but another test's process may take it before the API listens: then the API exits with
 * EADDRINUSE and starts again on another port (three times at most).
 */
export async function startApi(databaseUrl: string, env: Record<string, string> = {}): Promise<ApiProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(databaseUrl, env);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 3) {
        throw err;
      }
    }
  }
}

class PortTaken extends Error {}

async function startOnce(databaseUrl: string, env: Record<string, string>): Promise<ApiProcess> {
  const api = await spawnApi(databaseUrl, env);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!api.alive()) {
      const output = api.output();
      const Failure = /EADDRINUSE/.test(output) ? PortTaken : Error;
      throw new Failure(`The API exited on start:\n${output}`);
    }
    if (Date.now() > deadline) {
      await api.kill('SIGKILL');
      throw new Error(`The API did not get ready:\n${api.output()}`);
    }
    const ready = await fetch(`${api.base}/readyz`).catch(() => undefined);
    if (ready?.status === 200) {
      return api;
    }
    await sleep(200);
  }
}

/** Starts the API on `databaseUrl` without waiting for anything. */
export async function spawnApi(databaseUrl: string, env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  // Node itself with tsx as a loader (not the tsx wrapper): the pid is the API's, so a SIGKILL
  // kills the API, and nothing outlives the test.
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      // any free port: two replicas run side by side
      VERITY_METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      VERITY_BOOTSTRAP_ORG: ORG,
      VERITY_BOOTSTRAP_API_KEY: KEY,
      VERITY_RATE_LIMIT_PER_MINUTE: '0',
      VERITY_SHUTDOWN_TIMEOUT_MS: '3000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const api: ApiProcess = {
    base,
    child,
    output: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill(signal = 'SIGTERM') {
      if (api.alive()) {
        child.kill(signal);
      }
      await exited;
    },
  };
  return api;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  /** 0 when no answer came (connection refused or reset). */
  ms: number;
  json: any;
  retryAfter: string | null;
  at: number;
}

/** One request with the test key; a request that gets no answer comes back as status 0. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: { json: unknown } | { form: Record<string, string> },
  timeoutMs = 30_000,
): Promise<Answer> {
  const started = Date.now();
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
  let payload: Buffer | string | undefined;
  if (body && 'json' in body) {
    headers['content-type'] = 'application/json; charset=utf-8';
    payload = JSON.stringify(body.json);
  } else if (body) {
    const form = goMultipart(Object.entries(body.form).map(([name, value]) => ({ name, value })));
    headers['content-type'] = form.contentType;
    payload = form.body;
  }
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return {
      status: res.status,
      ms: Date.now() - started,
      json,
      retryAfter: res.headers.get('retry-after'),
      at: started,
    };
  } catch {
    return { status: 0, ms: Date.now() - started, json: undefined, retryAfter: null, at: started };
  }
}

/** Creates the flow, its trail and a K8S environment the load writes to. */
export async function seed(base: string, flow: string, env: string): Promise<void> {
  const steps: Array<[string, string, unknown]> = [
    ['PUT', `/api/v2/flows/${ORG}`, { name: flow, description: '' }],
    ['PUT', `/api/v2/trails/${ORG}/${flow}`, { name: 't1' }],
    ['PUT', `/api/v2/environments/${ORG}`, { name: env, type: 'K8S', description: '' }],
  ];
  for (const [method, path, json] of steps) {
    const r = await call(base, method, path, { json });
    if (r.status >= 300) {
      throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    }
  }
}

/** A generic attestation named `name` on the seeded trail. */
export const attest = (base: string, flow: string, name: string, timeoutMs?: number) =>
  call(
    base,
    'POST',
    `/api/v2/attestations/${ORG}/${flow}/trail/t1/generic`,
    { form: { data_json: JSON.stringify({ attestation_name: name, is_compliant: true }) } },
    timeoutMs,
  );

/** A 64-hex fingerprint from a number. */
export const fingerprint = (n: number) => n.toString(16).padStart(64, '0');

/** A K8S report: one pod running the image `app:<n>`. */
export const report = (base: string, env: string, n: number, timeoutMs?: number) =>
  call(
    base,
    'PUT',
    `/api/v2/environments/${ORG}/${env}/report/K8S`,
    {
      json: {
        artifacts: [
          {
            podName: `app-${n}`,
            namespace: 'prod',
            digests: { [`app:${n}`]: fingerprint(n) },
            creationTimestamp: 1_700_000_000 + n,
            owners: [
              { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'app-rs', uid: 'u1', controller: true },
            ],
          },
        ],
      },
    },
    timeoutMs,
  );

/** The attestation names stored on the seeded trail, read back through the API. */
export async function storedAttestations(base: string, flow: string): Promise<Set<string>> {
  const r = await call(base, 'GET', `/api/v2/trails/${ORG}/${flow}/t1`);
  if (r.status !== 200) {
    throw new Error(`trail read: ${r.status}`);
  }
  return new Set(
    (r.json.compliance_status.attestations_statuses as Array<{ attestation_name: string }>).map(
      (s) => s.attestation_name,
    ),
  );
}

/** The fingerprints every snapshot of `env` has shown running, read back through the API. */
export async function reportedFingerprints(base: string, env: string): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let page = 1; ; page++) {
    const r = await call(base, 'GET', `/api/v2/snapshots/${ORG}/${env}?per_page=100&page=${page}`);
    if (r.status !== 200) {
      throw new Error(`snapshots read: ${r.status}`);
    }
    const list = r.json as Array<{ index: number }>;
    for (const s of list) {
      const snap = await call(base, 'GET', `/api/v2/snapshots/${ORG}/${env}/${s.index}`);
      for (const a of snap.json.artifacts as Array<{ fingerprint: string; annotation: { now: number } }>) {
        if (a.annotation.now > 0) {
          seen.add(a.fingerprint);
        }
      }
    }
    if (list.length < 100) {
      return seen;
    }
  }
}
