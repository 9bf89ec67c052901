/**
 * The baselines of the pipeline benchmark, measured in the same run: single-row insert
 * transactions (BEGIN, INSERT, COMMIT) sent straight through `pg` by 64 concurrent callers, and
 * GET load (autocannon, from a worker thread of the benchmark's process) on a given server.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { forDuration, type ConnectionRequest } from './pipeline-client.js';
import { newSchema, POOL_MAX } from './pipeline-server.js';

/** One single-row insert transaction (BEGIN, INSERT, COMMIT) into a `rows` table. */
export async function insertTransaction(pool: pg.Pool, trail: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('insert into rows values ($1, $2, $3, $4, $5, now())', [
      'org',
      randomBytes(16).toString('hex'),
      trail,
      'lint',
      '{"is_compliant":true}',
    ]);
    await client.query('commit');
  } finally {
    client.release();
  }
}

/** Single-row insert transactions per second by `connections` callers for `seconds`. */
export async function pgInsertRate(connections: number, seconds: number): Promise<number> {
  const s = await newSchema('pipeline_base');
  const pool = new pg.Pool({ connectionString: s.url, max: POOL_MAX });
  await pool.query(
    'create table rows (org_id text not null, id text not null, trail_id text not null, name text not null, payload jsonb not null, created_at timestamptz not null, primary key (org_id, id))',
  );
  const insert = (caller: number) => insertTransaction(pool, `t${caller}`);
  try {
    // Unmeasured warm-up: connections open, statements planned.
    await forDuration(connections, 1, insert);
    let done = 0;
    const elapsed = await forDuration(connections, seconds, async (caller) => {
      await insert(caller);
      done += 1;
    });
    return done / elapsed;
  } finally {
    await pool.end();
    await s.drop();
  }
}

const ROTATE = fileURLToPath(new URL('./request-paths.cjs', import.meta.url));
const PER_CONNECTION = fileURLToPath(new URL('./request-per-connection.cjs', import.meta.url));

export interface GetLoad {
  rate: number;
  p50: number;
  p99: number;
  failures: number;
}

/** GETs rotating through `paths` on `connections` connections for `seconds`. */
export async function getLoad(
  url: string,
  paths: string[],
  headers: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<GetLoad> {
  process.env.BENCH_REQUEST_PATHS = JSON.stringify(paths);
  return workerLoad(url, connections, seconds, { headers, requests: [{ setupRequest: ROTATE }] });
}

/**
 * autocannon in a worker thread, and its figures. Its hooks must be modules' paths there (a
 * function cannot be passed to a worker), which its types do not know.
 */
async function workerLoad(
  url: string,
  connections: number,
  seconds: number,
  options: Partial<Record<keyof autocannon.Options, unknown>>,
): Promise<GetLoad> {
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    workers: 1,
    ...options,
  } as autocannon.Options);
  return {
    rate: r['2xx'] / (r.duration || seconds),
    p50: r.latency.p50,
    p99: r.latency.p99,
    failures: r.non2xx + r.errors,
  };
}

/**
 * Load of `connections` connections for `seconds`, each sending its own request (the next of
 * `requests`, round robin) over and over: autocannon in a worker thread, as the GET load, so
 * the load costs the machine the API shares little beyond the bytes it sends.
 */
export async function connectionLoad(
  url: string,
  requests: readonly ConnectionRequest[],
  connections: number,
  seconds: number,
): Promise<GetLoad> {
  process.env.BENCH_CONNECTION_REQUESTS = JSON.stringify(requests);
  return workerLoad(url, connections, seconds, { setupClient: PER_CONNECTION });
}
