/**
 * Pod informers of `@kubernetes/client-node` (list then watch), one per {@link WatchScope}:
 * - lists page by page (limit 500) so a large cluster never arrives as one giant body;
 * - watches with `allowWatchBookmarks=true` so a quiet watch keeps a fresh resourceVersion, and
 *   a server-side timeout (5 to 10 minutes, as client-go) so connections are renewed;
 * - keeps only the fields a report needs (client-go's transform): memory follows pod count, not
 *   pod size;
 * - restarts itself after an error with capped exponential backoff; a 410 Gone relists
 *   (the informer's own handling), and the relist's deletes and adds reach the listeners.
 * `synced` turns true once every scope has completed its first full list.
 */
import { EventEmitter } from 'node:events';
import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type V1ContainerStatus,
  type V1Pod,
} from '@kubernetes/client-node';
import fetch, { type Headers } from 'node-fetch';
import type { WatchScope } from './watch-plan.js';

/** A pod as the cache keeps it: a V1Pod holding only what reports and the change filter read. */
export type CachedPod = V1Pod;

const LIST_PAGE_SIZE = 500;

interface PodListPage {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: V1Pod[];
}

/**
 * GET a list page as plain JSON, authenticated as the Watch is (same kubeconfig, same fetch).
 * Not the generated CoreV1Api: it deserialises every field of every pod into model classes,
 * a cost paid for fields the reporter drops at once.
 */
async function getJson<T>(kubeConfig: KubeConfig, path: string): Promise<T> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) {
    throw new Error('no current cluster in the kubeconfig');
  }
  const init = await kubeConfig.applyToFetchOptions({ method: 'GET' });
  (init.headers as Headers).set('accept', 'application/json');
  const res = await fetch(server + path, init);
  if (res.status !== 200) {
    // The shape the informer checks: statusCode 410 makes it relist.
    const err = new Error(`list ${path}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`) as Error & {
      statusCode: number;
    };
    err.statusCode = res.status;
    throw err;
  }
  return (await res.json()) as T;
}

/**
 * The subset of a pod that reports read; everything else is dropped before caching. Pods arrive
 * as plain JSON (the creation time an RFC 3339 string); the cache keeps a Date, as V1Pod types it.
 */
export function slimPod(pod: V1Pod): CachedPod {
  const m = pod.metadata ?? {};
  const hash = m.labels?.['pod-template-hash'];
  const created = m.creationTimestamp as Date | string | undefined;
  return {
    metadata: {
      name: m.name ?? '',
      namespace: m.namespace ?? '',
      resourceVersion: m.resourceVersion,
      creationTimestamp: typeof created === 'string' ? new Date(created) : created,
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
      ...(hash ? { labels: { 'pod-template-hash': hash } } : {}),
    },
    status: {
      phase: pod.status?.phase,
      // Only image and imageID are read; the type's other required fields are not kept.
      containerStatuses: (pod.status?.containerStatuses ?? []).map(
        (c) => ({ image: c.image, imageID: c.imageID }) as V1ContainerStatus,
      ),
    },
  };
}

/** A Watch that asks for bookmarks and a server-side timeout, and slims objects before the cache sees them. */
class SlimWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly timeoutSeconds: () => number,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.timeoutSeconds() },
      (phase, obj: V1Pod) =>
        callback(
          phase,
          phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? slimPod(obj) : obj,
        ),
      done,
    );
  }
}

