/**
 * A line diff of two texts, computed in the browser: the common lines at both ends are kept as
 * they are, and the lines between are aligned by their longest common subsequence. The table of
 * that alignment is bounded (MAX_DIFF_CELLS): two texts that differ over more lines than that are
 * shown as every differing line removed, then every new line added, and the answer says so.
 */

export type DiffLine =
  | { kind: 'same'; text: string; old: number; new: number }
  | { kind: 'removed'; text: string; old: number }
  | { kind: 'added'; text: string; new: number };

export interface LineDiff {
  lines: DiffLine[];
  added: number;
  removed: number;
  /** True when the middle was too large to align line by line (see MAX_DIFF_CELLS). */
  coarse: boolean;
}

/** The most cells (differing old lines times differing new lines) one alignment may use. */
export const MAX_DIFF_CELLS = 2_000_000;

/** A text's lines; a final newline ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** The lines of `a` and `b` between their common first and last lines, aligned. */
function alignMiddle(a: string[], b: string[], start: number, endA: number, endB: number): DiffLine[] {
  const n = endA - start;
  const m = endB - start;
  const out: DiffLine[] = [];
  // lcs[i * (m + 1) + j]: the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[start + i] === b[start + j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[start + i] === b[start + j]) {
      out.push({ kind: 'same', text: a[start + i]!, old: start + i + 1, new: start + j + 1 });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
      out.push({ kind: 'removed', text: a[start + i]!, old: start + i + 1 });
      i++;
    } else {
      out.push({ kind: 'added', text: b[start + j]!, new: start + j + 1 });
      j++;
    }
  }
  for (; i < n; i++) {
    out.push({ kind: 'removed', text: a[start + i]!, old: start + i + 1 });
  }
  for (; j < m; j++) {
    out.push({ kind: 'added', text: b[start + j]!, new: start + j + 1 });
  }
  return out;
}

/** The line diff from `before` to `after`. */
export function lineDiff(before: string, after: string, maxCells = MAX_DIFF_CELLS): LineDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    start++;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const lines: DiffLine[] = [];
  for (let k = 0; k < start; k++) {
    lines.push({ kind: 'same', text: a[k]!, old: k + 1, new: k + 1 });
  }
  const cells = (endA - start) * (endB - start);
  const coarse = cells > maxCells;
  if (coarse) {
    for (let k = start; k < endA; k++) {
      lines.push({ kind: 'removed', text: a[k]!, old: k + 1 });
    }
    for (let k = start; k < endB; k++) {
      lines.push({ kind: 'added', text: b[k]!, new: k + 1 });
    }
  } else {
    for (const l of alignMiddle(a, b, start, endA, endB)) {
      lines.push(l);
    }
  }
  for (let k = 0; endA + k < a.length; k++) {
    lines.push({ kind: 'same', text: a[endA + k]!, old: endA + k + 1, new: endB + k + 1 });
  }
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'added') {
      added++;
    } else if (l.kind === 'removed') {
      removed++;
    }
  }
  return { lines, added, removed, coarse };
}
