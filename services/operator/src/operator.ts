/**
 * The operator: the informers (`informers.ts`) feed one work queue of keys `Kind/namespace/name`
 * through the generation predicate (`generation-predicate.ts`); N workers drain it, never two at
 * once for one key, only while this replica leads; and each reconcile is followed by the requeue
 * the reconcile skeleton asks for (after the interval, with backoff, or none), a log line and an
 * Event (`events.ts`).
 */
import { EventEmitter } from 'node:events';
import type { KubeConfig } from '@kubernetes/client-node';
import { actionHandler } from './action-reconciler.js';
import type { OperatorConfig } from './config.js';
import type { KindName } from './crds.js';
import { environmentHandler } from './environment-reconciler.js';
import { EventRecorder, OutcomeEvents } from './events.js';
import { GenerationPredicate } from './generation-predicate.js';
import { Informers } from './informers.js';
import { Kube } from './kube.js';
import { LeaderElector } from './leader-election.js';
import { createMetrics, type OperatorMetrics } from './metrics.js';
import { policyHandler } from './policy-reconciler.js';
import { Tenants } from './tenants.js';
import {
  reconcileResource,
  type KindHandler,
  type Outcome,
  type RawResource,
  type ReconcileContext,
} from './reconcile.js';
import { WorkQueue } from './work-queue.js';

type Log = Record<'info' | 'warn' | 'error' | 'debug', (obj: object, msg: string) => void>;

/** What one reconcile did; emitted as `reconciled`. */
export interface ReconciledEvent extends Outcome {
  kind: KindName;
  namespace: string;
  name: string;
  generation: number | undefined;
  durationMs: number;
}

export interface OperatorOptions {
  config: OperatorConfig;
  kubeConfig: KubeConfig;
  log: Log;
  /** Restart delays of a failed informer; doubled per failure up to the max. */
  informerRestartBaseMs?: number;
  informerRestartMaxMs?: number;
  now?: () => Date;
}

// The handlers are typed per kind; the operator hands each the resource its schema parsed.
const HANDLERS = {
  Environment: environmentHandler,
  Policy: policyHandler,
  Action: actionHandler,
} as unknown as Record<KindName, KindHandler<unknown>>;

