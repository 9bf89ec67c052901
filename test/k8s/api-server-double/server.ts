/** The double: an ObjectStore behind a real HTTP server. */
import { once, EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parseLabelSelector } from '../../../services/reporter/src/label-selector.js';
import { jsonPatch, mergePatch, PatchError } from '../patch.js';
import { EVENTS, LEASES, PODS, SECRETS, typeKey, type ResourceType } from './resources.js';
import { HttpError, ObjectStore, status, type K8sObject, type StoreEvent } from './store.js';
import { translate, type WatchScope } from './watch.js';

interface ActiveWatch {
  res: ServerResponse;
  scope: WatchScope;
  bookmarks: boolean;
  kind: string;
  apiVersion: string;
}

/** Failures a test asks for: the next n requests of a kind answer with a status. */
interface Injected {
  kind: 'list' | 'watch';
  status: number;
  remaining: number;
}

export interface ApiServerDoubleOptions {
  /** Bearer token clients must send; default `double-token`. */
  token?: string;
  /** Events kept for watches to resume from; older ones are compacted (410 Gone). */
  historyLimit?: number;
  /** Bookmarks go out this often on watches that asked for them; default 60 s, as the API server. */
  bookmarkIntervalMs?: number;
}

/** The double: an ObjectStore behind a real HTTP server. */
export class ApiServerDouble extends EventEmitter<{ watch: [WatchScope]; list: [string] }> {
  readonly store: ObjectStore;
  private readonly types = new Map<string, ResourceType>();
  private readonly watches = new Set<ActiveWatch>();
  private readonly injected: Injected[] = [];
  private readonly lastStatus = new WeakMap<ServerResponse, number>();
  private server: Server | undefined;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  readonly token: string;
  url = '';
  /** Requests served, by kind: what tests assert on for "relisted" or "watched again". */
  readonly counts = { list: 0, watch: 0, expired: 0, dropped: 0, bookmarks: 0 };
  /** Every write request (not GET) with the outcome: what tests count for "wrote status once". */
  readonly writes: Array<{
    method: string;
    resource: string;
    namespace: string | undefined;
    name: string | undefined;
    subresource: string | undefined;
    contentType: string | undefined;
    status: number;
  }> = [];

  constructor(private readonly options: ApiServerDoubleOptions = {}) {
    super();
    this.setMaxListeners(0);
    this.token = options.token ?? 'double-token';
    this.store = new ObjectStore(options.historyLimit);
    for (const t of [PODS, LEASES, EVENTS]) {
      this.register(t);
    }
    this.store.on('event', (e) => this.fanOut(e));
  }

  /** Serves another resource type (custom resources for the operator, for example). */
  register(t: ResourceType): void {
    this.types.set(`${t.group}/${t.version}/${t.resource}`, t);
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const every = this.options.bookmarkIntervalMs ?? 60_000;
    this.bookmarkTimer = setInterval(() => this.sendBookmarks(), every);
    this.bookmarkTimer.unref();
    return this;
  }

  async close(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    for (const w of this.watches) {
      w.res.destroy();
    }
    this.watches.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A client configuration pointing at the double. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromString(this.kubeconfigYaml());
    return kc;
  }

