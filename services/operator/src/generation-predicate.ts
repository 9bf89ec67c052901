/**
 * Which informer events queue a reconcile, as flux's generation predicate decides: a new object,
 * a spec change (generation), deletion, finalizer, label or annotation changes. A status-only
 * change (the operator's own status write among them) queues nothing.
 */
import type { RawResource } from './reconcile.js';

export class GenerationPredicate {
  /** What was last seen of each key, apart from its status. */
  private readonly seen = new Map<string, string>();

  /** True when the event about `obj` (queued under `key`) calls for a reconcile. */
  admits(key: string, obj: RawResource, event: 'add' | 'update' | 'delete'): boolean {
    if (event === 'delete') {
      this.seen.delete(key);
      return true;
    }
    const m = obj.metadata as RawResource['metadata'] & { labels?: unknown; annotations?: unknown };
    const fingerprint = JSON.stringify([
      m.generation,
      m.deletionTimestamp ?? null,
      m.finalizers ?? [],
      m.labels ?? {},
      m.annotations ?? {},
    ]);
    if (event === 'update' && this.seen.get(key) === fingerprint) {
      return false;
    }
    this.seen.set(key, fingerprint);
    return true;
  }
}
