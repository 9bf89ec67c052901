/**
 * A large report parsed in slices (json-slices.ts) is what JSON.parse gives, for the shapes
 * reporters send and for text built to trip a scanner: brackets, braces, commas, quotes and
 * escapes inside strings, nested arrays, the key as a value or nested, the key twice, and text
 * that is not JSON (JSON.parse's error).
 */
import { describe, expect, it } from 'vitest';
import { parseJsonSteps } from '../../services/api/src/json-slices.js';
import { drain } from '../../services/api/src/slices.js';

const parse = (text: string) => drain(parseJsonSteps(text, 'artifacts'));

/** How many times the parse yields (turns of the event loop it would give). */
function yields(text: string): number {
  const steps = parseJsonSteps(text, 'artifacts');
  let n = 0;
  while (!steps.next().done) {
    n += 1;
  }
  return n;
}

const pods = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    podName: `svc-${i}`,
    namespace: `team-${i % 20}`,
    digests: { [`r.example/svc-${i}:v1`]: i.toString(16).padStart(64, '0') },
    creationTimestamp: 1_700_000_000 + i,
    owners: [{ kind: 'ReplicaSet', name: `svc-${i}-abc`, controller: true }],
  }));

describe('parseJsonSteps', () => {
  it('gives what JSON.parse gives for a report of 50,000 pods, in many slices', () => {
    const text = JSON.stringify({ type: 'K8S', artifacts: pods(50_000), id: 'x' });
    expect(parse(text)).toEqual(JSON.parse(text));
    expect(Object.keys(parse(text) as object)).toEqual(['type', 'artifacts', 'id']);
    // The scan's chunks of 512 KiB, then 25 slices of 2,000 pods; JSON.parse of the whole text
    // after the scan would give the chunks alone.
    const chunks = Math.floor(text.length / (512 * 1024));
    expect(yields(text)).toBeGreaterThanOrEqual(chunks - 1 + 25);
  });

  it('is not fooled by brackets, braces, commas, quotes and escapes in strings', () => {
    const tricky = [
      { podName: 'a,b', namespace: '[x]{y}', note: 'say "hi", ok' },
      { podName: 'back\\slash\\', namespace: 'q\\"uote', nested: [[1, [2, { a: '],' }]], {}] },
      { podName: '"artifacts":[', namespace: '\u2028\ud83d\ude00', n: -1.5e3, t: true, f: null },
      'a plain string element',
      42,
      [],
    ];
    const text = JSON.stringify({ artifacts: tricky, after: { artifacts: 'nested, not ours' } }, null, 2);
    expect(parse(text)).toEqual(JSON.parse(text));
    // Parsed as one slice of elements (the sliced way), not handed to JSON.parse whole.
    expect(yields(text)).toBe(1);
  });

  it("gives JSON.parse's answer when the key is a value, missing, twice or escaped", () => {
    for (const text of [
      '{"type": "artifacts", "artifacts": [1, 2]}',
      '{"other": [1, 2]}',
      '{"artifacts": [1], "artifacts": [2, 3]}',
      '{"\\u0061rtifacts": [4]}',
      '{"artifacts": [1, 2], "\\u0061rtifacts": [4]}',
      '{"\\u0061rtifacts": [4], "artifacts": [1, 2]}',
      '{"a\\"b": 1, "artifacts": [1, 2]}',
      '{"artifacts": []}',
      '{"artifacts": [ ] }',
      '{"artifacts": "not an array"}',
      '[{"artifacts": [1]}]',
      ' {"artifacts":[{"a":[]}]} ',
    ]) {
      expect(parse(text), text).toEqual(JSON.parse(text));
    }
  });

  it("throws JSON.parse's SyntaxError for text that is not JSON", () => {
    for (const text of [
      '{"artifacts": [1, 2,]}',
      '{"artifacts": [1, 2]',
      '{"artifacts": [1, 2]} trailing',
      '{"artifacts": [{"a": "unterminated}]}',
      '{"artifacts": [1 2]}',
    ]) {
      expect(() => parse(text), text).toThrow(SyntaxError);
    }
  });
});
