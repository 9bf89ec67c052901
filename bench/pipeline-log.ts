/**
 * The transparency log's cost to ingest, a part of `npm run bench -- pipeline`: artifact-bound and
 * trail-level generic attestations (workloads 2 and 3, as the CLI sends them), on two API
 * processes started side by side, one with the log on (the default), one with it off
 * (`VERITY_TRANSPARENCY_LOG=off`), each on a schema of its own. The load alternates between them
 * in BENCH_LOG_SEGMENTS segments each (default 8) of BENCH_LOG_SEGMENT_S seconds (default 5),
 * the order swapped every round; after a segment with the log, the next waits until its sequencer
 * has integrated everything queued, so its work is counted where it belongs, and after every
 * segment PostgreSQL checkpoints, so that no segment pays for what the one before left to write. Each round gives
 * the ratio of its two segments' rates; the figure is the median of the rounds' ratios, against
 * the target of 0.90 (ingest within 10% of its rate without the log), with the rates over all
 * segments beside it. A second figure, without a target, divides the machine's busy CPU time
 * (every process, from /proc/stat) over each side's segments, the log's sequencing until its queue
 * is empty included, by the attestations written: the log's cost as work rather than as a rate,
 * which the machine's drift moves much less. Whole benchmark runs a few minutes apart, or processes measured one after
 * the other, differ by more than that on a 2-core machine: its speed drifts by 10% or more within
 * a minute, and one segment in several loses a third of its rate to something else (a checkpoint,
 * autovacuum), whichever side it falls on; the median leaves such a round out.
 */
import pg from 'pg';
import { addCpu, cpuSample, type CpuSample } from './cpu-sample.js';
import { connectionLoad } from './pipeline-baseline.js';
import { beginWithArtifact, genericRequest, ingestAttestation, setupFlow } from './pipeline-ci.js';
import { fingerprintOf, fmt, Recorder, type ConnectionRequest } from './pipeline-client.js';
import {
  checkpointServer,
  PIPELINE_DATABASE_URL,
  startApiProcess,
  type ApiProcess,
} from './pipeline-server.js';
import type { BenchContext, BenchFigure } from './harness.js';

const CONNECTIONS = 64;
const ZERO: CpuSample = { machine: 0, process: 0, postgres: 0 };
const TARGET = 0.9;

type Workload = 'bound' | 'trail';
const NAMES: Record<Workload, string> = {
  bound: 'artifact-bound attestations, 64 trails with artifacts',
  trail: 'trail-level attestations, 64 trails with artifacts',
};

/** The requests of a workload on a process: one per connection, each over its own trail. */
async function requestsFor(api: ApiProcess, workload: Workload): Promise<ConnectionRequest[]> {
  const rec = new Recorder();
  const trails = Array.from({ length: CONNECTIONS }, (_, i) => ({
    trail: `log-${workload}-${i}`,
    fp: fingerprintOf(`artifact log-${workload}-${i}`),
  }));
  await Promise.all(trails.map(({ trail, fp }) => beginWithArtifact(api, rec, trail, fp)));
  if (rec.failed() > 0) {
    throw new Error(`setup failed: ${JSON.stringify([...rec.failures])}`);
  }
  return trails.map((_, caller) => {
    const a = ingestAttestation(workload, trails, caller);
    return genericRequest(api, a.trail, a.name, a.fp);
  });
}

