/** Stored evaluations compare by content (domain/trail-evaluation.ts `sameEvaluation`). */
import { describe, expect, it } from 'vitest';
import { sameEvaluation } from '../../services/api/src/domain/trail-evaluation.js';

describe('sameEvaluation', () => {
  it.each([
    { a: { x: 1, y: [1, { z: 2 }] }, b: { y: [1, { z: 2 }], x: 1 }, same: true, why: 'key order' },
    { a: { x: 1, evaluated_at: 5 }, b: { x: 1, evaluated_at: 9 }, same: true, why: 'evaluated_at' },
    { a: { s: { evaluated_at: 1, v: true } }, b: { s: { v: true } }, same: true, why: 'nested evaluated_at' },
    { a: { x: 1, u: undefined }, b: { x: 1 }, same: true, why: 'undefined is absent' },
    { a: { x: 1 }, b: { x: 2 }, same: false, why: 'a value' },
    { a: { x: 1 }, b: { x: 1, y: null }, same: false, why: 'an added null' },
    { a: { x: [1, 2] }, b: { x: [2, 1] }, same: false, why: 'array order' },
    { a: { x: [1] }, b: { x: { 0: 1 } }, same: false, why: 'array vs object' },
    { a: { x: null }, b: { x: {} }, same: false, why: 'null vs object' },
    { a: 'COMPLIANT', b: 'COMPLIANT', same: true, why: 'equal scalars' },
    { a: { x: 1, y: 2 }, b: { x: 1, z: 2 }, same: false, why: 'as many keys, other names' },
    { a: { x: 1 }, b: { x: 1, y: 2 }, same: false, why: 'a key more' },
    { a: { x: 1, y: undefined }, b: { x: 1, z: 2 }, same: false, why: 'undefined against a value' },
    { a: { s: { x: 1 } }, b: { s: { x: 1, evaluated_at: 3 } }, same: true, why: 'evaluated_at only on one' },
  ])('$why: $same', ({ a, b, same }) => {
    expect(sameEvaluation(a, b)).toBe(same);
    expect(sameEvaluation(b, a)).toBe(same);
  });
});
