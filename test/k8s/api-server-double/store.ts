/**
 * The double's object store: objects by type and namespace/name, one resourceVersion counter for
 * all of them, and the event history watches replay from.
 */
import { EventEmitter } from 'node:events';
import type { LabelRequirement } from '../../../services/reporter/src/label-selector.js';
import { typeKey, type ResourceType } from './resources.js';
import { inScope, type WatchScope } from './watch.js';

export type K8sObject = Record<string, any> & { metadata: Record<string, any> };
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoreEvent {
  rv: number;
  type: EventType;
  typeKey: string;
  object: K8sObject;
  /** The object before a MODIFIED event, to translate it for label-selected watches. */
  previous?: K8sObject;
}

export const objectKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

/** A copy with object keys sorted, so two objects compare equal whatever their key order. */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    return v.map(canonical);
  }
  if (typeof v !== 'object' || v === null) {
    return v;
  }
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

/** apimachinery's Status body. */
export function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The generic store: objects by type and namespace/name, one resourceVersion counter, an event history. */
export class ObjectStore extends EventEmitter<{ event: [StoreEvent] }> {
  private revision = 1000;
  private readonly objects = new Map<string, Map<string, K8sObject>>();
  private history: StoreEvent[] = [];
  /** Events at or below this revision are gone: a watch from there gets 410 Gone. */
  private compactedAt = 0;

  constructor(private readonly historyLimit = 100_000) {
    super();
    this.setMaxListeners(0);
  }

  get resourceVersion(): number {
    return this.revision;
  }

  get oldestWatchable(): number {
    return this.compactedAt;
  }

  private bucket(t: ResourceType) {
    let b = this.objects.get(typeKey(t));
    if (!b) {
      this.objects.set(typeKey(t), (b = new Map()));
    }
    return b;
  }

