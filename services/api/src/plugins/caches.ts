/**
 * In-process caches that every replica keeps correct: API keys by hash (one database round trip
 * less on every request), evidence read views per organization, valid only for the
 * organization's current epoch, and per organization what the domain-event subscriber needs to
 * know before it writes anything (its name and actions) and what attestations look up (repos,
 * custom types), valid for the epoch of the organization's configuration. Credential, action,
 * repo and custom-type changes arrive as notifications (migrations 0300, 0301 and 0371),
 * evidence changes through the change log (migration 0302, storage/change-feed.ts),
 * within one poll. The replica that wrote bumps at once: every write request bumps its org's
 * evidence epoch before it answers. While the listener is not hearing its heartbeat (PostgreSQL
 * connection lost, or silently dropped) or the change log cannot be read, nothing is used longer
 * than UNTRUSTED_TTL_MS after it was read: a change made elsewhere reaches this replica within
 * that bound.
 */
import fp from 'fastify-plugin';
import { startChangeFeed, type ChangeFeed } from '../storage/change-feed.js';
import type { ChangeListener } from '../storage/change-listener.js';
import type { DatabaseHandle } from '../storage/create-db.js';
import type { ApiKeyWithOwner } from '../storage/repositories/api-keys.js';
import { LruMap } from '../lru-map.js';

/** How long a cached value is used while changes cannot be heard. */
export const UNTRUSTED_TTL_MS = 5_000;

/** API keys by hash, for at most `ttlMs` even if no change is heard. */
export class KeyCache {
  private readonly entries = new LruMap<{ row: ApiKeyWithOwner; at: number }>(10_000);
  private clears = 0;
  constructor(
    private readonly usable: () => boolean,
    private readonly ttlMs = 300_000,
    private readonly untrustedTtlMs = UNTRUSTED_TTL_MS,
  ) {}
  get(hash: string): ApiKeyWithOwner | undefined {
    const e = this.entries.get(hash);
    if (!e || Date.now() - e.at > (this.usable() ? this.ttlMs : this.untrustedTtlMs)) {
      return undefined;
    }
    return e.row;
  }
  /**
   * To pass to `set` for a row read from now on: a row read before a change was heard (the
   * change committed while it was read) is then not cached.
   */
  generation(): number {
    return this.clears;
  }
  set(hash: string, row: ApiKeyWithOwner, generation: number): void {
    if (generation === this.clears) {
      this.entries.set(hash, { row, at: Date.now() });
    }
  }
  /** Forgets every key: credentials changed somewhere. */
  clear(): void {
    this.clears += 1;
    this.entries.clear();
  }
}

/**
 * What a cached view costs in memory, as the read cache counts it: its length for an answer kept
 * as text or bytes (a GET artifact answer grows with the artifact's attestations), else a
 * kilobyte (the small objects views of repos and custom types are). Text counts a byte a
 * character, as V8 stores the ASCII JSON answers mostly are; text with other characters takes up
 * to twice that.
 */
export function viewBytes(value: unknown): number {
  return Buffer.isBuffer(value) || typeof value === 'string' ? value.length : 1024;
}

/** Read views per organization, valid while the organization's epoch has not moved. */
export class EpochCache {
  private readonly epochs = new Map<string, number>();
  private readonly entries: LruMap<{ epoch: number; value: unknown; at: number }>;
  private generation = 0;
  constructor(
    private readonly usable: () => boolean,
    private readonly maxEntries = 20_000,
    private readonly untrustedTtlMs = UNTRUSTED_TTL_MS,
    maxBytes = Infinity,
  ) {
    this.entries = new LruMap(maxEntries, (e) => viewBytes(e.value), maxBytes);
  }
  /** The epoch to pass to `set` for a view read from now on. */
  epoch(orgId: string): number {
    return this.generation * 1e9 + (this.epochs.get(orgId) ?? 0);
  }
  get<T>(orgId: string, key: string): T | undefined {
    const e = this.entries.get(`${orgId}\u0000${key}`);
    if (!e || e.epoch !== this.epoch(orgId)) {
      return undefined;
    }
    if (!this.usable() && Date.now() - e.at > this.untrustedTtlMs) {
      return undefined;
    }
    return e.value as T;
  }
  set(orgId: string, key: string, value: unknown, epoch: number): void {
    if (this.maxEntries > 0 && epoch === this.epoch(orgId)) {
      this.entries.set(`${orgId}\u0000${key}`, { epoch, value, at: Date.now() });
    }
  }
  /** The organization's evidence changed: its cached views are stale. */
  bump(orgId: string): void {
    this.epochs.set(orgId, (this.epochs.get(orgId) ?? 0) + 1);
  }
  /** Everything may be stale. */
  reset(): void {
    this.generation += 1;
    this.entries.clear();
    this.epochs.clear();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    caches: { keys: KeyCache; evidence: EpochCache; config: EpochCache };
  }
}

export default fp<{
  handle: DatabaseHandle;
  changePollMs?: number;
  readCacheEntries?: number;
  readCacheBytes?: number;
}>(
  async (app, opts) => {
    const state: { listener?: ChangeListener; feed?: ChangeFeed } = {};
    const usable = () => state.listener?.listening === true && state.feed?.healthy === true;
    const keys = new KeyCache(usable);
    const evidence = new EpochCache(usable, opts.readCacheEntries, UNTRUSTED_TTL_MS, opts.readCacheBytes);
    const config = new EpochCache(usable);
    const listener = await opts.handle.listen({
      onChange(channel, payload) {
        if (channel === 'verity_auth') {
          // Organizations changed too (their names are part of the config views).
          keys.clear();
          config.reset();
        } else if (channel === 'verity_config') {
          config.bump(payload);
        }
      },
      onReset() {
        keys.clear();
        evidence.reset();
        config.reset();
      },
      onError(err) {
        app.log.warn({ err }, 'change listener connection failed; caches are bounded until it is back');
      },
    });
    state.listener = listener;
    state.feed = startChangeFeed(opts.handle.db, {
      ...(opts.changePollMs ? { intervalMs: opts.changePollMs } : {}),
      onChange: (orgId) => evidence.bump(orgId),
      onReset: () => evidence.reset(),
      onError: (err) =>
        app.log.warn({ err }, 'evidence change log unreadable; evidence views are not cached'),
    });
    app.decorate('caches', { keys, evidence, config });
    // This replica's own writes: stale before the answer leaves, whatever the next poll brings.
    app.addHook('onSend', async (request) => {
      if (request.method === 'GET' || request.method === 'HEAD') {
        return;
      }
      if (request.org) {
        evidence.bump(request.org.id);
      }
    });
    app.addHook('onClose', async () => {
      await state.feed?.close();
      await listener.close();
    });
  },
  { name: 'caches', dependencies: ['db'] },
);
