/**
 * The operator's Prometheus metrics, on a registry of its own: reconciles by kind and result,
 * their duration, informer restarts, and process metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type OperatorMetrics = ReturnType<typeof createMetrics>;

/** Creates the registry and the metrics. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    reconciles: new Counter({
      name: 'verity_operator_reconcile_total',
      help: 'Reconciles by kind and result: success, error (retried with backoff), stalled (invalid spec, not retried)',
      labelNames: ['kind', 'result'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'verity_operator_reconcile_duration_seconds',
      help: 'Time one reconcile takes, by kind',
      labelNames: ['kind'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    leader: new Gauge({
      name: 'verity_operator_leader',
      help: 'Whether this replica leads (1) and reconciles, or stands by (0)',
      registers,
    }),
    events: new Counter({
      name: 'verity_operator_events_total',
      help: 'Kubernetes Events recorded on the resources, by type (Normal, Warning)',
      labelNames: ['type'] as const,
      registers,
    }),
    informerRestarts: new Counter({
      name: 'verity_operator_informer_restarts_total',
      help: 'Informer restarts after an error, by kind',
      labelNames: ['kind'] as const,
      registers,
    }),
  };
}