  private record(t: ResourceType, type: EventType, object: K8sObject, previous?: K8sObject) {
    const e: StoreEvent = { rv: this.revision, type, typeKey: typeKey(t), object, previous };
    this.history.push(e);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedAt = dropped[dropped.length - 1]!.rv;
    }
    this.emit('event', e);
  }

  get(t: ResourceType, namespace: string | undefined, name: string): K8sObject | undefined {
    return this.bucket(t).get(objectKey(namespace, name));
  }

  /** Objects of a type, sorted by namespace/name, in a namespace or all, matching a selector. */
  list(t: ResourceType, namespace?: string, selector: LabelRequirement[] = []): Array<[string, K8sObject]> {
    const scope: WatchScope = { typeKey: typeKey(t), namespace, selector };
    return [...this.bucket(t).entries()]
      .filter(([, o]) => inScope(scope, o))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Creates an object; 409 when it exists. */
  create(t: ResourceType, input: K8sObject): K8sObject {
    const obj = structuredClone(input);
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    if (this.bucket(t).has(key)) {
      throw new HttpError(409, 'AlreadyExists', `${t.resource} "${obj.metadata.name}" already exists`);
    }
    if (t.statusSubresource) {
      // The API server drops status on create when the status subresource is enabled.
      delete obj.status;
      delete obj.metadata.deletionTimestamp;
      obj.metadata.generation = 1;
    }
    this.revision += 1;
    obj.metadata.resourceVersion = String(this.revision);
    obj.metadata.uid ??= `uid-${this.revision}`;
    obj.metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.bucket(t).set(key, obj);
    this.record(t, 'ADDED', obj);
    return obj;
  }

  /**
   * Replaces an object; 404 when missing, 409 when a given resourceVersion is not the current one.
   * For custom resources `part` says what the write may change: the main resource (status kept,
   * generation bumped when spec changed, finalizers honoured) or the status subresource (only
   * status taken).
   */
  replace(t: ResourceType, input: K8sObject, part: 'main' | 'status' = 'main'): K8sObject {
    let obj = structuredClone(input);
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const previous = this.bucket(t).get(key);
    if (!previous) {
      throw new HttpError(404, 'NotFound', `${t.resource} "${obj.metadata.name}" not found`);
    }
    const given = obj.metadata.resourceVersion as string | undefined;
    if (given && given !== previous.metadata.resourceVersion) {
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${t.resource} "${obj.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    if (t.statusSubresource) {
      if (part === 'status') {
        obj = { ...structuredClone(previous), status: obj.status };
        if (obj.status === undefined) {
          delete obj.status;
        }
      } else {
        const { status: _ignored, ...rest } = obj;
        obj = previous.status === undefined ? rest : { ...rest, status: structuredClone(previous.status) };
        const deleting = previous.metadata.deletionTimestamp as string | undefined;
        const before = new Set<string>(previous.metadata.finalizers ?? []);
        if (deleting && ((obj.metadata.finalizers ?? []) as string[]).some((f) => !before.has(f))) {
          throw new HttpError(
            422,
            'Invalid',
            `${t.kind} "${obj.metadata.name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted`,
          );
        }
        obj.metadata = {
          ...obj.metadata,
          generation:
            (previous.metadata.generation as number) +
            (JSON.stringify(obj.spec) === JSON.stringify(previous.spec) ? 0 : 1),
          ...(deleting ? { deletionTimestamp: deleting, deletionGracePeriodSeconds: 0 } : {}),
        };
        if (obj.metadata.finalizers?.length === 0) {
          delete obj.metadata.finalizers;
        }
      }
      obj.metadata = {
        ...obj.metadata,
        uid: previous.metadata.uid,
        creationTimestamp: previous.metadata.creationTimestamp,
        resourceVersion: previous.metadata.resourceVersion,
      };
      // A write that changes nothing is a no-op: no new resourceVersion, no watch event.
      if (JSON.stringify(canonical(obj)) === JSON.stringify(canonical(previous))) {
        return previous;
      }
      if (obj.metadata.deletionTimestamp && !obj.metadata.finalizers?.length) {
        this.bucket(t).set(key, obj);
        return this.delete(t, obj.metadata.namespace, obj.metadata.name);
      }
    }
    this.revision += 1;
    obj.metadata = {
      ...obj.metadata,
      uid: previous.metadata.uid,
      creationTimestamp: previous.metadata.creationTimestamp,
      resourceVersion: String(this.revision),
    };
    this.bucket(t).set(key, obj);
    this.record(t, 'MODIFIED', obj, previous);
    return obj;
  }

  /** Creates or replaces, ignoring resourceVersions: what a test means by "the cluster now has this". */
  apply(t: ResourceType, input: K8sObject): K8sObject {
    const existing = this.get(t, input.metadata.namespace, input.metadata.name);
    if (!existing) {
      return this.create(t, input);
    }
    // As kubectl apply, metadata it does not name (finalizers of a controller) stays.
    const metadata = t.statusSubresource ? { ...existing.metadata, ...input.metadata } : input.metadata;
    return this.replace(t, { ...input, metadata: { ...metadata, resourceVersion: undefined } });
  }

  /**
   * Deletes an object; 404 when missing. An object with finalizers is only marked deleting
   * (deletionTimestamp set, a MODIFIED event); it goes when an update removes its last finalizer.
   */
  delete(t: ResourceType, namespace: string | undefined, name: string): K8sObject {
    const key = objectKey(namespace, name);
    const previous = this.bucket(t).get(key);
    if (!previous) {
      throw new HttpError(404, 'NotFound', `${t.resource} "${name}" not found`);
    }
    if (previous.metadata.finalizers?.length) {
      if (previous.metadata.deletionTimestamp) {
        return previous;
      }
      this.revision += 1;
      const marked = structuredClone(previous);
      marked.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      marked.metadata.deletionGracePeriodSeconds = 0;
      marked.metadata.resourceVersion = String(this.revision);
      this.bucket(t).set(key, marked);
      this.record(t, 'MODIFIED', marked, previous);
      return marked;
    }
    this.bucket(t).delete(key);
    this.revision += 1;
    const obj = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(this.revision) } };
    this.record(t, 'DELETED', obj);
    return obj;
  }

  /** Events after `rv` in a scope, or 'expired' when the history no longer reaches back that far. */
  since(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compactedAt) {
      return 'expired';
    }
    return this.history.filter((e) => e.rv > rv);
  }

  /** Forgets the event history: every watch or continue token from before now gets 410 Gone. */
  compact(): void {
    this.history = [];
    this.compactedAt = this.revision;
  }
}
