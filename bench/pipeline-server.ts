/**
 * The processes the pipeline benchmark measures: the API (compiled, and started as the image
 * starts it, `node <flags> dist/services/api/src/main.js` with the node flags of Dockerfile.api's
 * CMD, on a private schema of BENCH_PIPELINE_DATABASE_URL with the rate limits off) and a
 * fastify hello world, each in a child process of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { json, send, type Target } from './pipeline-client.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The database the benchmark works in (created when missing); each run takes a schema of its own. */
export const PIPELINE_DATABASE_URL =
  process.env.BENCH_PIPELINE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/verity_bench';

/** Connections of the API's pool and of the baseline's. */
export const POOL_MAX = Number(process.env.BENCH_POOL_MAX ?? 20);

export async function ensureDatabase(): Promise<void> {
  const u = new URL(PIPELINE_DATABASE_URL);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await admin.query(`create database "${name}"`);
    }
  } finally {
    await admin.end();
  }
}

/**
 * Makes PostgreSQL checkpoint now, so that what ran before is written out and the next
 * measurement starts where the first change to each page writes the whole page to the WAL.
 */
export async function checkpointServer(): Promise<void> {
  const c = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
  await c.connect();
  try {
    await c.query('checkpoint');
  } finally {
    await c.end();
  }
}

/** A new schema in the benchmark database, and a connection string whose sessions use it. */
export async function newSchema(
  prefix: string,
): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
  await c.connect();
  await c.query(`create schema ${schema}`);
  await c.end();
  return {
    schema,
    url: withOptions(PIPELINE_DATABASE_URL, `-c search_path=${schema}`),
    async drop() {
      const d = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
      await d.connect();
      await d.query(`drop schema if exists ${schema} cascade`);
      await d.end();
    },
  };
}

export function withOptions(url: string, options: string): string {
  const u = new URL(url);
  const before = u.searchParams.get('options');
  u.searchParams.set('options', before ? `${before} ${options}` : options);
  return u.toString();
}

let built: Promise<void> | undefined;

/** Compiles the API once per benchmark run, as the image's build does (`tsconfig.build.json`). */
function buildApi(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    const tsc = spawn(`${ROOT}node_modules/.bin/tsc`, ['-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    tsc.once('error', reject);
    tsc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc exited with ${code}`))));
  });
  return built;
}

/**
 * The node flags the image starts the API with: the arguments of Dockerfile.api's CMD between
 * `node` and the script.
 */
export function imageNodeFlags(dockerfile = readFileSync(`${ROOT}Dockerfile.api`, 'utf8')): string[] {
  const cmd = dockerfile.split('\n').findLast((l) => l.startsWith('CMD '));
  const args = cmd ? (JSON.parse(cmd.slice(4)) as string[]) : [];
  if (args[0] !== 'node' || args.at(-1) !== 'dist/services/api/src/main.js') {
    throw new Error(`Dockerfile.api: CMD is not ["node", ..., "dist/services/api/src/main.js"]: ${cmd}`);
  }
  return args.slice(1, -1);
}

/**
 * The API's command: `node <flags> dist/services/api/src/main.js` in BENCH_API_ROOT (a checkout
 * built already, to compare two builds in one run) or in this checkout, built first, with the
 * image's node flags (this checkout's Dockerfile.api: both builds of a comparison get the same);
 * BENCH_API_SOURCE=1 runs the sources with tsx instead. BENCH_API_NODE_FLAGS go to node after
 * them (`--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile; a flag given again wins).
 */
async function apiCommand(): Promise<[string, string[]]> {
  const flags = [
    ...imageNodeFlags(),
    ...(process.env.BENCH_API_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ];
  if (process.env.BENCH_API_SOURCE === '1') {
    return [`${ROOT}node_modules/.bin/tsx`, [...flags, 'services/api/src/main.ts']];
  }
  const root = process.env.BENCH_API_ROOT;
  if (!root) {
    await buildApi();
  }
  return [process.execPath, [...flags, `${root ?? ROOT}/dist/services/api/src/main.js`]];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`child exited (${child.exitCode}): ${output()}`);
    }
    try {
      const res = await fetch(`${url}/ready`);
      if (res.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready after 300 s: ${output()}`);
}

export interface ApiProcess extends Target {
  schema: string;
  pid: number;
  /** The bootstrap administrator's key (the `key` is a member service account's, as CI's). */
  adminKey: string;
  /** Prometheus metrics (`GET` this URL). */
  metricsUrl: string;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts the API on `schema` (a fresh one when not given) with a service-account key, as CI
 * authenticates. `pgOptions` go to every session of its pool (auto_explain settings, say).
 * `embeddedDir` starts it on the embedded database in that directory instead, as the image
 * does without DATABASE_URL.
 */
export async function startApiProcess(
  opts: { schema?: string; pgOptions?: string; env?: Record<string, string>; embeddedDir?: string } = {},
): Promise<ApiProcess> {
  const fresh = opts.schema || opts.embeddedDir ? undefined : await newSchema('pipeline');
  const schema = opts.embeddedDir ? '' : (opts.schema ?? fresh!.schema);
  let url = opts.embeddedDir ? '' : withOptions(PIPELINE_DATABASE_URL, `-c search_path=${schema}`);
  if (opts.pgOptions && !opts.embeddedDir) {
    url = withOptions(url, opts.pgOptions);
  }
  const [port, metricsPort] = [await freePort(), await freePort()];
  const bootstrapKey = `bench-bootstrap-${randomBytes(16).toString('hex')}`;
  const [command, args] = await apiCommand();
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      VERITY_METRICS_PORT: String(metricsPort),
      VERITY_DB_POOL_MAX: String(POOL_MAX),
      VERITY_RATE_LIMIT_PER_MINUTE: '0',
      VERITY_AUTH_FAILURES_PER_MINUTE: '0',
      // 64 CI runs at once send 64 custom attestations at once; the default queue (20) refuses some.
      VERITY_JQ_QUEUE_PER_ORG: process.env.VERITY_JQ_QUEUE_PER_ORG ?? '256',
      ...(opts.embeddedDir ? { VERITY_DATA_DIR: opts.embeddedDir } : {}),
      ...opts.env,
      VERITY_BOOTSTRAP_ORG: 'bench',
      VERITY_BOOTSTRAP_API_KEY: bootstrapKey,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base, child, () => output);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  const admin: Target = { url: base, org: 'bench', key: bootstrapKey };
  await send(admin, 'POST', '/api/v2/service-accounts/bench', json({ name: 'ci', privilege: 'member' }));
  const created = await send(
    admin,
    'POST',
    '/api/v2/service-accounts/bench/ci/api-keys',
    json({ description: 'ci' }),
  );
  const key = (JSON.parse(created.body) as { key: string }).key;
  return {
    url: base,
    org: 'bench',
    key,
    adminKey: bootstrapKey,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    schema,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      await fresh?.drop();
    },
  };
}

/** A fastify hello world (`GET /`) in a child process of its own. */
export async function startHelloWorld(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import Fastify from 'fastify';
       const app = Fastify({ logger: false });
       app.get('/', async () => ({ hello: 'world' }));
       app.get('/ready', async () => 'OK');
       await app.listen({ port: ${port}, host: '127.0.0.1' });`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, child, () => output);
  return { url, stop: () => stopChild(child) };
}