export interface PodWatchOptions {
  /** First restart delay after an error; doubles up to `restartMaxMs`. */
  restartBaseMs?: number;
  restartMaxMs?: number;
  random?: () => number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

interface Source {
  scope: WatchScope;
  informer: ListWatch<CachedPod>;
  synced: boolean;
  failures: number;
  restartTimer?: NodeJS.Timeout;
}

/** The pod informers of all scopes. Emits `change` (namespace, scope key) and `synced` (scope key). */
export class PodWatch extends EventEmitter<{
  change: [namespace: string, scope: string];
  synced: [scope: string];
  restart: [scope: string, error: string];
}> {
  private readonly sources = new Map<string, Source>();
  private stopped = false;

  constructor(
    kubeConfig: KubeConfig,
    scopes: WatchScope[],
    private readonly options: PodWatchOptions,
  ) {
    super();
    this.setMaxListeners(0);
    const random = options.random ?? Math.random;
    const watch = new SlimWatch(kubeConfig, () => 300 + Math.floor(random() * 300));
    for (const scope of scopes) {
      const path = scope.namespace
        ? `/api/v1/namespaces/${encodeURIComponent(scope.namespace)}/pods`
        : '/api/v1/pods';
      const source = { scope, synced: false, failures: 0 } as Source;
      const list = async (): Promise<KubernetesListObject<CachedPod>> => {
        const items: CachedPod[] = [];
        let cont: string | undefined;
        let resourceVersion: string | undefined;
        do {
          const query = new URLSearchParams({ limit: String(LIST_PAGE_SIZE) });
          if (scope.labelSelector) {
            query.set('labelSelector', scope.labelSelector);
          }
          if (cont) {
            query.set('continue', cont);
          }
          const page = await getJson<PodListPage>(kubeConfig, `${path}?${query.toString()}`);
          // Every page of one list shares the first page's resourceVersion; the watch resumes there.
          resourceVersion ??= page.metadata?.resourceVersion;
          for (const pod of page.items ?? []) {
            items.push(slimPod(pod));
          }
          cont = page.metadata?.continue || undefined;
        } while (cont);
        // The informer fills its cache synchronously once this promise settles; mark the scope
        // synced after that, so listeners see a complete cache.
        setImmediate(() => this.markSynced(source));
        return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion }, items };
      };
      source.informer = new ListWatch(path, watch, list, false, scope.labelSelector);
      const changed = (pod: CachedPod) => {
        source.failures = 0;
        this.emit('change', pod.metadata?.namespace ?? '', scope.key);
      };
      source.informer.on('add', changed);
      source.informer.on('update', changed);
      source.informer.on('delete', changed);
      source.informer.on('error', (err: unknown) => this.restart(source, err));
      this.sources.set(scope.key, source);
    }
  }

  private markSynced(source: Source) {
    source.failures = 0;
    if (source.synced) {
      return;
    }
    source.synced = true;
    this.options.log.info({ scope: source.scope.key, pods: source.informer.list().length }, 'pods listed');
    this.emit('synced', source.scope.key);
  }

  private restart(source: Source, err: unknown) {
    if (this.stopped) {
      return;
    }
    const base = this.options.restartBaseMs ?? 1000;
    const max = this.options.restartMaxMs ?? 30_000;
    const exp = Math.min(max, base * 2 ** source.failures);
    const delay = Math.round(exp / 2 + (this.options.random ?? Math.random)() * (exp / 2));
    source.failures += 1;
    const message = err instanceof Error ? err.message : JSON.stringify(err);
    this.options.log.warn(
      { scope: source.scope.key, err: message, retryInMs: delay },
      'pod watch failed; restarting',
    );
    this.emit('restart', source.scope.key, message);
    clearTimeout(source.restartTimer);
    source.restartTimer = setTimeout(() => {
      if (!this.stopped) {
        void source.informer.start();
      }
    }, delay);
  }

  /** Starts every informer; resolves at once (readiness follows `synced`). */
  start(): void {
    for (const s of this.sources.values()) {
      void s.informer.start();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.sources.values()) {
      clearTimeout(s.restartTimer);
      await s.informer.stop();
    }
  }

  /** Whether every scope has completed its first list. */
  get synced(): boolean {
    return [...this.sources.values()].every((s) => s.synced);
  }

  isSynced(scope: string): boolean {
    return this.sources.get(scope)?.synced ?? false;
  }

  /** The cached pods of a scope. */
  pods(scope: string): readonly CachedPod[] {
    return this.sources.get(scope)?.informer.list() ?? [];
  }

  /** Pods in every cache. */
  get size(): number {
    let n = 0;
    for (const s of this.sources.values()) {
      n += s.informer.list().length;
    }
    return n;
  }
}
