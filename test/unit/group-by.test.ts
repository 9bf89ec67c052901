import { describe, expect, it } from 'vitest';
import { groupBy, pushTo } from '../../services/api/src/group-by.js';

describe('groupBy', () => {
  it('keeps every item, in its order, under its key', () => {
    const items = [
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
      { k: 'a', v: 3 },
    ];
    expect([...groupBy(items, (i) => i.k)]).toEqual([
      ['a', [items[0], items[2]]],
      ['b', [items[1]]],
    ]);
    expect([
      ...groupBy(
        items,
        (i) => i.k,
        (i) => i.v,
      ),
    ]).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
  });

  it('groups a large input as the copying version did', () => {
    const items = Array.from({ length: 50_000 }, (_, i) => ({
      count: i % 3 === 0 ? 1 : 1 + (i % 7),
      fp: `fp${i}`,
    }));
    const copying = new Map<number, string[]>();
    for (const e of items.slice(0, 2_000)) {
      copying.set(e.count, [...(copying.get(e.count) ?? []), e.fp]);
    }
    const grouped = groupBy(
      items,
      (e) => e.count,
      (e) => e.fp,
    );
    expect([
      ...groupBy(
        items.slice(0, 2_000),
        (e) => e.count,
        (e) => e.fp,
      ),
    ]).toEqual([...copying]);
    expect([...grouped.values()].reduce((n, g) => n + g.length, 0)).toBe(50_000);
    expect(grouped.get(1)?.slice(0, 3)).toEqual(['fp0', 'fp3', 'fp6']);
  });
});

describe('pushTo', () => {
  it('creates a group on first use and appends to it after', () => {
    const map = new Map<string, number[]>();
    pushTo(map, 'x', 1);
    pushTo(map, 'x', 2);
    pushTo(map, 'y', 3);
    expect(map).toEqual(
      new Map([
        ['x', [1, 2]],
        ['y', [3]],
      ]),
    );
  });
});
