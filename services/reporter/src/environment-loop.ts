/**
 * The report loop of one environment: pod events are debounced (quiet time, bounded by a
 * maximum wait), the current pods become a report, the change filter decides whether it is
 * worth a PUT, and a heartbeat sends the full state when nothing was sent for an interval.
 * Delivery retries in the background and never blocks the loop.
 */
import type { EventEmitter } from 'node:events';
import { VerityApiError, type VerityClient } from '../../shared/client/index.js';
import type { K8sReport } from '../../shared/contract/environment-reports.js';
import {
  decideReport,
  identityChanges,
  podsIdentity,
  type LastSubmitted,
  type ReportIdentity,
  type SendReason,
  type SkipReason,
} from './change-filter.js';
import type { ReporterConfig } from './config.js';
import { LatestOnlyDelivery, PermanentError, type Sleep } from './delivery.js';
import type { ReporterMetrics } from './metrics.js';
import type { CachedPod, PodWatch } from './pod-watch.js';
import { podsToK8sReport } from './pods-report.js';
import type { PlannedEnvironment } from './watch-plan.js';

/** Emitted after every evaluation: what was decided and on how many pods. */
export interface EvaluatedEvent {
  environment: string;
  decision: SendReason | SkipReason;
  pods: number;
  leftOut: number;
}

/** Emitted after every delivery attempt. */
export interface DeliveredEvent {
  environment: string;
  result: 'accepted' | 'rejected' | 'retried';
  reason: SendReason;
  status?: number;
}

export interface LoopEvents {
  evaluated: [EvaluatedEvent];
  delivered: [DeliveredEvent];
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

interface Item {
  report: K8sReport;
  identity: ReportIdentity;
  reason: SendReason;
}

export interface LoopDeps {
  watch: PodWatch;
  client: VerityClient;
  config: ReporterConfig;
  metrics: ReporterMetrics;
  log: Logger;
  events: EventEmitter<LoopEvents>;
  now: () => number;
  sleep?: Sleep;
  random?: () => number;
}

export class EnvironmentLoop {
  readonly name: string;
  private last: LastSubmitted | undefined;
  /** Epoch ms of the last accepted report. */
  lastAcceptedAt: number | undefined;
  private dirtySince: number | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private environmentChecked = false;
  private stopped = false;
  private readonly delivery: LatestOnlyDelivery<Item>;

  constructor(
    private readonly planned: PlannedEnvironment,
    private readonly deps: LoopDeps,
  ) {
    this.name = planned.env.name;
    const { config, metrics, log, events } = deps;
    const environment = this.name;
    this.delivery = new LatestOnlyDelivery<Item>(
      (item) => this.send(item),
      {
        accepted: (item, attempts) => {
          if (this.last?.identity === item.identity) {
            this.last.outcome = 'accepted';
          }
          this.lastAcceptedAt = deps.now();
          metrics.reports.inc({ environment, result: 'accepted' });
          log.info(
            { environment, reason: item.reason, pods: item.report.artifacts.length, attempts },
            'report accepted',
          );
          events.emit('delivered', { environment, result: 'accepted', reason: item.reason });
        },
        rejected: (item, err) => {
          if (this.last?.identity === item.identity) {
            this.last.outcome = 'rejected';
          }
          const failure = this.failed('rejected', item, err);
          log.error(
            {
              ...failure,
              fieldErrors: err instanceof VerityApiError ? err.fieldErrors : undefined,
              hint:
                failure.status === 404 && !config.autoCreateEnvironments
                  ? 'create the environment (type K8S) or set VERITY_AUTO_CREATE_ENVIRONMENTS=true'
                  : undefined,
            },
            'report rejected; not retried until the state changes or the heartbeat',
          );
        },
        retrying: (item, err, delayMs, attempt) => {
          const failure = this.failed('retried', item, err);
          log.warn(
            { ...failure, attempt, retryInMs: delayMs },
            'report failed; retrying with the newest state',
          );
        },
      },
      { baseMs: config.retryBaseMs, maxMs: config.retryMaxMs },
      deps.sleep,
      deps.random,
    );
  }

  /** Counts and announces a failed delivery; returns the fields its log line starts with. */
  private failed(result: 'rejected' | 'retried', item: Item, err: unknown) {
    const environment = this.name;
    const status = err instanceof VerityApiError ? err.status : undefined;
    this.deps.metrics.reports.inc({ environment, result });
    this.deps.events.emit('delivered', { environment, result, reason: item.reason, status });
    return { environment, reason: item.reason, status, err: (err as Error).message };
  }

