/** Server-issued ids: the interface's shape, unique, and in the order they were made. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../services/api/src/ids.js';

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{8}$/;

describe('newId', () => {
  it('has the 8-4-4-4-8 lowercase hex shape of 32 characters', () => {
    for (const id of [newId(), newId(0), newId(2 ** 48 - 1)]) {
      expect(id).toMatch(SHAPE);
    }
  });

  it('sorts as the time it was made, so new rows go to the end of an id index', () => {
    const t = Date.parse('2026-11-24T17:00:00Z');
    const ids = Array.from({ length: 1000 }, (_, i) => newId(t + i));
    expect([...ids].sort()).toEqual(ids);
    expect(newId(t + 1) > newId(t)).toBe(true);
    // Years apart too (the time is written in full, 12 hex digits).
    expect(newId(Date.parse('2031-01-01T00:00:00Z')) > newId(t)).toBe(true);
  });

  it('is unique among ids made in the same millisecond', () => {
    const t = Date.now();
    const ids = new Set(Array.from({ length: 100_000 }, () => newId(t)));
    expect(ids.size).toBe(100_000);
    // 64 random bits: the part after the time differs.
    expect(new Set([...ids].map((id) => id.slice(14))).size).toBe(100_000);
  });
});
