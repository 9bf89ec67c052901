/**
 * The reporter at scale (issue 5): 10,000 pods in 200 namespaces in the Kubernetes API server
 * double, the compiled reporter in its own process (as the image runs it) with default timings,
 * reports going to the recording receiver.
 *
 * Figures:
 * - detection latency: from a rollout (new pods running, old ones gone) to the PUT carrying the
 *   new digest; target debounce + 500 ms. Printed also as a ratio against the CLI chart, whose
 *   CronJob lists every pod every 5 minutes: its worst-case detection is 300 s plus one full
 *   list-and-PUT of the same cluster, measured here in the same run;
 * - PUTs during a storm of 1,000 scale-up and scale-down events: target 0;
 * - the reporter's peak resident memory: target under 150 MiB.
 *
 * The reporter runs with the image's NODE_OPTIONS (heap sizing); BENCH_REPORTER_NODE_FLAGS
 * overrides them, BENCH_REPORTER_LOG=file keeps its log.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { createClient } from '../services/shared/client/index.js';
import { podsToK8sReport } from '../services/reporter/src/pods-report.js';
import { ApiServerDouble } from '../test/k8s/api-server-double.js';
import { deploymentPods, digestOf, makePod } from '../test/k8s/pods.js';
import { RecordingReceiver } from '../test/k8s/receiver.js';
import { nextEvent } from '../test/k8s/wait.js';
import type { BenchContext, BenchFigure } from './harness.js';

const NAMESPACES = 200;
const DEPLOYMENTS_PER_NAMESPACE = 10;
const REPLICAS = 5; // 200 x 10 x 5 = 10,000 pods
const STORM_EVENTS = 1000;
const ROLLOUTS = 5;
const DEBOUNCE_MS = 2000;
const CRON_PERIOD_S = 300;
const KEY = 'bench-reporter-key-0123456789';
/** What Dockerfile.reporter sets; the figures are for the process as the image runs it. */
const IMAGE_NODE_OPTIONS =
  /NODE_OPTIONS="([^"]*)"/.exec(readFileSync('Dockerfile.reporter', 'utf8'))?.[1] ?? '';

const ns = (i: number) => `team-${String(i).padStart(3, '0')}`;
const image = (n: number, d: number, version: number) => `ghcr.io/acme/${ns(n)}-svc-${d}:${version}`;

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The first JSON log line whose msg is `msg`; leaves the stream flowing (breaking a for-await would close it). */
function waitForLog(child: ChildProcessWithoutNullStreams, msg: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, any>;
          if (entry.msg !== msg) {
            continue;
          }
          child.stdout.off('data', onData);
          return resolve(entry);
        } catch {
          // not JSON
        }
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', () => reject(new Error(`reporter exited before '${msg}'`)));
  });
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

