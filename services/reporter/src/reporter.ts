/**
 * The reporter without its process: pod watches shared by the configured environments, one
 * report loop per environment, the API client and metrics. `main.ts` adds the process around
 * it; tests start it against the API server double and a receiver.
 */
import { EventEmitter } from 'node:events';
import type { KubeConfig } from '@kubernetes/client-node';
import nodeFetch from 'node-fetch';
import { createClient } from '../../shared/client/index.js';
import { secretReader } from '../../shared/config.js';
import type { ReporterConfig } from './config.js';
import type { Sleep } from './delivery.js';
import { EnvironmentLoop, type Logger, type LoopEvents } from './environment-loop.js';
import { createMetrics, type ReporterMetrics } from './metrics.js';
import { PodWatch } from './pod-watch.js';
import { planWatches } from './watch-plan.js';

export interface ReporterOptions {
  config: ReporterConfig;
  kubeConfig: KubeConfig;
  log: Logger;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
  /** First delay before restarting a failed watch (default 1 s). */
  watchRestartBaseMs?: number;
  userAgent?: string;
}

export class Reporter extends EventEmitter<LoopEvents> {
  readonly metrics: ReporterMetrics;
  readonly watch: PodWatch;
  readonly loops: EnvironmentLoop[];

  constructor(options: ReporterOptions) {
    super();
    this.setMaxListeners(0);
    const { config, log } = options;
    const now = options.now ?? Date.now;
    const plan = planWatches(config.environments);
    this.watch = new PodWatch(options.kubeConfig, plan.scopes, {
      log,
      restartBaseMs: options.watchRestartBaseMs,
      random: options.random,
    });
    this.metrics = createMetrics({
      podsWatched: () => this.watch.size,
      lastAccepted: () => this.loops.map((l) => [l.name, l.lastAcceptedAt]),
      now,
    });
    const client = createClient({
      baseUrl: config.apiUrl,
      org: config.org,
      // Read on every request: a rotated Secret is picked up without a restart.
      token: secretReader(config.token),
      userAgent: options.userAgent ?? 'verity-reporter',
      // The HTTP stack the Kubernetes client already loads. The global fetch would load a second
      // one (undici, ~7 MiB) and holds several copies of a large body while sending it
      // (~25 MiB of peak resident memory for a 10,000-pod report, against ~8 MiB here).
      fetch: nodeFetch as unknown as typeof fetch,
    });
    this.loops = plan.environments.map(
      (planned) =>
        new EnvironmentLoop(planned, {
          watch: this.watch,
          client,
          config,
          metrics: this.metrics,
          log,
          events: this,
          now,
          sleep: options.sleep,
          random: options.random,
        }),
    );
    this.watch.on('change', (namespace, scope) => {
      for (const loop of this.loops) {
        loop.onPodChange(namespace, scope);
      }
    });
    this.watch.on('synced', () => {
      for (const loop of this.loops) {
        loop.onSynced();
      }
    });
    this.watch.on('restart', (scope) => this.metrics.watchRestarts.inc({ scope }));
    log.info(
      {
        environments: plan.environments.map((e) => ({ name: e.env.name, watches: e.scopes })),
        watches: plan.scopes.map((s) => s.key),
      },
      'reporter configured',
    );
  }

  start(): void {
    this.watch.start();
  }

  /** Ready once every watch has completed its first full list. */
  get ready(): boolean {
    return this.watch.synced;
  }

  async stop(): Promise<void> {
    for (const loop of this.loops) {
      loop.stop();
    }
    await this.watch.stop();
  }
}