/** The key of a resource in the work queue. */
export const keyOf = (kind: KindName, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

export class Operator extends EventEmitter<{
  reconciled: [ReconciledEvent];
  synced: [];
  restart: [kind: KindName, error: string];
  leading: [boolean];
}> {
  readonly metrics: OperatorMetrics = createMetrics();
  /** The organization and key of each watched namespace. */
  readonly tenants: Tenants;
  private readonly queue: WorkQueue;
  private readonly informers: Informers;
  private readonly predicate = new GenerationPredicate();
  /** Policies known to be in Verity (namespace/name -> Verity name), ahead of the informer cache. */
  private readonly policiesInVerity = new Map<string, string>();
  /** What every reconcile shares; the client is its namespace's (process()). */
  private readonly ctx: Omit<ReconcileContext, 'api'>;
  private workers: Array<Promise<void>> = [];
  private stopped = false;
  private readonly elector: LeaderElector | undefined;
  private readonly events: OutcomeEvents;
  /** Reconciles run only while leading (always, without leader election). */
  private leading: boolean;
  private leadWaiters: Array<() => void> = [];

  constructor(private readonly options: OperatorOptions) {
    super();
    this.setMaxListeners(0);
    const { config } = options;
    this.queue = new WorkQueue({ baseDelayMs: config.retryBaseMs, maxDelayMs: config.retryMaxMs });
    this.tenants = new Tenants(config);
    this.ctx = {
      kube: new Kube(options.kubeConfig, config.secretNames),
      now: options.now ?? (() => new Date()),
      policy: (namespace, name) => this.policyRef(namespace, name),
    };
    const election = config.leaderElection;
    this.leading = election === undefined;
    this.events = new OutcomeEvents(
      new EventRecorder(
        options.kubeConfig,
        election?.identity ?? 'verity-operator',
        options.log,
        this.ctx.now,
      ),
      (type) => this.metrics.events.inc({ type }),
    );
    if (election) {
      this.elector = new LeaderElector(
        options.kubeConfig,
        election,
        { onStartedLeading: () => this.setLeading(true), onStoppedLeading: () => this.setLeading(false) },
        options.log,
      );
    }
    this.metrics.leader.set(this.leading ? 1 : 0);
    this.informers = new Informers({
      kubeConfig: options.kubeConfig,
      namespaces: this.tenants.watched,
      log: options.log,
      restartBaseMs: options.informerRestartBaseMs,
      restartMaxMs: options.informerRestartMaxMs,
      observe: (kind, obj, event) => this.observe(kind, obj, event),
      onSynced: () => this.emit('synced'),
      onRestart: (kind, error) => {
        this.metrics.informerRestarts.inc({ kind });
        this.emit('restart', kind, error);
      },
    });
  }

  /** True once every informer has listed its resources. */
  get ready(): boolean {
    return this.informers.ready;
  }

  /** Whether this replica reconciles now. */
  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    // Informers run on every replica: a standby keeps its cache warm and is ready to lead.
    this.informers.start();
    for (let i = 0; i < this.options.config.workers; i++) {
      this.workers.push(this.work());
    }
    this.elector?.start();
  }

  /**
   * Stops reconciling and watching. A leader releases its Lease, so a standby takes over at
   * once; `release: false` leaves the Lease to expire, as a crashed process would.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.informers.halt();
    this.queue.shutDown();
    for (const wake of this.leadWaiters.splice(0)) {
      wake();
    }
    await Promise.all(this.workers);
    await this.elector?.stop(options);
    await this.informers.stop();
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) {
      return;
    }
    this.leading = leading;
    this.metrics.leader.set(leading ? 1 : 0);
    this.emit('leading', leading);
    if (!leading) {
      return;
    }
    // A new leader looks at everything: what the old one left undone is in no queue here.
    this.events.clear();
    for (const { kind, resource } of this.informers.list()) {
      this.queue.add(keyOf(kind, resource.metadata.namespace ?? '', resource.metadata.name));
    }
    for (const wake of this.leadWaiters.splice(0)) {
      wake();
    }
  }

  /** Resolves once this replica leads (or is stopping). */
  private whenLeading(): Promise<void> {
    if (this.leading || this.stopped) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.leadWaiters.push(resolve));
  }

  /** Queues a resource when something other than its status changed. */
  private observe(kind: KindName, obj: RawResource, event: 'add' | 'update' | 'delete'): void {
    const key = keyOf(kind, obj.metadata.namespace ?? '', obj.metadata.name);
    if (this.predicate.admits(key, obj, event)) {
      this.queue.add(key);
    }
  }

  private policyRef(namespace: string, name: string) {
    const resource = this.informers.find('Policy', namespace, name);
    if (!resource) {
      return undefined;
    }
    const verityName = typeof resource.spec?.name === 'string' ? resource.spec.name : name;
    return {
      name: verityName,
      inVerity:
        typeof resource.status?.policyVersion === 'number' ||
        this.policiesInVerity.get(`${namespace}/${name}`) === verityName,
    };
  }

  private async work(): Promise<void> {
    for (;;) {
      await this.whenLeading();
      const key = await this.queue.get();
      if (key === undefined) {
        return;
      }
      if (!this.leading) {
        // Leadership went while this worker waited: the key waits for the next term.
        this.queue.done(key);
        this.queue.add(key);
        continue;
      }
      try {
        await this.process(key);
      } catch (err) {
        this.options.log.error({ key, err }, 'reconcile failed unexpectedly');
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const [kind, namespace, ...rest] = key.split('/') as [KindName, string, ...string[]];
    const name = rest.join('/');
    const resource = this.informers.find(kind, namespace, name);
    if (!resource) {
      this.queue.forget(key);
      return;
    }
    const tenant = this.tenants.of(namespace);
    if (!tenant) {
      // Only reached if an informer outgrows the namespaces: the resource belongs to no organization.
      this.queue.forget(key);
      this.options.log.warn({ kind, namespace, name }, 'ignored: the namespace maps to no organization');
      return;
    }
    const started = performance.now();
    const end = this.metrics.duration.startTimer({ kind });
    const outcome = await reconcileResource(HANDLERS[kind], resource, { ...this.ctx, api: tenant.api });
    end();
    this.metrics.reconciles.inc({ kind, result: outcome.result });
    if (this.stopped) {
      return;
    }
    this.requeue(key, outcome);
    const event: ReconciledEvent = {
      ...outcome,
      kind,
      namespace,
      name,
      generation: resource.metadata.generation,
      durationMs: Math.round(performance.now() - started),
    };
    this.logReconciled(event);
    if (kind === 'Policy' && outcome.result === 'success' && outcome.reason === 'Succeeded') {
      const verityName = typeof resource.spec?.name === 'string' ? resource.spec.name : name;
      const known = this.policiesInVerity.get(`${namespace}/${name}`) === verityName;
      this.policiesInVerity.set(`${namespace}/${name}`, verityName);
      // Environments waiting for this policy need not wait for their backoff.
      if (!known) {
        this.queueEnvironmentsUsing(namespace, name);
      }
    }
    await this.events.record(key, kind, resource, outcome);
    this.emit('reconciled', event);
  }

  /** Queues the key again as the outcome asks: after the interval, with backoff, or not at all. */
  private requeue(key: string, outcome: Outcome): void {
    switch (outcome.requeue) {
      case 'interval':
        this.queue.forget(key);
        this.queue.addAfter(key, this.options.config.requeueIntervalMs);
        break;
      case 'backoff':
        this.queue.addRateLimited(key);
        break;
      case 'none':
        this.queue.forget(key);
        break;
    }
  }

  /** One `reconciled` line per reconcile: info when it wrote status, debug when nothing changed. */
  private logReconciled(event: ReconciledEvent): void {
    const level = event.result === 'success' ? (event.statusWritten ? 'info' : 'debug') : 'warn';
    this.options.log[level](
      {
        kind: event.kind,
        namespace: event.namespace,
        name: event.name,
        generation: event.generation,
        result: event.result,
        reason: event.reason,
        ...(event.result === 'success' ? {} : { message: event.message }),
        durationMs: event.durationMs,
      },
      'reconciled',
    );
  }

  private queueEnvironmentsUsing(namespace: string, policy: string): void {
    for (const { resource: env } of this.informers.list('Environment', namespace)) {
      const policies = env.spec?.policies;
      if (Array.isArray(policies) && policies.includes(policy)) {
        this.queue.add(keyOf('Environment', namespace, env.metadata.name));
      }
    }
  }
}
