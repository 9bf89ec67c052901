/**
 * The runtime's workers in the app (`app.runtime`), its counters, and the two places where the
 * process hears of committed changes: the subscription of usecases/runtime/domain-event-subscriber.ts
 * to the evidence's domain events, and the one after-commit listener (`onCommitted`) that counts
 * what use cases announce and wakes the workers (the gauges are in runtime-metrics.ts). The notification and
 * re-evaluation workers, and the API-key expiry sweep, run in this process when
 * `VERITY_NOTIFIER_ENABLED` is on, and stop when the app closes; several replicas may run them
 * side by side. So does, once after the upgrade that began recording deployments, the backfill of
 * the deployments of the snapshots written before (usecases/runtime/delivery-backfill.ts).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, type Registry } from 'prom-client';
import { Loop } from '../notify/loop.js';
import { Notifier } from '../notify/notifier.js';
import { outboxRepository } from '../storage/repositories/actions.js';
import { idleFor, onDomainEvents } from '../usecases/runtime/domain-event-subscriber.js';
import { processReevaluationMarks } from '../usecases/runtime/reevaluation.js';
import { backfillDeploymentsOnce, type BackfillResult } from '../usecases/runtime/delivery-backfill.js';
import { recordDeferredDeployments } from '../usecases/runtime/delivery-deferred.js';
import { sweepKeyExpiry, type KeyExpiryWarning } from '../usecases/notifications/key-expiry.js';
import type { ReportOutcome } from '../usecases/runtime/snapshot-write.js';
import type { CommitEffect } from '../usecases/scope/domain-events.js';

export interface RuntimeService {
  notifier: Notifier;
  /** Processes pending re-evaluation marks now; returns the snapshots made. */
  processMarks(): Promise<ReportOutcome[]>;
  /** Wakes the workers (marks or notifications were committed). */
  kick(): void;
  /** Deletes notifications finished longer ago than the retention; returns how many. */
  purgeNotifications(): Promise<number>;
  /** Writes the API-key expiry warnings due now; returns them. */
  sweepKeyExpiry(): Promise<KeyExpiryWarning[]>;
  /**
   * Records the deployments of the snapshots written before deployments were recorded, unless
   * done once already (null then); logs each environment's progress.
   */
  backfillDeployments(signal?: AbortSignal): Promise<BackfillResult | null>;
  /**
   * Records the deployments of snapshots that deferred them (usecases/runtime/delivery-deferred.ts);
   * returns how many environments it went through.
   */
  recordDeferredDeployments(): Promise<number>;
}

declare module 'fastify' {
  interface FastifyInstance {
    runtime: RuntimeService;
  }
}

