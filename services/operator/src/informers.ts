/**
 * The operator's view of the cluster: one informer per kind and watched namespace (one
 * cluster-wide per kind when told to watch every namespace), each restarted with backoff after an
 * error. Their caches answer what a reconcile reads; their add, update and delete events go to
 * `observe`.
 */
import {
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { GROUP, KINDS, VERSION, type KindName } from './crds.js';
import type { RawResource } from './reconcile.js';

type Log = Record<'info' | 'warn', (obj: object, msg: string) => void>;

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

export interface InformerOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch, or every namespace with one cluster-wide informer per kind. */
  namespaces: string[] | 'all';
  log: Log;
  /** Restart delays of a failed informer; doubled per failure up to the max. */
  restartBaseMs?: number;
  restartMaxMs?: number;
  observe: (kind: KindName, obj: RawResource, event: 'add' | 'update' | 'delete') => void;
  /** Every informer has listed its resources. */
  onSynced: () => void;
  onRestart: (kind: KindName, error: string) => void;
}

export class Informers {
  private readonly sources: Source[] = [];
  private stopped = false;

  constructor(private readonly options: InformerOptions) {
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    const namespaces = options.namespaces === 'all' ? [undefined] : options.namespaces;
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
        for (const event of ['add', 'update', 'delete'] as const) {
          source.informer.on(event, (o) => options.observe(kind, raw(o), event));
        }
        source.informer.on('error', (err: unknown) => this.restart(source, err));
        this.sources.push(source);
      }
    }
  }

  /** True once every informer has listed its resources. */
  get ready(): boolean {
    return this.sources.every((s) => s.synced);
  }

  start(): void {
    for (const s of this.sources) {
      this.startInformer(s);
    }
  }

  /** No failed informer restarts from now on: the first step of stopping. */
  halt(): void {
    this.stopped = true;
  }

  async stop(): Promise<void> {
    this.halt();
    for (const s of this.sources) {
      clearTimeout(s.restartTimer);
      await s.informer.stop();
    }
  }

  /** The cached resource, if an informer holds it. */
  find(kind: KindName, namespace: string, name: string): RawResource | undefined {
    for (const s of this.sources) {
      if (s.kind !== kind || (s.namespace !== undefined && s.namespace !== namespace)) {
        continue;
      }
      const obj = s.informer.get(name, namespace);
      if (obj) {
        return raw(obj);
      }
    }
    return undefined;
  }

  /** Every cached resource of `kind` (every kind when undefined), in `namespace` or everywhere. */
  list(kind?: KindName, namespace?: string): Array<{ kind: KindName; resource: RawResource }> {
    return this.sources
      .filter((s) => kind === undefined || s.kind === kind)
      .flatMap((s) =>
        s.informer.list(namespace ?? s.namespace).map((o) => ({ kind: s.kind, resource: raw(o) })),
      );
  }

  private startInformer(source: Source): void {
    source.informer.start().catch((err: unknown) => this.restart(source, err));
  }

  private markSynced(source: Source): void {
    source.failures = 0;
    if (source.synced) {
      return;
    }
    source.synced = true;
    this.options.log.info({ kind: source.kind, namespace: source.namespace ?? '*' }, 'resources listed');
    if (this.ready) {
      this.options.onSynced();
    }
  }

  private restart(source: Source, err: unknown): void {
    if (this.stopped) {
      return;
    }
    const base = this.options.restartBaseMs ?? 1000;
    const max = this.options.restartMaxMs ?? 30_000;
    const delay = Math.min(max, base * 2 ** source.failures);
    source.failures += 1;
    const message = err instanceof Error ? err.message : JSON.stringify(err);
    this.options.log.warn(
      { kind: source.kind, namespace: source.namespace ?? '*', err: message, retryInMs: delay },
      'informer failed; restarting',
    );
    this.options.onRestart(source.kind, message);
    clearTimeout(source.restartTimer);
    source.restartTimer = setTimeout(() => {
      if (!this.stopped) {
        this.startInformer(source);
      }
    }, delay);
    source.restartTimer.unref();
  }
}