  /** The kubeconfig file content for a process (KUBECONFIG). */
  kubeconfigYaml(): string {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'double', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'reporter', user: { token: this.token } }],
      contexts: [{ name: 'double', context: { cluster: 'double', user: 'reporter' } }],
      'current-context': 'double',
    });
  }

  // --- what tests do to the cluster ---

  /** Creates or replaces a pod. */
  putPod(pod: Record<string, any>): K8sObject {
    return this.store.apply(PODS, pod as K8sObject);
  }

  deletePod(namespace: string, name: string): void {
    this.store.delete(PODS, namespace, name);
  }

  /** Creates or replaces a Secret from plain values (what `stringData` becomes: base64 `data`). */
  putSecret(
    namespace: string,
    name: string,
    values: Record<string, string>,
    labels?: Record<string, string>,
  ): K8sObject {
    const data = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
    );
    return this.store.apply(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace, name, ...(labels ? { labels } : {}) },
      data,
    });
  }

  /** The Events about an object (what `kubectl describe` shows), oldest first. */
  eventsFor(kind: string, namespace: string, name: string): K8sObject[] {
    return this.store
      .list(EVENTS, namespace)
      .map(([, e]) => e)
      .filter((e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
  }

  /** A Lease, if there is one. */
  lease(namespace: string, name: string): K8sObject | undefined {
    return this.store.get(LEASES, namespace, name);
  }

  /** Closes every open watch connection abruptly, as a load balancer or an API server restart does. */
  dropWatches(): number {
    const n = this.watches.size;
    for (const w of this.watches) {
      w.res.socket?.destroy();
    }
    this.watches.clear();
    this.counts.dropped += n;
    return n;
  }

  /** Forgets history: resuming watches get 410 Gone and must relist. */
  expireHistory(): void {
    this.store.compact();
  }

  /** The next `times` list or watch requests answer `status` (a Status body). */
  failNext(kind: 'list' | 'watch', status: number, times = 1): void {
    this.injected.push({ kind, status, remaining: times });
  }

  /** Ends every injected failure still pending. */
  clearFailures(): void {
    this.injected.length = 0;
  }

  /** Sends a BOOKMARK with the current resourceVersion on every watch that asked for bookmarks. */
  sendBookmarks(): void {
    for (const w of this.watches) {
      if (!w.bookmarks) {
        continue;
      }
      this.counts.bookmarks += 1;
      this.write(w, {
        type: 'BOOKMARK',
        object: {
          kind: w.kind,
          apiVersion: w.apiVersion,
          metadata: { resourceVersion: String(this.store.resourceVersion) },
        },
      });
    }
  }

  /** Open watch connections. */
  get activeWatches(): number {
    return this.watches.size;
  }

  /** Resolves once `n` watch connections are open. */
  async waitForWatches(n: number, timeoutMs = 10_000): Promise<void> {
    const deadline = AbortSignal.timeout(timeoutMs);
    while (this.watches.size < n) {
      await once(this, 'watch', { signal: deadline });
    }
  }

  // --- HTTP ---

  private write(w: ActiveWatch, event: unknown): void {
    if (!w.res.writableEnded && !w.res.destroyed) {
      w.res.write(JSON.stringify(event) + '\n');
    }
  }

  private fanOut(e: StoreEvent): void {
    for (const w of this.watches) {
      const seen = translate(w.scope, e);
      if (seen) {
        this.write(w, seen);
      }
    }
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    this.lastStatus.set(res, code);
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      try {
        this.route(req, res, Buffer.concat(body).toString('utf8'));
      } catch (err) {
        if (err instanceof HttpError) {
          this.send(res, err.code, status(err.code, err.reason, err.message));
        } else if (err instanceof PatchError) {
          this.send(
            res,
            err.testFailed ? 409 : 422,
            status(err.testFailed ? 409 : 422, err.testFailed ? 'Conflict' : 'Invalid', err.message),
          );
        } else {
          this.send(res, 500, status(500, 'InternalError', (err as Error).message));
        }
      }
    });
  }

  private route(req: IncomingMessage, res: ServerResponse, text: string): void {
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      throw new HttpError(401, 'Unauthorized', 'Unauthorized');
    }
    const url = new URL(req.url ?? '/', 'http://double');
    // /api/v1/... or /apis/{group}/{version}/...
    const parts = url.pathname.split('/').filter(Boolean);
    let group = '';
    let version: string | undefined;
    let rest: string[];
    if (parts[0] === 'api') {
      [version, rest] = [parts[1], parts.slice(2)];
    } else if (parts[0] === 'apis') {
      [group, version, rest] = [parts[1] ?? '', parts[2], parts.slice(3)];
    } else {
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource`);
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [resource, name, subresource] = rest;
    const t = this.types.get(`${group}/${version}/${resource}`);
    if (!t || (subresource !== undefined && !(subresource === 'status' && t.statusSubresource))) {
      throw new HttpError(404, 'NotFound', `the server could not find the requested resource`);
    }
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    if (method !== 'GET') {
      const entry = {
        method,
        resource: resource!,
        namespace,
        name,
        subresource,
        contentType: req.headers['content-type'],
        status: 0,
      };
      this.writes.push(entry);
      res.on('finish', () => (entry.status = this.lastStatus.get(res) ?? 0));
    }
    if (subresource === 'status') {
      return this.statusRoute(t, method, namespace, name!, req, res, text);
    }

    if (method === 'GET' && name === undefined) {
      const selectorText = q.get('labelSelector') ?? '';
      const parsed = parseLabelSelector(selectorText);
      if (!parsed.ok) {
        throw new HttpError(400, 'BadRequest', `unable to parse requirement: ${parsed.error}`);
      }
      const watch = q.get('watch') === 'true' || q.get('watch') === '1';
      const failure = this.takeInjected(watch ? 'watch' : 'list');
      if (failure) {
        throw new HttpError(failure, 'InternalError', `injected failure ${failure}`);
      }
      const scope = { typeKey: typeKey(t), namespace, selector: parsed.requirements };
      if (watch) {
        return this.watch(t, scope, q, res);
      }
      return this.list(t, scope, q, res);
    }
    if (method === 'GET') {
      const obj = this.store.get(t, namespace, name!);
      if (!obj) {
        throw new HttpError(404, 'NotFound', `${resource} "${name}" not found`);
      }
      return this.send(res, 200, obj);
    }
    const input = text ? (JSON.parse(text) as K8sObject) : undefined;
    if (method === 'POST' && name === undefined && input) {
      input.metadata = { ...input.metadata, namespace: t.namespaced ? namespace : undefined };
      return this.send(res, 201, this.store.create(t, input));
    }
    if (method === 'PUT' && name !== undefined && input) {
      if (input.metadata?.name !== name) {
        throw new HttpError(400, 'BadRequest', 'the name of the object does not match');
      }
      input.metadata.namespace = t.namespaced ? namespace : undefined;
      return this.send(res, 200, this.store.replace(t, input));
    }
    if (method === 'PATCH' && name !== undefined && input !== undefined) {
      return this.send(res, 200, this.store.replace(t, this.patched(t, namespace, name, req, input), 'main'));
    }
    if (method === 'DELETE' && name !== undefined) {
      return this.send(res, 200, this.store.delete(t, namespace, name));
    }
    throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported here`);
  }

  /** GET, PUT and PATCH of `/status`: only `status` changes, generation never. */
  private statusRoute(
    t: ResourceType,
    method: string,
    namespace: string | undefined,
    name: string,
    req: IncomingMessage,
    res: ServerResponse,
    text: string,
  ): void {
    const current = this.store.get(t, namespace, name);
    if (!current) {
      throw new HttpError(404, 'NotFound', `${t.resource} "${name}" not found`);
    }
    if (method === 'GET') {
      return this.send(res, 200, current);
    }
    const input = text ? (JSON.parse(text) as unknown) : undefined;
    if (input === undefined) {
      throw new HttpError(400, 'BadRequest', 'the request body is empty');
    }
    let next: K8sObject;
    if (method === 'PUT') {
      next = input as K8sObject;
      if (next.metadata?.name !== name) {
        throw new HttpError(400, 'BadRequest', 'the name of the object does not match');
      }
      next.metadata.namespace = namespace;
    } else if (method === 'PATCH') {
      next = this.patched(t, namespace, name, req, input);
    } else {
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported here`);
    }
    this.send(res, 200, this.store.replace(t, next, 'status'));
  }

  /** The current object with a patch applied, by the request's content type. */
  private patched(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    req: IncomingMessage,
    patch: unknown,
  ): K8sObject {
    const current = this.store.get(t, namespace, name);
    if (!current) {
      throw new HttpError(404, 'NotFound', `${t.resource} "${name}" not found`);
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    let next: K8sObject;
    if (type === 'application/merge-patch+json') {
      next = mergePatch(current, patch) as K8sObject;
    } else if (type === 'application/json-patch+json') {
      next = jsonPatch(current, patch) as K8sObject;
    } else {
      throw new HttpError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json`,
      );
    }
    // A patch may not move the object; a resourceVersion it sets is a precondition.
    next.metadata = { ...next.metadata, name, namespace };
    if (next.metadata.resourceVersion === current.metadata.resourceVersion) {
      delete next.metadata.resourceVersion;
    }
    return next;
  }

  private takeInjected(kind: 'list' | 'watch'): number | undefined {
    const i = this.injected.find((f) => f.kind === kind && f.remaining > 0);
    if (!i) {
      return undefined;
    }
    i.remaining -= 1;
    return i.status;
  }

  private list(t: ResourceType, scope: WatchScope, q: URLSearchParams, res: ServerResponse): void {
    this.counts.list += 1;
    this.emit('list', scope.typeKey);
    const limit = Number(q.get('limit') ?? 0);
    let listRv = this.store.resourceVersion;
    let after = '';
    const token = q.get('continue');
    if (token) {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
        rv: number;
        after: string;
      };
      if (decoded.rv < this.store.oldestWatchable) {
        throw new HttpError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result.',
        );
      }
      [listRv, after] = [decoded.rv, decoded.after];
    }
    const all = this.store.list(t, scope.namespace, scope.selector).filter(([k]) => k > after);
    const page = limit > 0 ? all.slice(0, limit) : all;
    const more = page.length < all.length;
    const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
    if (more) {
      metadata.continue = Buffer.from(
        JSON.stringify({ rv: listRv, after: page[page.length - 1]![0] }),
      ).toString('base64url');
      metadata.remainingItemCount = all.length - page.length;
    }
    this.send(res, 200, {
      kind: `${t.kind}List`,
      apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
      metadata,
      items: page.map(([, o]) => o),
    });
  }

  private watch(t: ResourceType, scope: WatchScope, q: URLSearchParams, res: ServerResponse): void {
    this.counts.watch += 1;
    const w: ActiveWatch = {
      res,
      scope,
      bookmarks: q.get('allowWatchBookmarks') === 'true',
      kind: t.kind,
      apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
    };
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const from = q.get('resourceVersion') ?? '';
    if (from === '' || from === '0') {
      for (const [, object] of this.store.list(t, scope.namespace, scope.selector)) {
        this.write(w, { type: 'ADDED', object });
      }
    } else {
      const events = this.store.since(Number(from));
      if (events === 'expired') {
        // What the API server does: a 200 stream carrying one ERROR event, then the end.
        this.counts.expired += 1;
        this.write(w, {
          type: 'ERROR',
          object: status(410, 'Expired', `too old resource version: ${from} (${this.store.oldestWatchable})`),
        });
        res.end();
        return;
      }
      for (const e of events) {
        const seen = translate(scope, e);
        if (seen) {
          this.write(w, seen);
        }
      }
    }
    this.watches.add(w);
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      clearTimeout(timer);
      this.watches.delete(w);
    });
    this.emit('watch', scope);
  }
}
