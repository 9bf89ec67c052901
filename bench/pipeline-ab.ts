/**
 * One workload of the pipeline benchmark on a fresh API process, with the CPU time it cost:
 * `npx tsx bench/pipeline-ab.ts <workload> [seconds]`, for comparing two builds in alternated
 * runs (`BENCH_API_ROOT` runs another checkout's build; pipeline-server.ts). A whole
 * `npm run bench -- pipeline` varies too much from run to run to show a change of 10%.
 * Workloads: `bound` (artifact-bound generic attestations, 64 trails with artifacts), `trail`
 * (trail-level, same trails), `one` (one trail, 64 writers), `pipeline` (whole CI runs, as
 * workload 1), `get` (GET artifact over 64 CI artifacts, read cache off; BENCH_AB_CACHE=1 keeps it on,
 * as the benchmark's read-cache figure measures it). BENCH_AB_PRE=<s> first
 * runs whole CI runs for that long on the same organization, as the benchmark does.
 * BENCH_AB_SEED=<n> runs the workload on an organization seeded with n attestations first, as the
 * benchmark's grown organization (pipeline-seed.ts), on a new API process.
 * BENCH_AB_CHECKPOINT=1 makes PostgreSQL checkpoint just before the measurement,
 * so that it starts where the first change to each page writes the whole page to the WAL.
 * `k8s [n]` sends the benchmark's 5,000-pod K8S report to n new environments (default 3) and prints,
 * for each, the first report, the median identical one and the median rollout (pipeline-k8s.ts);
 * without BENCH_AB_SEED, CI runs first give the organization the artifacts the pods run.
 * `bound`, `trail` and `one` send their load as the benchmark does (autocannon in a worker
 * thread, one request per connection); BENCH_AB_LOAD=http sends it from this thread with
 * node:http instead, as the benchmark did before, to compare the two load generators.
 * Prints the rate, p50/p99, and per request the CPU time of the API process, of every
 * PostgreSQL process and of this load generator, and the bytes the API process read and wrote
 * through its sockets and files (from /proc; Linux only), and the WAL PostgreSQL wrote per request
 * (the whole server's, so nothing else should write meanwhile).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { connectionLoad, getLoad } from './pipeline-baseline.js';
import { k8sReports } from './pipeline-k8s.js';
import {
  attestGeneric,
  beginWithArtifact,
  FLOW,
  genericRequest,
  ingestAttestation,
  pipeline,
  setupFlow,
  type IngestWorkload,
} from './pipeline-ci.js';
import { fingerprintOf, fmt, forDuration, ms, Recorder } from './pipeline-client.js';
import {
  checkpointServer,
  ensureDatabase,
  PIPELINE_DATABASE_URL,
  startApiProcess,
  withOptions,
} from './pipeline-server.js';
import { grownSchema } from './pipeline-grown.js';

const WORKLOADS = ['bound', 'trail', 'one', 'pipeline', 'get', 'k8s'] as const;
type Workload = (typeof WORKLOADS)[number];
const workload = process.argv[2] as Workload;
const seconds = Number(process.argv[3] ?? (process.argv[2] === 'k8s' ? 3 : 8));
const PRE_S = Number(process.env.BENCH_AB_PRE ?? 0);
const SEED = Number(process.env.BENCH_AB_SEED ?? 0);
const CHECKPOINT = process.env.BENCH_AB_CHECKPOINT === '1';
if (!WORKLOADS.includes(workload) || !(seconds > 0)) {
  process.stderr.write(
    `usage: npx tsx bench/pipeline-ab.ts ${WORKLOADS.join('|')} [seconds, or environments for k8s]\n`,
  );
  process.exit(2);
}

/** User plus system CPU time of a process, ms (0 once it is gone). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

function postgresPids(): number[] {
  try {
    return execFileSync('pgrep', ['-f', 'postgres: ']).toString().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Bytes a process has read and written through system calls, sockets included (0 once it is gone). */
function ioBytes(pid: number): { read: number; written: number } {
  try {
    const io = Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(': ') as [string, string]),
    );
    return { read: Number(io.rchar), written: Number(io.wchar) };
  } catch {
    return { read: 0, written: 0 };
  }
}

/** Each PostgreSQL process's CPU time by pid, ms. */
const postgresCpu = () => new Map(postgresPids().map((pid) => [pid, cpuMs(pid)]));

/**
 * PostgreSQL CPU time spent since `before`: what each process running now spent since then (all
 * of it when it started since). A backend that exited meanwhile (a warm-up's connection) counts
 * for nothing, rather than taking its whole past off the sum.
 */
const postgresCpuSince = (before: Map<number, number>) =>
  [...postgresCpu()].reduce((sum, [pid, now]) => sum + now - (before.get(pid) ?? 0), 0);

/** The server's WAL insert position, bytes (pg_current_wal_lsn). */
async function walPosition(): Promise<bigint> {
  const c = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
  await c.connect();
  try {
    const { rows } = await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
    const [hi, lo] = rows[0]!.lsn.split('/').map((x) => BigInt(`0x${x}`));
    return (hi! << 32n) + lo!;
  } finally {
    await c.end();
  }
}

async function analyzeSchema(schema: string): Promise<void> {
  const c = new pg.Client({
    connectionString: withOptions(PIPELINE_DATABASE_URL, `-c search_path=${schema}`),
  });
  await c.connect();
  try {
    for (const { name } of (
      await c.query<{ name: string }>(
        'select relname as name from pg_stat_user_tables where schemaname = $1',
        [schema],
      )
    ).rows) {
      await c.query(`analyze "${name}"`);
    }
  } finally {
    await c.end();
  }
}

