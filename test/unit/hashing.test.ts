import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, hashesEqual } from '../../services/api/src/usecases/access/api-keys.js';
import { sha256 } from '../../services/api/src/sha256.js';

describe('sha256', () => {
  it('hashes text as UTF-8, and bytes, as a Hash object does', () => {
    const inputs = [
      '',
      'abc',
      '\u00e9t\u00e9 \u2713',
      'x'.repeat(100_000),
      randomBytes(1000),
      Buffer.alloc(0),
    ];
    for (const data of inputs) {
      for (const encoding of ['hex', 'base64url'] as const) {
        expect(sha256(data, encoding)).toBe(createHash('sha256').update(data).digest(encoding));
      }
    }
    expect(sha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('API key hashes', () => {
  it('stores a key as the hex sha256 of its UTF-8 text', () => {
    // The stored hashes of existing installations must keep matching the keys their clients send.
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const key of [generateKey(), 'vty_\u00e9t\u00e9', randomBytes(40).toString('base64')]) {
      expect(hashKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
    }
  });

  it('compares hashes: equal only when every character is', () => {
    const h = hashKey(generateKey());
    expect(hashesEqual(h, `${h}`)).toBe(true);
    for (const i of [0, 31, 63]) {
      const other = h.slice(0, i) + (h[i] === '0' ? '1' : '0') + h.slice(i + 1);
      expect(hashesEqual(h, other)).toBe(false);
      expect(hashesEqual(other, h)).toBe(false);
    }
    expect(hashesEqual(h, h.slice(0, 63))).toBe(false);
    expect(hashesEqual('', h)).toBe(false);
    expect(hashesEqual('', '')).toBe(true);
  });
});
