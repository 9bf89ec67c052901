/**
 * The runtime in the app: `app.runtime` (what use cases need, plus the workers), its counters,
 * and the subscription of usecases/runtime/domain-event-subscriber.ts to the evidence's domain events
 * (the gauges are in runtime-metrics.ts). The notification and
 * re-evaluation workers run in this process when `VERITY_NOTIFIER_ENABLED` is on, and stop when
 * the app closes; several replicas may run them side by side.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, type Registry } from 'prom-client';
import { Loop } from '../notify/loop.js';
import { Notifier } from '../notify/notifier.js';
import { outboxRepository } from '../storage/repositories/actions.js';
import { idleFor, onDomainEvents } from '../usecases/runtime/domain-event-subscriber.js';
import { processReevaluationMarks } from '../usecases/runtime/reevaluation.js';
import type { ReportOutcome, RuntimeDeps } from '../usecases/runtime/report-ingest.js';

export interface RuntimeService {
  deps: RuntimeDeps;
  notifier: Notifier;
  /** Records what a committed change did (metrics) and wakes the notifier when it wrote rows. */
  committed(outcomes: ReadonlyArray<ReportOutcome | null>): void;
  /** Counts a report by result. */
  reported(result: 'snapshot' | 'unchanged' | 'rejected' | 'error'): void;
  /** Processes pending re-evaluation marks now; returns the snapshots made. */
  processMarks(): Promise<ReportOutcome[]>;
  /** Wakes the workers (marks or notifications were committed). */
  kick(): void;
  /** Deletes notifications finished longer ago than the retention; returns how many. */
  purgeNotifications(): Promise<number>;
}

declare module 'fastify' {
  interface FastifyInstance {
    runtime: RuntimeService;
  }
}

/** The runtime's counters: snapshots by cause, reports by result, deliveries by target and result. */
function runtimeCounters(registry: Registry) {
  const snapshots = new Counter({
    name: 'verity_snapshots_created_total',
    help: 'Environment snapshots created, by cause (report, policies, allowlist, reevaluation)',
    labelNames: ['cause'] as const,
    registers: [registry],
  });
  const reports = new Counter({
    name: 'verity_reports_total',
    help: 'Environment reports received, by result (snapshot, unchanged, rejected, error)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const notifications = new Counter({
    name: 'verity_notifications_total',
    help: 'Notification delivery attempts, by target type and result (success, failure, refused)',
    labelNames: ['target_type', 'result'] as const,
    registers: [registry],
  });
  return { snapshots, reports, notifications };
}

/** Deletes notifications finished more than `retentionMs` ago (0: keep them); returns how many. */
async function purgeFinished(app: FastifyInstance, retentionMs: number): Promise<number> {
  if (retentionMs === 0) {
    return 0;
  }
  const before = new Date(app.clock().getTime() - retentionMs);
  let total = 0;
  // In batches, so one purge never holds many rows locked at once.
  for (;;) {
    const n = await outboxRepository.purgeFinished(app.db, before, 1000);
    total += n;
    if (n < 1000) {
      break;
    }
  }
  if (total > 0) {
    app.log.info({ purged: total, before }, 'finished notifications purged');
  }
  return total;
}

/**
 * Subscribes the runtime to the evidence's domain events; once the publishing transaction has
 * committed (the response went out) the loops process the marks and rows it wrote.
 */
function subscribe(app: FastifyInstance, loops: { reevaluation: Loop; notify: Loop }): void {
  const { publicUrl } = app.config;
  let pendingMarks = false;
  let pendingRows = false;
  app.domainEvents.subscribe(
    async (db, events) => {
      const { marks, rows } = await onDomainEvents(db, events, publicUrl, app.caches.config);
      if (marks > 0) {
        pendingMarks = true;
      }
      if (rows > 0) {
        pendingRows = true;
      }
    },
    (events) => idleFor(events, publicUrl, app.caches.config),
  );
  app.addHook('onResponse', async () => {
    if (pendingMarks) {
      pendingMarks = false;
      loops.reevaluation.kick();
    }
    if (pendingRows) {
      pendingRows = false;
      loops.notify.kick();
    }
  });
}

export default fp(
  async (app) => {
    const config = app.config;
    const { snapshots, reports, notifications } = runtimeCounters(app.metrics.registry);
    const deps: RuntimeDeps = { provenance: app.provenance, publicUrl: config.publicUrl };
    const notifier = new Notifier({
      db: app.db,
      clock: app.clock,
      log: app.log,
      allow: config.outboundAllow,
      webhookSecret: config.webhookSecret,
      smtpUrl: config.smtpUrl,
      emailFrom: config.emailFrom,
      timeoutMs: config.outboundTimeoutMs,
      maxAttempts: config.notifierMaxAttempts,
      leaseMs: config.notifierLeaseMs,
      onResult: (target_type, result) => notifications.inc({ target_type, result }),
    });
    const notifyLoop = new Loop('notifier', () => notifier.dispatch(), config.notifierPollMs, app.log);
    notifier.onSettled(() => notifyLoop.kick());

    const committed = (outcomes: ReadonlyArray<ReportOutcome | null>) => {
      let rows = 0;
      for (const o of outcomes) {
        if (!o) {
          continue;
        }
        if (o.snapshot) {
          snapshots.inc({ cause: o.snapshot.cause });
        }
        rows += o.notifications;
      }
      if (rows > 0) {
        notifyLoop.kick();
      }
    };
    const processMarks = async () => {
      const outcomes = await processReevaluationMarks(app.db, deps, app.clock);
      committed(outcomes);
      return outcomes;
    };
    const reevaluationLoop = new Loop('reevaluation', processMarks, config.reevaluationIntervalMs, app.log);

    const retentionMs = config.notificationRetentionDays * 86_400_000;
    const purgeNotifications = () => purgeFinished(app, retentionMs);
    const retentionLoop = new Loop('notification-retention', purgeNotifications, 3_600_000, app.log);

    app.decorate('runtime', {
      deps,
      notifier,
      committed,
      reported: (result) => reports.inc({ result }),
      processMarks,
      purgeNotifications,
      kick: () => {
        reevaluationLoop.kick();
        notifyLoop.kick();
      },
    } satisfies RuntimeService);

    subscribe(app, { reevaluation: reevaluationLoop, notify: notifyLoop });

    if (config.notifierEnabled) {
      app.addHook('onReady', async () => {
        notifyLoop.start();
        reevaluationLoop.start();
        if (retentionMs > 0) {
          retentionLoop.start();
        }
      });
    }
    app.addHook('onClose', async () => {
      await notifyLoop.stop();
      await reevaluationLoop.stop();
      await retentionLoop.stop();
      await notifier.close();
    });
  },
  { name: 'runtime', dependencies: ['db', 'caches', 'metrics', 'provenance', 'domain-events'] },
);