await ensureDatabase();
const grown = SEED > 0 ? await grownSchema('pipeline_ab_grown', SEED, () => undefined) : undefined;
if (grown) {
  process.stdout.write(
    `seeded ${fmt(grown.seeded.attestations)} attestations in ${Math.round(grown.seeded.seconds)} s\n`,
  );
}
const api = await startApiProcess({
  ...(grown ? { schema: grown.schema } : {}),
  ...(workload === 'get' && process.env.BENCH_AB_CACHE !== '1'
    ? { env: { VERITY_READ_CACHE_ENTRIES: '0' } }
    : {}),
});
try {
  if (!grown) {
    await setupFlow(api);
  }
  const trails = Array.from({ length: 64 }, (_, i) => ({
    trail: `ab-${i}`,
    fp: fingerprintOf(`artifact ab-${i}`),
  }));
  await Promise.all(trails.map(({ trail, fp }) => beginWithArtifact(api, new Recorder(), trail, fp)));
  const runs: string[] = [];
  const ciRuns = (s: number, rec: Recorder, prefix: string) =>
    forDuration(64, s, async (caller, round) => {
      const trail = `${prefix}-${caller}-${round}`;
      await pipeline(api, rec, trail);
      runs.push(fingerprintOf(`artifact ${trail}`));
    });
  if (PRE_S > 0 || workload === 'get') {
    await ciRuns(Math.max(PRE_S, 2), new Recorder(), 'pre');
  }
  /** The ingest and GET workloads: the rate, latencies, CPU and bytes per request. */
  const measureLoad = async () => {
    const ingest = (caller: number) => ingestAttestation(workload as IngestWorkload, trails, caller);
    const attest = (rec: Recorder, caller: number) => {
      const a = ingest(caller);
      return attestGeneric(api, rec, workload, a.trail, a.name, a.fp);
    };
    const run = async (
      s: number,
      rec: Recorder,
    ): Promise<{ count: number; p50: number; p99: number; failed: number }> => {
      if (workload === 'get') {
        const paths = runs.slice(0, 64).map((fp) => `/api/v2/artifacts/${api.org}/${FLOW}/fingerprint/${fp}`);
        const g = await getLoad(api.url, paths, { authorization: `Bearer ${api.key}` }, 64, s);
        return { count: g.rate * s, p50: g.p50, p99: g.p99, failed: g.failures };
      }
      if (workload !== 'pipeline' && process.env.BENCH_AB_LOAD !== 'http') {
        const requests = trails.map((_, caller) => {
          const a = ingest(caller);
          return genericRequest(api, a.trail, a.name, a.fp);
        });
        const g = await connectionLoad(api.url, requests, 64, s);
        return { count: g.rate * s, p50: g.p50, p99: g.p99, failed: g.failures };
      }
      const elapsed =
        workload === 'pipeline'
          ? await ciRuns(s, rec, `run-${s}`)
          : await forDuration(64, s, async (caller) => void (await attest(rec, caller)));
      return { count: (rec.count() * s) / elapsed, ...rec.percentiles(), failed: rec.failed() };
    };
    await run(2, new Recorder()); // warm-up
    if (CHECKPOINT) {
      await checkpointServer();
    }
    const before = {
      api: cpuMs(api.pid),
      pg: postgresCpu(),
      load: process.cpuUsage(),
      io: ioBytes(api.pid),
      wal: await walPosition(),
    };
    const r = await run(seconds, new Recorder());
    const load = process.cpuUsage(before.load);
    const io = ioBytes(api.pid);
    const wal = Number((await walPosition()) - before.wal);
    const per = (msTotal: number) => (msTotal / r.count).toFixed(3);
    process.stdout.write(
      `${workload}: ${fmt(r.count / seconds)} /s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, ${r.failed} failed\n` +
        `CPU ms per request: API ${per(cpuMs(api.pid) - before.api)}, PostgreSQL ${per(postgresCpuSince(before.pg))}, ` +
        `load ${per((load.user + load.system) / 1000)}\n` +
        `API bytes per request: read ${fmt((io.read - before.io.read) / r.count)}, ` +
        `written ${fmt((io.written - before.io.written) / r.count)}; PostgreSQL WAL per request ${fmt(wal / r.count)}\n`,
    );
  };
  /** Reports to `seconds` new environments, each timed as the benchmark times them. */
  const measureK8s = async () => {
    // The pods run 507 of the organization's artifacts (pipeline-k8s.ts); the seed has them.
    while (!grown && runs.length < 520) {
      await ciRuns(5, new Recorder(), `k8s-${runs.length}`);
    }
    // Statistics as the API's own loop (or autovacuum) keeps them a minute later: the tables
    // grew from nothing within the last minute, and the benchmark's reports come minutes in.
    await analyzeSchema(api.schema);
    for (let i = 0; i < seconds; i++) {
      const cpu = cpuMs(api.pid);
      const k = await k8sReports(api, `ab-cluster-${i}`);
      process.stdout.write(
        `k8s ${i + 1}: first ${k.firstsMs.map((x) => ms(x)).join(', ')} ms, identical ${ms(k.identicalMs)} ms, rollout ${ms(k.rolloutMs)} ms ` +
          `(${k.known} of the 500 fingerprints artifacts; API CPU ${cpuMs(api.pid) - cpu} ms in all)\n`,
      );
    }
  };
  await (workload === 'k8s' ? measureK8s() : measureLoad());
} finally {
  await api.stop();
  await grown?.drop();
}