export default async function run(ctx: BenchContext): Promise<BenchFigure[]> {
  ctx.log('compiling (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], { encoding: 'utf8' });
  if (build.status !== 0) {
    throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  }

  const double = await new ApiServerDouble({ historyLimit: 200_000 }).start();
  for (let n = 0; n < NAMESPACES; n++) {
    for (let d = 0; d < DEPLOYMENTS_PER_NAMESPACE; d++) {
      for (const pod of deploymentPods(ns(n), `svc-${d}`, image(n, d, 1), REPLICAS)) {
        double.putPod(pod);
      }
    }
  }
  const receiver = await new RecordingReceiver('bench', KEY).start();
  receiver.environments.set('cluster', 'K8S');
  const dir = mkdtempSync(join(tmpdir(), 'verity-bench-reporter-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, double.kubeconfigYaml());
  ctx.log(
    `${double.store.list({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true }).length} pods in ${NAMESPACES} namespaces`,
  );

  // Baseline, same run: what one CronJob run of the CLI chart does to this cluster, a full
  // unpaged list of every pod, the report built, one PUT.
  const t = performance.now();
  const { items } = await double.kubeConfig().makeApiClient(CoreV1Api).listPodForAllNamespaces();
  const client = createClient({ baseUrl: receiver.url, org: 'bench', token: KEY });
  await client.environments.report('cluster', 'K8S', podsToK8sReport(items).report);
  const fullListMs = performance.now() - t;
  ctx.log(`baseline: full list of ${items.length} pods + report + PUT in ${fullListMs.toFixed(0)} ms`);
  receiver.received.length = 0;

  const started = performance.now();
  // The image's NODE_OPTIONS (Dockerfile.reporter) unless the run asks for others.
  const flags = (process.env.BENCH_REPORTER_NODE_FLAGS ?? IMAGE_NODE_OPTIONS).split(' ').filter(Boolean);
  ctx.log(`reporter node flags: ${flags.join(' ') || '(none)'}`);
  const child = spawn(process.execPath, [...flags, join('dist', 'services', 'reporter', 'src', 'main.js')], {
    env: {
      PATH: process.env.PATH,
      ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
      KUBECONFIG: kubeconfig,
      VERITY_API_URL: receiver.url,
      VERITY_ORG: 'bench',
      VERITY_API_TOKEN: KEY,
      VERITY_ENVIRONMENT: 'cluster',
      VERITY_REPORTER_PORT: '0',
      VERITY_REPORTER_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const firstReport = nextEvent(receiver, 'request', (r) => r.status === 200, 120_000);
    const { port } = await waitForLog(child, 'ops server listening');
    const atStart = memory(child.pid!);
    ctx.log(`reporter started: resident ${mib(atStart.rss)} MiB`);
    // Keep draining the log so the child never blocks on a full pipe (into a file when asked).
    if (process.env.BENCH_REPORTER_LOG) {
      child.stdout.pipe(createWriteStream(process.env.BENCH_REPORTER_LOG));
    } else {
      child.stdout.resume();
    }
    const ops = `http://127.0.0.1:${port}`;
    const metrics = async () => (await fetch(`${ops}/metrics`)).text();
    await firstReport;
    const firstMs = performance.now() - started;
    const afterFirst = memory(child.pid!);
    ctx.log(
      `first report (${receiver.reports()[0]!.body.artifacts.length} pods) ${firstMs.toFixed(0)} ms after start; resident ${mib(afterFirst.rss)} MiB, peak ${mib(afterFirst.peak)} MiB`,
    );

    // A storm of scale-ups and scale-downs: extra replicas appear and go, over ~4 s.
    const putsBefore = receiver.reportRequests().length;
    const skippedBefore = metricValue(
      await metrics(),
      'verity_reporter_skipped_reports_total',
      '{environment="cluster",reason="unchanged"}',
    );
    const extras: Array<[string, string]> = [];
    for (let i = 0; i < STORM_EVENTS; i++) {
      if (i % 2 === 0) {
        const n = (i * 7) % NAMESPACES;
        const d = i % DEPLOYMENTS_PER_NAMESPACE;
        const hash = digestOf(image(n, d, 1)).slice(0, 10);
        const pod = makePod({
          namespace: ns(n),
          name: `svc-${d}-${hash}-x${i}`,
          image: image(n, d, 1),
          templateHash: hash,
          owner: { kind: 'ReplicaSet', name: `svc-${d}-${hash}` },
        });
        double.putPod(pod);
        extras.push([ns(n), pod.metadata.name]);
      } else {
        const [namespace, name] = extras.shift()!;
        double.deletePod(namespace, name);
      }
      if (i % 4 === 3) {
        await sleep(16);
      }
    }
    // The storm is done when the reporter has evaluated it (debounce after the last event).
    const deadline = performance.now() + DEBOUNCE_MS + 15_000;
    let skippedAfter = skippedBefore;
    while (skippedAfter === skippedBefore && performance.now() < deadline) {
      await sleep(250);
      skippedAfter = metricValue(
        await metrics(),
        'verity_reporter_skipped_reports_total',
        '{environment="cluster",reason="unchanged"}',
      );
    }
    const stormPuts = receiver.reportRequests().length - putsBefore;
    const afterStorm = memory(child.pid!);
    ctx.log(
      `storm: ${STORM_EVENTS} events, ${skippedAfter - skippedBefore} evaluations skipped, ${stormPuts} PUTs; resident ${mib(afterStorm.rss)} MiB, peak ${mib(afterStorm.peak)} MiB`,
    );

    // Rollouts: one Deployment's pods replaced by pods of a new image, then time to its PUT.
    const latencies: number[] = [];
    for (let r = 0; r < ROLLOUTS; r++) {
      const n = (r * 37) % NAMESPACES;
      const d = r % DEPLOYMENTS_PER_NAMESPACE;
      const next = image(n, d, 2 + r);
      const put = nextEvent(
        receiver,
        'request',
        (req) => req.status === 200 && JSON.stringify(req.body).includes(digestOf(next)),
        60_000,
      );
      const previous = image(n, d, 1);
      for (const p of deploymentPods(ns(n), `svc-${d}`, previous, REPLICAS)) {
        double.deletePod(ns(n), p.metadata.name);
      }
      for (const p of deploymentPods(ns(n), `svc-${d}`, next, REPLICAS)) {
        double.putPod(p);
      }
      const t0 = performance.now();
      const [arrived] = await put;
      latencies.push(arrived.at - t0);
      await sleep(200);
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)]!;
    const worst = latencies[latencies.length - 1]!;
    ctx.log(`rollout -> PUT: ${latencies.map((l) => l.toFixed(0)).join(', ')} ms`);

    const mem = memory(child.pid!);
    const text = await metrics();
    ctx.log(
      `reporter memory: resident ${mib(mem.rss)} MiB, peak ${mib(mem.peak)} MiB (heap used ${mib(metricValue(text, 'nodejs_heap_size_used_bytes'))} of ${mib(metricValue(text, 'nodejs_heap_size_total_bytes'))} MiB, external ${mib(metricValue(text, 'nodejs_external_memory_bytes'))} MiB); pods watched ${metricValue(text, 'verity_reporter_pods_watched')}`,
    );

    const cliWorstMs = CRON_PERIOD_S * 1000 + fullListMs;
    const target = DEBOUNCE_MS + 500;
    return [
      {
        name: 'detection latency, rollout -> PUT (worst of 5)',
        value: `${(worst / 1000).toFixed(2)} s (median ${(median / 1000).toFixed(2)} s, debounce ${DEBOUNCE_MS / 1000} s)`,
        target: `<= ${target / 1000} s`,
        pass: worst <= target,
      },
      {
        name: 'detection latency vs CLI chart (5-minute cron + full list)',
        value: `${(worst / cliWorstMs).toFixed(4)} (${(worst / 1000).toFixed(2)} s vs ${(cliWorstMs / 1000).toFixed(1)} s worst; ${(worst / (cliWorstMs / 2)).toFixed(4)} vs its 150 s mean)`,
      },
      {
        name: `PUTs during ${STORM_EVENTS} scale-up/down events`,
        value: `${stormPuts} (${skippedAfter - skippedBefore} evaluations skipped as unchanged)`,
        target: '0',
        pass: stormPuts === 0 && skippedAfter > skippedBefore,
      },
      {
        name: 'reporter peak resident memory, 10,000 pods',
        value: `${mib(mem.peak)} MiB (now ${mib(mem.rss)} MiB)`,
        target: '< 150 MiB',
        pass: mem.peak < 150 * 1024 * 1024,
      },
      {
        name: 'first report after start (list 10,000 pods, report, PUT)',
        value: `${(firstMs / 1000).toFixed(2)} s (CLI-style unpaged list + PUT in the bench process: ${(fullListMs / 1000).toFixed(2)} s)`,
      },
    ];
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    if (stderr) {
      ctx.log(`reporter stderr: ${stderr.slice(0, 500)}`);
    }
    await receiver.stop();
    await double.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