  /** Whether every watch this environment reads has listed its pods. */
  get synced(): boolean {
    return this.planned.scopes.every((s) => this.deps.watch.isSynced(s));
  }

  /** Whether a report is waiting for or in delivery. */
  get delivering(): boolean {
    return this.delivery.busy;
  }

  /** A pod changed in `namespace` as seen by watch `scope`. */
  onPodChange(namespace: string, scope: string): void {
    if (this.stopped || !this.planned.scopes.includes(scope) || !this.planned.filter.matches(namespace)) {
      return;
    }
    // Before the first report, the first full list is what counts: events are part of it.
    if (this.last === undefined) {
      return;
    }
    this.markDirty();
  }

  /** A watch completed its first list: the first report goes out once all of this environment's have. */
  onSynced(): void {
    if (!this.stopped && this.last === undefined && this.synced) {
      this.evaluate(false);
    }
  }

  private markDirty(): void {
    const now = this.deps.now();
    this.dirtySince ??= now;
    const { debounceMs, maxWaitMs } = this.deps.config;
    const wait = Math.max(0, Math.min(debounceMs, this.dirtySince + maxWaitMs - now));
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => this.evaluate(false), wait);
  }

  private *pods(): Iterable<CachedPod> {
    for (const scope of this.planned.scopes) {
      for (const pod of this.deps.watch.pods(scope)) {
        if (this.planned.filter.matches(pod.metadata?.namespace ?? '')) {
          yield pod;
        }
      }
    }
  }

  /** Builds the report of the current pods and sends it when it changed or the heartbeat is due. */
  evaluate(heartbeat: boolean): void {
    if (this.stopped) {
      return;
    }
    clearTimeout(this.debounceTimer);
    this.dirtySince = undefined;
    const { metrics, log, events } = this.deps;
    const environment = this.name;
    const { identity, reported, leftOut } = podsIdentity(this.pods());
    metrics.podsLeftOut.set({ environment }, leftOut);
    const decision = decideReport(this.last, identity, heartbeat);
    events.emit('evaluated', { environment, decision: decision.reason, pods: reported, leftOut });
    if (!decision.send) {
      metrics.skipped.inc({ environment, reason: decision.reason });
      log.debug({ environment, reason: decision.reason }, 'report skipped');
      return;
    }
    if (decision.reason === 'change' && this.last) {
      const { started, stopped } = identityChanges(this.last.identity, identity);
      log.info({ environment, started, stopped }, 'running artifacts changed');
    }
    const built = podsToK8sReport(this.pods());
    if (built.imageIdUnknown.length > 0) {
      log.info(
        { environment, pods: built.imageIdUnknown.slice(0, 20).map((p) => `${p.namespace}/${p.name}`) },
        'pods left out: image id not known yet',
      );
    }
    this.last = { identity, outcome: 'pending' };
    this.delivery.submit({ report: built.report, identity, reason: decision.reason });
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(() => this.evaluate(true), this.deps.config.heartbeatMs);
  }

  private async send(item: Item): Promise<void> {
    const { client, config } = this.deps;
    if (config.autoCreateEnvironments && !this.environmentChecked) {
      await this.ensureEnvironment();
      this.environmentChecked = true;
    }
    await client.environments.report(this.name, 'K8S', item.report);
  }

  /** What `kosli snapshot --auto-environment` does: GET, and on 404 create it with type K8S. */
  private async ensureEnvironment(): Promise<void> {
    const { client, config, log } = this.deps;
    try {
      const existing = await client.environments.get(this.name);
      const type = existing.type.toLowerCase();
      if (type === 'logical') {
        throw new PermanentError(`cannot report a snapshot to the logical environment ${this.name}`);
      }
      if (type !== 'k8s') {
        throw new PermanentError(
          `environment ${this.name} already exists with type ${existing.type}, which does not match the snapshot type K8S`,
        );
      }
    } catch (err) {
      if (!(err instanceof VerityApiError) || err.status !== 404) {
        throw err;
      }
      await client.environments.put({
        name: this.name,
        type: 'K8S',
        description: config.environmentDescription,
      });
      log.info({ environment: this.name }, 'environment created (type K8S)');
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.debounceTimer);
    clearTimeout(this.heartbeatTimer);
    this.delivery.stop();
  }

  /** Resolves when no report waits for delivery (tests, shutdown). */
  idle(): Promise<void> {
    return this.delivery.idle();
  }
}
