/**
 * Evidence benchmarks on PostgreSQL (issue: Performance), each against a baseline measured in the
 * same run, with a service-account key as CI uses. Load comes from an autocannon worker thread:
 *  1. Attestation ingest: generic attestations as the CLI posts them (multipart), 64 connections,
 *     spread over 256 trails of one flow, vs the same number of single-row insert transactions
 *     sent straight through `pg` by 64 concurrent callers. Target: at least 40% of the baseline rate.
 *  2. GET artifact by fingerprint (with evidence and history), 64 connections, vs a fastify
 *     hello-world route. Targets: at least 25% of the baseline rate, p99 under 20 ms.
 */
import autocannon from 'autocannon';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startApi, type BenchContext, type BenchFigure } from './harness.js';
import { insertTransaction } from './pipeline-baseline.js';

const CONNECTIONS = 64;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const TRAILS = 256;
const POOL_MAX = 20;
const WARMUP_S = 2;

function multipart(fields: Record<string, string>): { body: Buffer; contentType: string } {
  const boundary = randomBytes(30).toString('hex');
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

const ROTATE = fileURLToPath(new URL('./request-paths.cjs', import.meta.url));

/**
 * Load from a worker thread, so the load generator never runs on the event loop of the server
 * it measures (they still share the machine's cores). With `paths`, requests rotate through them.
 */
async function load(opts: autocannon.Options, paths?: string[]): Promise<autocannon.Result> {
  process.env.BENCH_REQUEST_PATHS = JSON.stringify(paths ?? [new URL(opts.url).pathname]);
  return autocannon({
    connections: CONNECTIONS,
    duration: DURATION_S,
    workers: 1,
    ...opts,
    ...(paths ? { requests: [{ setupRequest: ROTATE }] } : {}),
  });
}

const rate = (r: autocannon.Result) => r.requests.total / (r.duration || DURATION_S);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export default async function bench(ctx: BenchContext): Promise<BenchFigure[]> {
  const api = await startApi({ postgres: true, poolMax: POOL_MAX });
  // CI pipelines use service-account keys; create one as the CLI would.
  const admin = { authorization: `Bearer ${api.key}`, 'content-type': 'application/json; charset=utf-8' };
  await fetch(`${api.url}/api/v2/service-accounts/bench`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'ci', privilege: 'member' }),
  });
  const created = (await (
    await fetch(`${api.url}/api/v2/service-accounts/bench/ci/api-keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ description: 'bench' }),
    })
  ).json()) as { key: string };
  const headers = {
    authorization: `Bearer ${created.key}`,
    'user-agent': 'Kosli/v2.38.0',
  };
  const figures: BenchFigure[] = [];
  try {
    const json = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) {
        throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      }
    };
    await json('PUT', '/api/v2/flows/bench', { name: 'ci', description: 'bench' });
    for (let i = 0; i < TRAILS; i++) {
      await json('PUT', '/api/v2/trails/bench/ci', { name: `t${i}` });
    }

    // 1. Attestation ingest.
    const form = multipart({
      data_json: JSON.stringify({
        attestation_name: 'lint',
        is_compliant: true,
        user_data: {},
        origin_url: 'https://ci/1',
      }),
    });
    const ingestLoad = (duration: number) =>
      load(
        {
          url: api.url,
          method: 'POST',
          headers: { ...headers, 'content-type': form.contentType },
          // A string: a Buffer reaches the worker thread as a plain byte array, which autocannon refuses.
          body: form.body.toString('utf8'),
          duration,
        },
        Array.from({ length: TRAILS }, (_, i) => `/api/v2/attestations/bench/ci/trail/t${i}/generic`),
      );
    // Unmeasured warm-up, as for the baseline: connections open, statements planned.
    await ingestLoad(WARMUP_S);
    const ingest = await ingestLoad(DURATION_S);
    const ingestOk = ingest['2xx'];
    if (ingest.non2xx > 0 || ingest.errors > 0) {
      ctx.log(`ingest: ${ingest.non2xx} non-2xx, ${ingest.errors} errors`);
    }
    const ingestRate = ingestOk / (ingest.duration || DURATION_S);

    const baselineRate = await pgInsertBaseline(api.db, ingestOk);
    ctx.log(
      `ingest ${fmt(ingestRate)} req/s (p99 ${ingest.latency.p99} ms); pg baseline ${fmt(baselineRate)} tx/s`,
    );
    figures.push({
      name: 'attestation ingest vs pg single-row inserts (64 conns)',
      value: `${(ingestRate / baselineRate).toFixed(2)} (${fmt(ingestRate)} vs ${fmt(baselineRate)} /s; ingest p99 ${ingest.latency.p99} ms)`,
      target: '>= 0.40',
      pass: ingestRate / baselineRate >= 0.4,
    });

    // 2. GET artifact by fingerprint.
    const fps: string[] = [];
    for (let i = 0; i < 16; i++) {
      const fp = createHash('sha256').update(`artifact-${i}`).digest('hex');
      fps.push(fp);
      await json('POST', '/api/v2/artifacts/bench/ci', {
        fingerprint: fp,
        filename: `registry/app:${i}`,
        git_commit: 'a'.repeat(40),
        build_url: 'https://ci/1',
        commit_url: 'https://git/1',
        template_reference_name: 'app',
        trail_name: `t${i}`,
      });
      for (const name of ['unit', 'scan', 'sbom']) {
        const f = multipart({
          data_json: JSON.stringify({ attestation_name: name, artifact_fingerprint: fp, is_compliant: true }),
        });
        const res = await fetch(`${api.url}/api/v2/attestations/bench/ci/trail/t${i}/generic`, {
          method: 'POST',
          headers: { ...headers, 'content-type': f.contentType },
          body: f.body,
        });
        if (res.status !== 201) {
          throw new Error(`attest: ${res.status}`);
        }
      }
    }
    const get = await load(
      { url: api.url, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' } },
      fps.map((fp) => `/api/v2/artifacts/bench/ci/fingerprint/${fp}`),
    );
    if (get.non2xx > 0 || get.errors > 0) {
      ctx.log(`get: ${get.non2xx} non-2xx, ${get.errors} errors`);
    }
    // For scale: an authenticated route doing one query (the organization), under the same load.
    const org = await load({ url: `${api.url}/api/v2/organizations/bench`, headers });
    const hello = await helloWorldRate();
    const getRate = rate(get);
    figures.push({
      name: 'for scale: GET organization (auth + 1 query) vs hello world',
      value: `${(rate(org) / rate(hello)).toFixed(2)} (${fmt(rate(org))} req/s, p99 ${org.latency.p99} ms)`,
    });
    ctx.log(
      `get artifact ${fmt(getRate)} req/s (p50 ${get.latency.p50} ms, p99 ${get.latency.p99} ms); hello world ${fmt(rate(hello))} req/s`,
    );
    figures.push({
      name: 'GET artifact by fingerprint vs fastify hello world (64 conns)',
      value: `${(getRate / rate(hello)).toFixed(2)} (${fmt(getRate)} vs ${fmt(rate(hello))} req/s)`,
      target: '>= 0.25',
      pass: getRate / rate(hello) >= 0.25,
    });
    figures.push({
      name: 'GET artifact by fingerprint p99 latency (64 conns)',
      value: `${get.latency.p99} ms (p50 ${get.latency.p50} ms, p97.5 ${get.latency.p97_5} ms)`,
      target: '< 20 ms',
      pass: get.latency.p99 < 20,
    });
  } finally {
    await api.close();
  }
  return figures;
}

/** `count` single-row insert transactions (BEGIN, INSERT, COMMIT) by 64 concurrent callers through pg. */
async function pgInsertBaseline(db: { db: unknown }, count: number): Promise<number> {
  void db;
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const schema = `bench_base_${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: url, max: POOL_MAX, options: `-c search_path=${schema}` });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.query(
    `create table ${schema}.rows (org_id text not null, id text not null, trail_id text not null, name text not null, payload jsonb not null, created_at timestamptz not null, primary key (org_id, id))`,
  );
  try {
    // Unmeasured warm-up, as for the ingest: connections open, statements planned.
    await inserts(pool, 1_000);
    const started = performance.now();
    await inserts(pool, count);
    return count / ((performance.now() - started) / 1000);
  } finally {
    await pool.end();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}

/** `count` single-row insert transactions by CONNECTIONS concurrent callers. */
async function inserts(pool: pg.Pool, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) {
        next++;
        await insertTransaction(pool, `t${next % TRAILS}`);
      }
    }),
  );
}

/** A fastify hello-world route under the same load, in the same process. */
async function helloWorldRate(): Promise<autocannon.Result> {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return await load({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/` });
  } finally {
    await app.close();
  }
}
