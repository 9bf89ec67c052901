/**
 * Retention removing a grown organization's trails while CI ingests (`npm run bench -- retention`).
 * The organization grows with SQL to BENCH_RETENTION_SEED attestations (default 1,000,000;
 * pipeline-seed.ts: 20 a trail, each trail with its artifact, events and evidence files), the seeded
 * trails are made 30 days old, and the API runs compiled in a child process (pipeline-server.ts)
 * with its own retention job off. The load: trail-level generic attestations on 64 trails with an
 * artifact, 64 connections (the pipeline benchmark's workload 3). Measured:
 * the ingest rate in windows that alternate: without removal, then while the retention job (this
 * process, as the admin command or a second replica runs it; VERITY_RETENTION_BATCH_SIZE /
 * _PAUSE_MS defaults) removes the seeded trails under a 10-day class, twice, ending without; and
 * what the job removed meanwhile.
 * Target: the mean rate during removal is at least 80% of the mean rate without it.
 * BENCH_DURATION_S (default 10) is each load's length.
 */
import pg from 'pg';
import { openDatabase } from '../services/api/src/storage/create-db.js';
import { databaseEvidenceStore } from '../services/api/src/usecases/evidence/evidence-store.js';
import { runRetention } from '../services/api/src/usecases/retention/retention-run.js';
import type { BenchContext, BenchFigure } from './harness.js';
import { connectionLoad } from './pipeline-baseline.js';
import { beginWithArtifact, genericRequest } from './pipeline-ci.js';
import { fingerprintOf, fmt, Recorder, type Target } from './pipeline-client.js';
import { grownSchema } from './pipeline-grown.js';
import { ATTESTATIONS_PER_TRAIL } from './pipeline-seed.js';
import { ensureDatabase, startApiProcess } from './pipeline-server.js';

const CONNECTIONS = 64;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const SEED = Number(process.env.BENCH_RETENTION_SEED ?? 1_000_000);
const BATCH = Number(process.env.VERITY_RETENTION_BATCH_SIZE ?? 50);
const PAUSE_MS = Number(process.env.VERITY_RETENTION_PAUSE_MS ?? 200);
const ROUNDS = 2;
const WARM_UP_S = Number(process.env.BENCH_RETENTION_WARM_UP_S ?? 30);

/** 64 trails, each with its artifact reported. */
async function ingestTrails(t: Target): Promise<Array<{ trail: string }>> {
  const rec = new Recorder();
  const trails = Array.from({ length: CONNECTIONS }, (_, i) => ({ trail: `ingest-${i}` }));
  await Promise.all(
    trails.map(({ trail }) => beginWithArtifact(t, rec, trail, fingerprintOf(`artifact ${trail}`))),
  );
  if (rec.failures.size > 0) {
    throw new Error(`setup failed: ${JSON.stringify([...rec.failures])}`);
  }
  return trails;
}

export default async function bench(ctx: BenchContext): Promise<BenchFigure[]> {
  await ensureDatabase();
  const s = await grownSchema('retention', SEED, (line) => ctx.log(line));
  const c = new pg.Client({ connectionString: s.url });
  await c.connect();
  try {
    // The seeded trails were written a month ago; the class below keeps ten days.
    await c.query(`update trails set created_at = created_at - interval '30 days',
      last_modified_at = last_modified_at - interval '30 days' where name like 'seed-%'`);
    await c.query(`insert into retention_settings (org_id, settings, updated_by, updated_at)
      select id, '{"default":{"trails_days":10},"flows":{},"environments":{}}', 'bench', now() from orgs where name = 'bench'`);
    await c.query('analyze trails');
    const api = await startApiProcess({ schema: s.schema, env: { VERITY_NOTIFIER_ENABLED: 'false' } });
    const handle = await openDatabase({ databaseUrl: s.url, poolMax: 2 });
    try {
      const trails = await ingestTrails(api);
      const requests = trails.map(({ trail }) => genericRequest(api, trail, 'security-review', null));
      const load = async (label: string) => {
        const r = await connectionLoad(api.url, requests, CONNECTIONS, DURATION_S);
        ctx.log(
          `${label}: ${fmt(r.rate)} attestations/s (p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.failures} failed)`,
        );
        return r;
      };
      // After the seed the server and PostgreSQL warm up for a while: the rate climbs for tens of
      // seconds, which would read as the removal's cost.
      await connectionLoad(api.url, requests, CONNECTIONS, WARM_UP_S);
      // The machine's speed drifts over a run: windows with and without removal alternate, and
      // the rates with removal are compared with those of the windows around them.
      let removedTrails = 0;
      let removalSeconds = 0;
      const withRemoval = async (label: string) => {
        let stop = false;
        let inRun = 0;
        const started = performance.now();
        const removal = runRetention({
          db: handle.db,
          store: databaseEvidenceStore,
          minimum: { trails_days: 0, evidence_files_days: 0, snapshots_days: 0, audit_log_days: 0 },
          batchSize: BATCH,
          pauseMs: PAUSE_MS,
          clock: () => new Date(),
          runBy: 'bench',
          stopped: () => stop,
          onProgress: (p) => {
            if (p.kind === 'trails') {
              inRun = p.count;
            }
          },
        });
        const r = await load(label);
        const removedInWindow = inRun;
        removalSeconds += (performance.now() - started) / 1000;
        stop = true;
        await removal;
        removedTrails += removedInWindow;
        return r;
      };
      const without = [await load('ingest without removal 1')];
      const during = [];
      for (let i = 1; i <= ROUNDS; i++) {
        during.push(await withRemoval(`ingest during removal ${i}`));
        without.push(await load(`ingest without removal ${i + 1}`));
      }
      const mean = (xs: Array<{ rate: number }>) => xs.reduce((a, x) => a + x.rate, 0) / xs.length;
      const ratio = mean(during) / mean(without);
      const removalRate = (removedTrails * ATTESTATIONS_PER_TRAIL) / removalSeconds;
      ctx.log(
        `removal: ${fmt(removedTrails)} trails (${fmt(removedTrails * ATTESTATIONS_PER_TRAIL)} attestations) in ${removalSeconds.toFixed(1)} s, batches of ${BATCH}, ${PAUSE_MS} ms pauses`,
      );
      return [
        {
          name: `ingest during retention removal, org of ${fmt(s.seeded.attestations)} attestations`,
          value: `${fmt(mean(during))} vs ${fmt(mean(without))} attestations/s without (${(ratio * 100).toFixed(0)}%)`,
          target: '>= 80% of the rate without removal',
          pass: ratio >= 0.8,
        },
        {
          name: 'retention removal rate while ingest runs',
          value: `${fmt(removalRate)} attestations/s (${fmt(removedTrails / removalSeconds)} trails/s)`,
        },
      ];
    } finally {
      await handle.close();
      await api.stop();
    }
  } finally {
    await c.end();
    await s.drop();
  }
}
