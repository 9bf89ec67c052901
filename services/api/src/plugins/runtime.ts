/**
 * The runtime in the app: `app.runtime` (what use cases need, plus the workers), the runtime
 * metrics, and the subscriber to the evidence's domain events. The notification and
 * re-evaluation workers run in this process when `VERITY_NOTIFIER_ENABLED` is on, and stop when
 * the app closes; several replicas may run them side by side.
 */
import fp from 'fastify-plugin';
import { Counter, Gauge } from 'prom-client';
import { Loop } from '../notify/loop.js';
import { Notifier } from '../notify/notifier.js';
import { environmentsRepository } from '../storage/repositories/environments.js';
import { orgsRepository } from '../storage/repositories/orgs.js';
import type { DomainEvent } from '../usecases/domain-events.js';
import { artifactUrls } from '../usecases/artifacts.js';
import { enqueueNotifications } from '../usecases/notifications.js';
import { actionsFor, type NotificationEvent } from '../domain/triggers.js';
import type { EpochCache } from './caches.js';
import { actionsRepository, outboxRepository, type ActionRow } from '../storage/repositories/actions.js';
import {
  markEnvironmentsRunning,
  processReevaluationMarks,
  type ReportOutcome,
  type RuntimeDeps,
} from '../usecases/runtime.js';
import type { Db } from '../storage/database.js';

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

/** What the subscriber needs to know of an organization before it writes anything. */
interface OrgNotificationConfig {
  name: string;
  actions: ActionRow[];
}

const CONFIG_KEY = 'domain-events';

/** The events of each organization, in order. */
function byOrg(events: DomainEvent[]): Map<string, DomainEvent[]> {
  const out = new Map<string, DomainEvent[]>();
  for (const e of events) out.set(e.orgId, [...(out.get(e.orgId) ?? []), e]);
  return out;
}

/** The flow-action notifications and the fingerprints to re-evaluate that an org's events make. */
function planFor(
  orgName: string,
  list: DomainEvent[],
  publicUrl: string,
): { notifications: NotificationEvent[]; changed: Set<string> } {
  const notifications: NotificationEvent[] = [];
  const changed = new Set<string>();
  for (const e of list) {
    const base = { org: orgName, timestamp: e.at.getTime() / 1000 };
    switch (e.type) {
      case 'trail.started':
        notifications.push({
          ...base,
          trigger: 'ON_STARTED_TRAIL',
          flow: e.flowName,
          trail: e.trailName,
          description: `Trail ${e.trailName} started in flow ${e.flowName}`,
        });
        break;
      case 'artifact.reported':
        changed.add(e.fingerprint);
        notifications.push({
          ...base,
          trigger: 'ON_ATTESTED_PROVENANCE',
          flow: e.flowName,
          trail: e.trailName,
          description: `Artifact ${e.artifactName} reported in trail ${e.trailName}`,
          artifact: {
            name: e.artifactName,
            fingerprint: e.fingerprint,
            provenance: {
              flow: e.flowName,
              trail: e.trailName,
              status: e.state.toLowerCase(),
              commit: e.gitCommit,
              commit_url: e.commitUrl,
              build_url: e.buildUrl,
              html_url: artifactUrls(
                { publicUrl, orgName },
                { flow_name: e.flowName, fingerprint: e.fingerprint, id: e.artifactId },
              ).html_url,
            },
          },
        });
        break;
      case 'attestation.reported':
        notifications.push({
          ...base,
          trigger: 'ON_ATTESTATION',
          flow: e.flowName,
          trail: e.trailName,
          description: `Attestation ${e.attestationName} (${e.attestationType}) reported in trail ${e.trailName}`,
          attestation: { name: e.attestationName, type: e.attestationType, is_compliant: e.isCompliant },
        });
        break;
      case 'artifact.compliance-changed':
        for (const f of e.fingerprints) changed.add(f);
        break;
    }
  }
  return { notifications, changed };
}

/** Turns the evidence's events into flow-action notifications and re-evaluation marks. */
async function onDomainEvents(
  db: Db,
  events: DomainEvent[],
  publicUrl: string,
  configs: EpochCache,
): Promise<{ marks: number; rows: number }> {
  let marks = 0;
  let rows = 0;
  for (const [orgId, list] of byOrg(events)) {
    let config = configs.get<OrgNotificationConfig>(orgId, CONFIG_KEY);
    if (!config) {
      const epoch = configs.epoch(orgId);
      const org = await orgsRepository.findById(db, orgId);
      if (!org) continue;
      config = { name: org.name, actions: await actionsRepository.list(db, orgId) };
      configs.set(orgId, CONFIG_KEY, config, epoch);
    }
    const { notifications, changed } = planFor(config.name, list, publicUrl);
    const at = list[list.length - 1]!.at;
    rows += await enqueueNotifications(db, orgId, notifications, at, config.actions);
    marks += await markEnvironmentsRunning(db, orgId, [...changed], 'provenance', at);
  }
  return { marks, rows };
}

