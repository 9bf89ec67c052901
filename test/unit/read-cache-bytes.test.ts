/**
 * The evidence read cache is bounded in bytes as well as in entries: a GET artifact answer grows
 * with the artifact's attestations, so a count alone bounds nothing a tenant cannot inflate.
 */
import { describe, expect, it } from 'vitest';
import { EpochCache, viewBytes } from '../../services/api/src/plugins/caches.js';
import { LruMap } from '../../services/api/src/lru-map.js';
import { loadConfig } from '../../services/api/src/config.js';

const heard = () => true;
const answer = (kb: number) => Buffer.alloc(kb * 1024, 'x');

describe('read cache bytes', () => {
  it('forgets the least recently used answers once their bytes pass the budget', () => {
    const cache = new EpochCache(heard, 20_000, 5_000, 100 * 1024);
    const epoch = cache.epoch('o');
    for (const k of ['a', 'b', 'c']) {
      cache.set('o', k, answer(40), epoch);
    }
    // 120 KB over a 100 KB budget: the oldest went.
    expect(cache.get('o', 'a')).toBeUndefined();
    expect(cache.get<Buffer>('o', 'b')?.length).toBe(40 * 1024);
    expect(cache.get<Buffer>('o', 'c')?.length).toBe(40 * 1024);
    // b was read last but one; a new answer pushes out c, the least recently used now.
    cache.get('o', 'b');
    cache.set('o', 'd', answer(40), epoch);
    expect(cache.get('o', 'c')).toBeUndefined();
    expect(cache.get('o', 'b')).toBeDefined();
  });

  it('does not keep an answer larger than the whole budget, and keeps the others', () => {
    const cache = new EpochCache(heard, 20_000, 5_000, 100 * 1024);
    const epoch = cache.epoch('o');
    cache.set('o', 'small', answer(10), epoch);
    cache.set('o', 'huge', answer(200), epoch);
    expect(cache.get('o', 'huge')).toBeUndefined();
    expect(cache.get('o', 'small')).toBeDefined();
  });

  it('gives back the bytes of what it replaces and deletes', () => {
    const lru = new LruMap<string>(10, (v) => v.length, 10);
    lru.set('a', '12345');
    lru.set('a', '123456789');
    lru.set('b', '1');
    expect([lru.get('a'), lru.get('b')]).toEqual(['123456789', '1']);
    lru.delete('a');
    lru.set('c', '123456789');
    expect([lru.get('b'), lru.get('c'), lru.size]).toEqual(['1', '123456789', 2]);
    lru.clear();
    lru.set('d', '1234567890');
    expect(lru.get('d')).toBe('1234567890');
  });

  it('counts text and bytes by length, other views as a kilobyte', () => {
    expect(viewBytes(answer(3))).toBe(3072);
    expect(viewBytes('abc')).toBe(3);
    expect(viewBytes({ id: 'repo' })).toBe(1024);
  });

  it('is set by VERITY_READ_CACHE_BYTES, 64 MiB by default', () => {
    expect(loadConfig({}).readCacheBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ VERITY_READ_CACHE_BYTES: '1048576' }).readCacheBytes).toBe(1048576);
    expect(() => loadConfig({ VERITY_READ_CACHE_BYTES: '-1' })).toThrow(/VERITY_READ_CACHE_BYTES/);
  });
});
