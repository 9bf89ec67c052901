/**
 * The reporter's Prometheus metrics, on a registry of its own: reports by result, skipped
 * reports by reason, pods watched, pods left out, seconds since the last accepted report, watch
 * restarts, and process metrics (resident memory among them).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricSources {
  podsWatched(): number;
  /** Epoch milliseconds of the last accepted report per environment (undefined: none yet). */
  lastAccepted(): Array<[environment: string, at: number | undefined]>;
  now(): number;
}

export type ReporterMetrics = ReturnType<typeof createMetrics>;

/** Creates the registry and the metrics; gauges read `sources` at scrape time. */
export function createMetrics(sources: MetricSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    reports: new Counter({
      name: 'verity_reporter_reports_total',
      help: 'Report deliveries by environment and result: accepted, rejected (a 4xx, not retried), retried (a failed attempt that will be retried)',
      labelNames: ['environment', 'result'] as const,
      registers,
    }),
    skipped: new Counter({
      name: 'verity_reporter_skipped_reports_total',
      help: 'Reports not sent, by environment and reason: unchanged (no artifact changed), rejected (the API refused this same state)',
      labelNames: ['environment', 'reason'] as const,
      registers,
    }),
    podsLeftOut: new Gauge({
      name: 'verity_reporter_pods_left_out',
      help: 'Running or Failed pods left out of the latest report of an environment because an image id is not known yet',
      labelNames: ['environment'] as const,
      registers,
    }),
    watchRestarts: new Counter({
      name: 'verity_reporter_watch_restarts_total',
      help: 'Pod watch restarts after an error, by scope (namespace|labelSelector, * for all namespaces)',
      labelNames: ['scope'] as const,
      registers,
    }),
    podsWatched: new Gauge({
      name: 'verity_reporter_pods_watched',
      help: 'Pods in the informer caches',
      registers,
      collect() {
        this.set(sources.podsWatched());
      },
    }),
    sinceAccepted: new Gauge({
      name: 'verity_reporter_seconds_since_last_accepted_report',
      help: 'Seconds since the API last accepted a report of the environment (absent before the first)',
      labelNames: ['environment'] as const,
      registers,
      collect() {
        this.reset();
        for (const [environment, at] of sources.lastAccepted()) {
          if (at !== undefined) {
            this.set({ environment }, (sources.now() - at) / 1000);
          }
        }
      },
    }),
  };
}
