/** The console's line diff of two policy versions: exact where it aligns, honest where it cannot. */
import { describe, expect, it } from 'vitest';
import { lineDiff, splitLines } from '../../services/console/src/features/policies/line-diff.js';

/** The diff as "+ line", "- line", "  line" strings, to read at a glance. */
const render = (before: string, after: string, maxCells?: number) =>
  lineDiff(before, after, maxCells).lines.map(
    (l) => `${l.kind === 'added' ? '+' : l.kind === 'removed' ? '-' : ' '} ${l.text}`,
  );

describe('line diff', () => {
  it('splits on any line break and drops the empty line after a final one', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\r\nb\rc')).toEqual(['a', 'b', 'c']);
    expect(splitLines('a\n\n')).toEqual(['a', '']);
  });

  it('shows identical texts as unchanged, with both line numbers', () => {
    const d = lineDiff('a\nb\n', 'a\nb\n');
    expect(d).toMatchObject({ added: 0, removed: 0, coarse: false });
    expect(d.lines).toEqual([
      { kind: 'same', text: 'a', old: 1, new: 1 },
      { kind: 'same', text: 'b', old: 2, new: 2 },
    ]);
  });

  it('aligns the lines between common ends by their longest common subsequence', () => {
    expect(render('a\nb\nc\nd\ne\n', 'a\nc\nx\nd\ne\ny\n')).toEqual([
      '  a',
      '- b',
      '  c',
      '+ x',
      '  d',
      '  e',
      '+ y',
    ]);
    const d = lineDiff('k: 1\nv: 2\n', 'k: 1\nv: 3\nw: 4\n');
    expect(d.lines.filter((l) => l.kind !== 'same')).toEqual([
      { kind: 'removed', text: 'v: 2', old: 2 },
      { kind: 'added', text: 'v: 3', new: 2 },
      { kind: 'added', text: 'w: 4', new: 3 },
    ]);
    expect([d.added, d.removed]).toEqual([2, 1]);
  });

  it('diffs from and to an empty text', () => {
    expect(render('', 'a\nb')).toEqual(['+ a', '+ b']);
    expect(render('a\nb', '')).toEqual(['- a', '- b']);
  });

  it('past the bound, shows every differing line removed then added, and says it did', () => {
    const before = 'head\n1\n2\n3\ntail\n';
    const after = 'head\n2\n3\n4\ntail\n';
    expect(render(before, after)).toEqual(['  head', '- 1', '  2', '  3', '+ 4', '  tail']);
    const coarse = lineDiff(before, after, 8);
    expect(coarse.coarse).toBe(true);
    expect(render(before, after, 8)).toEqual(['  head', '- 1', '- 2', '- 3', '+ 2', '+ 3', '+ 4', '  tail']);
    expect([coarse.added, coarse.removed]).toEqual([3, 3]);
  });

  it('keeps the work bounded on a large policy: common ends cost no alignment', () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i}`);
    const changed = [...lines];
    changed[100_000] = 'changed';
    const d = lineDiff(lines.join('\n'), changed.join('\n'));
    expect([d.added, d.removed, d.coarse]).toEqual([1, 1, false]);
    expect(d.lines.length).toBe(200_001);
  });
});