/**
 * The runtime's counters: snapshots by cause, reports by result, deliveries by target and
 * result, key-expiry warnings by threshold and recipients.
 */
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
  const keyExpiryWarnings = new Counter({
    name: 'verity_api_key_expiry_warnings_total',
    help: 'API-key expiry warnings written, by threshold (days before expiry; 0: expired) and recipients (configured, admins, none)',
    labelNames: ['threshold_days', 'recipients'] as const,
    registers: [registry],
  });
  const deployments = new Counter({
    name: 'verity_deployments_total',
    help: 'Deployments recorded (a new fingerprint starting to run in an environment, rollbacks included), by organization and environment',
    labelNames: ['org', 'environment'] as const,
    registers: [registry],
  });
  const leadTime = new Histogram({
    name: 'verity_deployment_lead_time_seconds',
    help: 'Lead time for changes of recorded deployments: from the oldest commit a deployment brought to its start (rollbacks excluded), by organization',
    labelNames: ['org'] as const,
    // From a minute to four weeks.
    buckets: [
      60,
      300,
      900,
      1800,
      3600,
      4 * 3600,
      12 * 3600,
      86_400,
      2 * 86_400,
      7 * 86_400,
      14 * 86_400,
      28 * 86_400,
    ],
    registers: [registry],
  });
  const reportPhases = new Histogram({
    name: 'verity_report_phase_seconds',
    help: 'Where environment reports spend their time, by step: validate, group, lock (waiting for the environment), live, plan, states, delivery, events, commit',
    labelNames: ['phase'] as const,
    buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return { snapshots, reports, notifications, keyExpiryWarnings, deployments, leadTime, reportPhases };
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
 * Subscribes the runtime to the evidence's domain events. What the subscriber writes commits
 * with the publisher's transaction, before the response goes out: then it is announced as any
 * committed change is.
 */
function subscribe(app: FastifyInstance): void {
  const { publicUrl } = app.config;
  let pending: CommitEffect[] = [];
  app.domainEvents.subscribe(
    async (db, events) => {
      const { marks, rows } = await onDomainEvents(db, events, publicUrl, app.caches.config);
      if (marks > 0) {
        pending.push({ type: 'reevaluation.marked', count: marks });
      }
      if (rows > 0) {
        pending.push({ type: 'notifications.enqueued', count: rows });
      }
    },
    (events) => idleFor(events, publicUrl, app.caches.config),
  );
  app.addHook('onResponse', async () => {
    if (pending.length > 0) {
      const effects = pending;
      pending = [];
      app.domainEvents.committed(effects);
    }
  });
}

/** The one after-commit listener: counts what committed changes did and wakes the workers. */
function listen(
  app: FastifyInstance,
  counters: ReturnType<typeof runtimeCounters>,
  loops: { reevaluation: Loop; notify: Loop; deployments: Loop },
): void {
  app.domainEvents.onCommitted((effects) => {
    for (const e of effects) {
      switch (e.type) {
        case 'snapshot.created':
          counters.snapshots.inc({ cause: e.cause });
          break;
        case 'report.received':
          counters.reports.inc({ result: e.result });
          for (const [phase, seconds] of Object.entries(e.phases ?? {})) {
            counters.reportPhases.observe({ phase }, seconds);
          }
          break;
        case 'notifications.enqueued':
          loops.notify.kick();
          break;
        case 'reevaluation.marked':
          loops.reevaluation.kick();
          break;
        case 'key-expiry.warned':
          counters.keyExpiryWarnings.inc({
            threshold_days: String(e.thresholdDays),
            recipients: e.recipients,
          });
          break;
        case 'evaluation.requested':
          // The evaluation workers listen for it themselves (plugins/evaluations.ts).
          break;
        case 'deployments.deferred':
          loops.deployments.kick();
          break;
        case 'deployment.recorded':
          counters.deployments.inc({ org: e.org, environment: e.environment });
          if (e.leadTime !== null) {
            counters.leadTime.observe({ org: e.org }, Math.max(0, e.leadTime));
          }
          break;
      }
    }
  });
}

/**
 * The deployments backfill, run once at start in the background: a page of snapshots at a time,
 * awaiting each; tried again at the next start if it fails or the app closes first.
 */
function deploymentsBackfill(app: FastifyInstance) {
  const run = async (signal?: AbortSignal) => {
    const result = await backfillDeploymentsOnce(app.db, {
      signal,
      onProgress: (p) => app.log.info(p, 'deployments backfill'),
    });
    if (result) {
      app.log.info(result, 'deployments backfill finished');
    }
    return result;
  };
  const stop = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  return {
    run,
    start: () => {
      running = run(stop.signal).catch((err: unknown) => {
        if (!stop.signal.aborted) {
          app.log.error({ err }, 'deployments backfill failed');
        }
      });
    },
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** The notifier and its loop, woken when a delivery settles. */
function notifierOf(
  app: FastifyInstance,
  notifications: ReturnType<typeof runtimeCounters>['notifications'],
) {
  const config = app.config;
  const notifier = new Notifier({
    db: app.db,
    clock: app.clock,
    log: app.log,
    allow: config.outboundAllow,
    webhookSecret: config.webhookSecret,
    smtpUrl: config.smtpUrl,
    emailFrom: config.emailFrom,
    timeoutMs: config.outboundTimeoutMs,
    outboundCa: config.outboundCa,
    maxAttempts: config.notifierMaxAttempts,
    leaseMs: config.notifierLeaseMs,
    onResult: (target_type, result) => notifications.inc({ target_type, result }),
  });
  const notifyLoop = new Loop('notifier', () => notifier.dispatch(), config.notifierPollMs, app.log);
  notifier.onSettled(() => notifyLoop.kick());
  return { notifier, notifyLoop };
}

export default fp(
  async (app) => {
    const config = app.config;
    const counters = runtimeCounters(app.metrics.registry);
    const { notifier, notifyLoop } = notifierOf(app, counters.notifications);

    const scope = {
      db: app.db,
      publicUrl: config.publicUrl,
      events: app.domainEvents,
      services: app.services,
    };
    const processMarks = (): Promise<ReportOutcome[]> => processReevaluationMarks(scope, app.clock);
    const reevaluationLoop = new Loop('reevaluation', processMarks, config.reevaluationIntervalMs, app.log);

    const retentionMs = config.notificationRetentionDays * 86_400_000;
    const purgeNotifications = () => purgeFinished(app, retentionMs);
    const retentionLoop = new Loop('notification-retention', purgeNotifications, 3_600_000, app.log);

    const sweep = async (): Promise<KeyExpiryWarning[]> => {
      const warnings = await sweepKeyExpiry(scope, app.clock, { emailEnabled: config.smtpUrl !== undefined });
      for (const w of warnings.filter((x) => x.recipients === 'none')) {
        app.log.warn(
          { org: w.org, service_account: w.serviceAccount, key: w.keyId, threshold_days: w.thresholdDays },
          'API key expiry: nobody to warn (no notification config, no admin e-mail address or no SMTP_URL)',
        );
      }
      return warnings;
    };
    const keyExpiryLoop = new Loop('api-key-expiry', sweep, config.keyExpirySweepMs, app.log);

    const backfill = deploymentsBackfill(app);
    const recordDeferred = () => recordDeferredDeployments({ db: app.db, events: app.domainEvents });
    const deploymentsLoop = new Loop(
      'deferred-deployments',
      recordDeferred,
      config.reevaluationIntervalMs,
      app.log,
    );

    app.decorate('runtime', {
      notifier,
      processMarks,
      purgeNotifications,
      sweepKeyExpiry: sweep,
      backfillDeployments: backfill.run,
      recordDeferredDeployments: recordDeferred,
      kick: () => {
        reevaluationLoop.kick();
        notifyLoop.kick();
      },
    } satisfies RuntimeService);

    subscribe(app);
    listen(app, counters, {
      reevaluation: reevaluationLoop,
      notify: notifyLoop,
      deployments: deploymentsLoop,
    });

    if (config.notifierEnabled) {
      app.addHook('onReady', async () => {
        notifyLoop.start();
        reevaluationLoop.start();
        if (retentionMs > 0) {
          retentionLoop.start();
        }
        keyExpiryLoop.start();
        deploymentsLoop.start();
        backfill.start();
      });
    }
    app.addHook('onClose', async () => {
      await backfill.stop();
      await notifyLoop.stop();
      await reevaluationLoop.stop();
      await deploymentsLoop.stop();
      await retentionLoop.stop();
      await keyExpiryLoop.stop();
      await notifier.close();
    });
  },
  { name: 'runtime', dependencies: ['db', 'caches', 'metrics', 'services', 'domain-events'] },
);
