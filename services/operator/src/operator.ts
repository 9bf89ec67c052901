/**
 * The operator: one informer per kind and watched namespace (one cluster-wide per kind when no
 * namespaces are given), restarted with backoff after an error; one work queue of keys
 * `Kind/namespace/name` that N workers drain, never two at once for one key; and the requeues
 * the reconcile skeleton asks for (after the interval, with backoff, or none).
 *
 * Events reach the queue as flux's generation predicate lets them: a new object, a spec change
 * (generation), deletion, finalizer, label or annotation changes. A status-only change (the
 * operator's own status write among them) queues nothing.
 */
import { EventEmitter } from 'node:events';
import {
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { actionHandler } from './action-reconciler.js';
import { createOperatorApi, type OperatorApi } from './api-client.js';
import { tokenReader, type OperatorConfig } from './config.js';
import { GROUP, KINDS, VERSION, type KindName } from './crds.js';
import { environmentHandler } from './environment-reconciler.js';
import { EventRecorder } from './events.js';
import { Kube } from './kube.js';
import { LeaderElector } from './leader-election.js';
import { createMetrics, type OperatorMetrics } from './metrics.js';
import { policyHandler } from './policy-reconciler.js';
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

// Custom resources arrive as plain JSON (timestamps as strings): RawResource, not the generated models.
type CustomInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
const raw = (o: KubernetesObject) => o as unknown as RawResource;

interface Source {
  kind: KindName;
  namespace: string | undefined;
  informer: CustomInformer;
  synced: boolean;
  failures: number;
  restartTimer?: NodeJS.Timeout;
}

/** The key of a resource in the work queue. */
export const keyOf = (kind: KindName, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

export class Operator extends EventEmitter<{
  reconciled: [ReconciledEvent];
  synced: [];
  restart: [kind: KindName, error: string];
  leading: [boolean];
}> {
  readonly metrics: OperatorMetrics = createMetrics();
  readonly api: OperatorApi;
  private readonly queue: WorkQueue;
  private readonly sources: Source[] = [];
  private readonly seen = new Map<string, string>();
  /** Policies known to be in Verity (namespace/name -> Verity name), ahead of the informer cache. */
  private readonly policiesInVerity = new Map<string, string>();
  private readonly ctx: ReconcileContext;
  private workers: Array<Promise<void>> = [];
  private stopped = false;
  private readonly elector: LeaderElector | undefined;
  private readonly events: EventRecorder;
  /** Reconciles run only while leading (always, without leader election). */
  private leading: boolean;
  private leadWaiters: Array<() => void> = [];
  /** The last Event recorded per key, so a failure repeating itself is recorded once. */
  private readonly lastEvent = new Map<string, string>();

  constructor(private readonly options: OperatorOptions) {
    super();
    this.setMaxListeners(0);
    const { config } = options;
    this.queue = new WorkQueue({ baseDelayMs: config.retryBaseMs, maxDelayMs: config.retryMaxMs });
    this.api = createOperatorApi({
      baseUrl: config.apiUrl,
      org: config.org,
      token: tokenReader(config.token),
    });
    this.ctx = {
      api: this.api,
      kube: new Kube(options.kubeConfig, config.secretNames),
      now: options.now ?? (() => new Date()),
      policy: (namespace, name) => this.policyRef(namespace, name),
    };
    const election = config.leaderElection;
    this.leading = election === undefined;
    this.events = new EventRecorder(
      options.kubeConfig,
      election?.identity ?? 'verity-operator',
      options.log,
      this.ctx.now,
    );
    if (election)
      this.elector = new LeaderElector(
        options.kubeConfig,
        election,
        { onStartedLeading: () => this.setLeading(true), onStoppedLeading: () => this.setLeading(false) },
        options.log,
      );
    this.metrics.leader.set(this.leading ? 1 : 0);
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    const namespaces = config.watchNamespaces.length > 0 ? config.watchNamespaces : [undefined];
    for (const kind of Object.keys(KINDS) as KindName[]) {
      const plural = KINDS[kind].plural;
      for (const namespace of namespaces) {
        const path = namespace
          ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${plural}`
          : `/apis/${GROUP}/${VERSION}/${plural}`;
        const source = { kind, namespace, synced: false, failures: 0 } as Source;
        const list = async () => {
          const result = (await (namespace
            ? custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural })
            : custom.listClusterCustomObject({
                group: GROUP,
                version: VERSION,
                plural,
              }))) as KubernetesListObject<KubernetesObject>;
          // The informer fills its cache once this resolves; mark the source synced after that.
          setImmediate(() => this.markSynced(source));
          return result;
        };
        source.informer = makeInformer(options.kubeConfig, path, list);
        source.informer.on('add', (o) => this.observe(kind, raw(o), 'add'));
        source.informer.on('update', (o) => this.observe(kind, raw(o), 'update'));
        source.informer.on('delete', (o) => this.observe(kind, raw(o), 'delete'));
        source.informer.on('error', (err: unknown) => this.restart(source, err));
        this.sources.push(source);
      }
    }
  }

  /** True once every informer has listed its resources. */
  get ready(): boolean {
    return this.sources.every((s) => s.synced);
  }

  /** Whether this replica reconciles now. */
  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    // Informers run on every replica: a standby keeps its cache warm and is ready to lead.
    for (const s of this.sources) this.startInformer(s);
    for (let i = 0; i < this.options.config.workers; i++) this.workers.push(this.work());
    this.elector?.start();
  }

  /**
   * Stops reconciling and watching. A leader releases its Lease, so a standby takes over at
   * once; `release: false` leaves the Lease to expire, as a crashed process would.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.queue.shutDown();
    for (const wake of this.leadWaiters.splice(0)) wake();
    await Promise.all(this.workers);
    await this.elector?.stop(options);
    for (const s of this.sources) {
      clearTimeout(s.restartTimer);
      await s.informer.stop();
    }
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.metrics.leader.set(leading ? 1 : 0);
    this.emit('leading', leading);
    if (!leading) return;
    // A new leader looks at everything: what the old one left undone is in no queue here.
    this.lastEvent.clear();
    for (const s of this.sources)
      for (const o of s.informer.list(s.namespace).map(raw))
        this.queue.add(keyOf(s.kind, o.metadata.namespace ?? '', o.metadata.name));
    for (const wake of this.leadWaiters.splice(0)) wake();
  }

  /** Resolves once this replica leads (or is stopping). */
  private whenLeading(): Promise<void> {
    if (this.leading || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.leadWaiters.push(resolve));
  }

  private startInformer(source: Source): void {
    source.informer.start().catch((err: unknown) => this.restart(source, err));
  }

  private markSynced(source: Source): void {
    source.failures = 0;
    if (source.synced) return;
    source.synced = true;
    this.options.log.info({ kind: source.kind, namespace: source.namespace ?? '*' }, 'resources listed');
    if (this.ready) this.emit('synced');
  }

  private restart(source: Source, err: unknown): void {
    if (this.stopped) return;
    const base = this.options.informerRestartBaseMs ?? 1000;
    const max = this.options.informerRestartMaxMs ?? 30_000;
    const delay = Math.min(max, base * 2 ** source.failures);
    source.failures += 1;
    const message = err instanceof Error ? err.message : JSON.stringify(err);
    this.metrics.informerRestarts.inc({ kind: source.kind });
    this.options.log.warn(
      { kind: source.kind, namespace: source.namespace ?? '*', err: message, retryInMs: delay },
      'informer failed; restarting',
    );
    this.emit('restart', source.kind, message);
    clearTimeout(source.restartTimer);
    source.restartTimer = setTimeout(() => {
      if (!this.stopped) this.startInformer(source);
    }, delay);
    source.restartTimer.unref();
  }

  /** Queues a resource when something other than its status changed. */
  private observe(kind: KindName, obj: RawResource, event: 'add' | 'update' | 'delete'): void {
    const key = keyOf(kind, obj.metadata.namespace ?? '', obj.metadata.name);
    if (event === 'delete') {
      this.seen.delete(key);
      this.queue.add(key);
      return;
    }
    const m = obj.metadata as RawResource['metadata'] & { labels?: unknown; annotations?: unknown };
    const fingerprint = JSON.stringify([
      m.generation,
      m.deletionTimestamp ?? null,
      m.finalizers ?? [],
      m.labels ?? {},
      m.annotations ?? {},
    ]);
    if (event === 'update' && this.seen.get(key) === fingerprint) return;
    this.seen.set(key, fingerprint);
    this.queue.add(key);
  }

  private find(kind: KindName, namespace: string, name: string): RawResource | undefined {
    for (const s of this.sources) {
      if (s.kind !== kind || (s.namespace !== undefined && s.namespace !== namespace)) continue;
      const obj = s.informer.get(name, namespace);
      if (obj) return raw(obj);
    }
    return undefined;
  }

  private policyRef(namespace: string, name: string) {
    const resource = this.find('Policy', namespace, name);
    if (!resource) return undefined;
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
      if (key === undefined) return;
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
    const resource = this.find(kind, namespace, name);
    if (!resource) {
      this.queue.forget(key);
      return;
    }
    const started = performance.now();
    const end = this.metrics.duration.startTimer({ kind });
    const outcome = await reconcileResource(HANDLERS[kind], resource, this.ctx);
    end();
    this.metrics.reconciles.inc({ kind, result: outcome.result });
    if (this.stopped) return;
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
    const event: ReconciledEvent = {
      ...outcome,
      kind,
      namespace,
      name,
      generation: resource.metadata.generation,
      durationMs: Math.round(performance.now() - started),
    };
    const level = outcome.result === 'success' ? (outcome.statusWritten ? 'info' : 'debug') : 'warn';
    this.options.log[level](
      {
        kind,
        namespace,
        name,
        generation: event.generation,
        result: outcome.result,
        reason: outcome.reason,
        ...(outcome.result === 'success' ? {} : { message: outcome.message }),
        durationMs: event.durationMs,
      },
      'reconciled',
    );
    if (kind === 'Policy' && outcome.result === 'success' && outcome.reason === 'Succeeded') {
      const verityName = typeof resource.spec?.name === 'string' ? resource.spec.name : name;
      const known = this.policiesInVerity.get(`${namespace}/${name}`) === verityName;
      this.policiesInVerity.set(`${namespace}/${name}`, verityName);
      // Environments waiting for this policy need not wait for their backoff.
      if (!known) this.queueEnvironmentsUsing(namespace, name);
    }
    await this.recordEvent(key, resource, kind, outcome);
    this.emit('reconciled', event);
  }

  /**
   * An Event on the resource for what the reconcile changed or what failed; a repeat of the
   * last Event of the same key (the same failure on every retry, a drift check that found
   * nothing) is not recorded again.
   */
  private async recordEvent(
    key: string,
    resource: RawResource,
    kind: KindName,
    outcome: Outcome,
  ): Promise<void> {
    if (outcome.reason === 'Deleted') {
      this.lastEvent.delete(key);
      return;
    }
    const type = outcome.result === 'success' ? 'Normal' : 'Warning';
    const said = `${type}|${outcome.reason}|${outcome.message}`;
    if (!outcome.statusWritten && this.lastEvent.get(key) === said) return;
    this.lastEvent.set(key, said);
    this.metrics.events.inc({ type });
    await this.events.record(
      {
        kind,
        namespace: resource.metadata.namespace ?? '',
        name: resource.metadata.name,
        uid: resource.metadata.uid,
        resourceVersion: resource.metadata.resourceVersion,
      },
      type,
      outcome.reason,
      outcome.message,
    );
  }

  private queueEnvironmentsUsing(namespace: string, policy: string): void {
    for (const s of this.sources) {
      if (s.kind !== 'Environment') continue;
      for (const env of s.informer.list(namespace).map(raw)) {
        const policies = env.spec?.policies;
        if (Array.isArray(policies) && policies.includes(policy))
          this.queue.add(keyOf('Environment', namespace, env.metadata.name));
      }
    }
  }
}