/**
 * True when onDomainEvents would write nothing: every org's settings are cached, no event
 * reaches one of its actions and none names a fingerprint to re-evaluate.
 */
function idleFor(events: DomainEvent[], publicUrl: string, configs: EpochCache): boolean {
  for (const [orgId, list] of byOrg(events)) {
    const config = configs.get<OrgNotificationConfig>(orgId, CONFIG_KEY);
    if (!config) return false;
    const { notifications, changed } = planFor(config.name, list, publicUrl);
    if (changed.size > 0) return false;
    if (notifications.some((n) => actionsFor(config.actions, n).length > 0)) return false;
  }
  return true;
}

export default fp(
  async (app) => {
    const config = app.config;
    const registry = app.metrics.registry;
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
    // Read from the database at scrape time: every replica reports the same truth. The three
    // gauges below collect in one scrape; they share one read of the overview.
    let overview:
      { at: number; rows: ReturnType<typeof environmentsRepository.complianceOverview> } | undefined;
    const environmentOverview = () => {
      const now = Date.now();
      if (!overview || now - overview.at > 1000) {
        overview = { at: now, rows: environmentsRepository.complianceOverview(app.db) };
        overview.rows.catch(() => (overview = undefined));
      }
      // A database that does not answer leaves these series out rather than failing the whole
      // scrape: verity_database_available says why they are missing.
      return overview.rows.catch(() => []);
    };
    new Gauge({
      name: 'verity_environment_compliant',
      help: 'Compliance of the latest snapshot: 1 compliant, 0 not; absent when unknown (no policies)',
      labelNames: ['org', 'environment'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const e of await environmentOverview()) {
          if (e.compliant !== null) this.set({ org: e.org, environment: e.name }, e.compliant ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'verity_environment_last_report_age_seconds',
      help: 'Seconds since the environment was last reported (a report without changes counts): a silent reporter shows here',
      labelNames: ['org', 'environment'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const now = app.clock().getTime();
        for (const e of await environmentOverview()) {
          if (e.last_reported_at)
            this.set({ org: e.org, environment: e.name }, (now - e.last_reported_at.getTime()) / 1000);
        }
      },
    });
    new Gauge({
      name: 'verity_environment_snapshot_age_seconds',
      help: 'Seconds since the latest snapshot of the environment was made (how long what runs there has been unchanged)',
      labelNames: ['org', 'environment'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const now = app.clock().getTime();
        for (const e of await environmentOverview()) {
          if (e.latest_snapshot_at)
            this.set({ org: e.org, environment: e.name }, (now - e.latest_snapshot_at.getTime()) / 1000);
        }
      },
    });

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
    let pendingMarks = false;
    let pendingRows = false;

    const committed = (outcomes: ReadonlyArray<ReportOutcome | null>) => {
      let rows = 0;
      for (const o of outcomes) {
        if (!o) continue;
        if (o.snapshot) snapshots.inc({ cause: o.snapshot.cause });
        rows += o.notifications;
      }
      if (rows > 0) notifyLoop.kick();
    };
    const processMarks = async () => {
      const outcomes = await processReevaluationMarks(app.db, deps, app.clock);
      committed(outcomes);
      return outcomes;
    };
    const reevaluationLoop = new Loop('reevaluation', processMarks, config.reevaluationIntervalMs, app.log);

    const retentionMs = config.notificationRetentionDays * 86_400_000;
    const purgeNotifications = async () => {
      if (retentionMs === 0) return 0;
      const before = new Date(app.clock().getTime() - retentionMs);
      let total = 0;
      // In batches, so one purge never holds many rows locked at once.
      for (;;) {
        const n = await outboxRepository.purgeFinished(app.db, before, 1000);
        total += n;
        if (n < 1000) break;
      }
      if (total > 0) app.log.info({ purged: total, before }, 'finished notifications purged');
      return total;
    };
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

    app.domainEvents.subscribe(
      async (db, events) => {
        const { marks, rows } = await onDomainEvents(db, events, config.publicUrl, app.caches.config);
        if (marks > 0) pendingMarks = true;
        if (rows > 0) pendingRows = true;
      },
      (events) => idleFor(events, config.publicUrl, app.caches.config),
    );
    // The publishing transaction has committed once the response goes out: process its marks now.
    app.addHook('onResponse', async () => {
      if (pendingMarks) {
        pendingMarks = false;
        reevaluationLoop.kick();
      }
      if (pendingRows) {
        pendingRows = false;
        notifyLoop.kick();
      }
    });

    if (config.notifierEnabled) {
      app.addHook('onReady', async () => {
        notifyLoop.start();
        reevaluationLoop.start();
        if (retentionMs > 0) retentionLoop.start();
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
