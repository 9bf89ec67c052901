/**
 * What use cases may keep in process per organization, valid while the organization's epoch has
 * not moved (plugins/caches.ts `EpochCache` implements it; every replica moves the epoch when it
 * hears of a change).
 */
import { sha256 } from '../../sha256.js';

export interface ViewCache {
  /** The epoch to pass to `set` for a value read from now on. */
  epoch(orgId: string): number;
  get<T>(orgId: string, key: string): T | undefined;
  set(orgId: string, key: string, value: unknown, epoch: number): void;
  /** The organization's cached views are stale (this replica changed them). */
  bump(orgId: string): void;
}

/** The cached value under `key`, else `read()`'s, cached unless undefined or read across a change. */
export async function cachedView<T>(
  cache: ViewCache,
  orgId: string,
  key: string,
  read: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const hit = cache.get<T>(orgId, key);
  if (hit !== undefined) {
    return hit;
  }
  const epoch = cache.epoch(orgId);
  const value = await read();
  if (value !== undefined) {
    cache.set(orgId, key, value, epoch);
  }
  return value;
}

/** A short key for a JSON value (a hash of its JSON text). */
export function viewKey(prefix: string, value: unknown): string {
  return `${prefix}\u0000${sha256(JSON.stringify(value), 'base64url')}`;
}