/** Waits until the schema's log queue is empty (the sequencer has caught up), at most 60 s. */
async function drained(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PIPELINE_DATABASE_URL });
  await c.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await c.query<{ n: string }>(
        `select count(*) as n from (select 1 from "${schema}".log_queue limit 1) q`,
      );
      if (rows[0]!.n === '0') {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`the log's queue of ${schema} did not drain in 60 s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await c.end();
  }
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * Between segments, whichever side ran: a checkpoint (what the segment left dirty is written
 * now, not during the next segment; each segment then starts where the first change to a page
 * writes the whole page to the WAL) and a second's pause.
 */
async function settle(): Promise<void> {
  await checkpointServer();
  await new Promise((r) => setTimeout(r, 1000));
}

interface Side {
  api: ApiProcess;
  log: boolean;
  requests: Record<Workload, ConnectionRequest[]>;
  count: number;
  seconds: number;
  /** CPU seconds over the segments, the log's sequencing after each included (null: unknown). */
  cpu: CpuSample | null;
}

async function segment(side: Side, workload: Workload, seconds: number): Promise<number> {
  const before = cpuSample(side.api.pid);
  const r = await connectionLoad(side.api.url, side.requests[workload], CONNECTIONS, seconds);
  if (r.failures > 0) {
    throw new Error(`${workload} with the log ${side.log ? 'on' : 'off'}: ${r.failures} requests failed`);
  }
  if (side.log) {
    await drained(side.api.schema);
  }
  side.cpu = addCpu(side.cpu, before, cpuSample(side.api.pid));
  await settle();
  side.count += r.rate * seconds;
  side.seconds += seconds;
  return r.rate;
}

/** CPU microseconds per attestation of a side (the machine's, its API's, PostgreSQL's), or null. */
function cpuPerAttestation(s: Side): CpuSample | null {
  if (!s.cpu || s.count === 0) {
    return null;
  }
  const per = (x: number) => (x * 1e6) / s.count;
  return { machine: per(s.cpu.machine), process: per(s.cpu.process), postgres: per(s.cpu.postgres) };
}

const cpuText = (c: CpuSample) =>
  `${c.machine.toFixed(0)} µs (API ${c.process.toFixed(0)}, PostgreSQL ${c.postgres.toFixed(0)})`;

/** The log's figures: per workload the rate with the log over the rate without. */
export async function logCost(ctx: BenchContext): Promise<BenchFigure[]> {
  const segments = Math.max(1, Number(process.env.BENCH_LOG_SEGMENTS ?? 8));
  const seconds = Math.max(1, Number(process.env.BENCH_LOG_SEGMENT_S ?? 5));
  const sides: Side[] = [];
  try {
    for (const log of [true, false]) {
      const api = await startApiProcess(log ? {} : { env: { VERITY_TRANSPARENCY_LOG: 'off' } });
      sides.push({ api, log, requests: {} as Side['requests'], count: 0, seconds: 0, cpu: ZERO });
      await setupFlow(api);
    }
    const figures: BenchFigure[] = [];
    for (const workload of ['bound', 'trail'] as const) {
      for (const s of sides) {
        s.requests[workload] = await requestsFor(s.api, workload);
        s.count = 0;
        s.seconds = 0;
        s.cpu = ZERO;
        await connectionLoad(s.api.url, s.requests[workload], CONNECTIONS, 2); // warm-up
      }
      const ratios: number[] = [];
      for (let i = 0; i < segments; i++) {
        const order = i % 2 === 0 ? sides : [...sides].reverse();
        const rates = new Map<boolean, number>();
        for (const s of order) {
          rates.set(s.log, await segment(s, workload, seconds));
        }
        ratios.push(rates.get(true)! / rates.get(false)!);
      }
      const [on, off] = sides.map((s) => s.count / s.seconds) as [number, number];
      const [cpuOn, cpuOff] = sides.map(cpuPerAttestation);
      const m = median(ratios);
      ctx.log(
        `log cost, ${workload}: ${fmt(on)} /s with the log, ${fmt(off)} /s without; rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}` +
          (cpuOn && cpuOff
            ? `; CPU per attestation with the log (its sequencing included) ${cpuText(cpuOn)}, without ${cpuText(cpuOff)} (machine ${(cpuOff.machine / cpuOn.machine).toFixed(2)})`
            : ''),
      );
      if (cpuOn && cpuOff) {
        figures.push({
          name: `transparency log: ${NAMES[workload]}, the machine's busy CPU per attestation without the log vs with it (all segments, the log's sequencing included)`,
          value: `${(cpuOff.machine / cpuOn.machine).toFixed(2)} (${cpuText(cpuOn)} vs ${cpuText(cpuOff)})`,
        });
      }
      figures.push({
        name: `transparency log: ${NAMES[workload]}, rate with the log vs without (median of ${segments} rounds of alternating ${seconds} s segments)`,
        value: `${m.toFixed(2)} (rounds ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)}; all segments ${fmt(on)} vs ${fmt(off)} /s, ${(on / off).toFixed(2)})`,
        target: `>= ${TARGET.toFixed(2)}`,
        pass: m >= TARGET,
      });
    }
    return figures;
  } finally {
    for (const s of sides) {
      await s.api.stop();
    }
  }
}
