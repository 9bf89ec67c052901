/**
 * RFC 9162 section 2.1 Merkle trees over stored subtree hashes: leaf `SHA-256(0x00 || d)`, node
 * `SHA-256(0x01 || left || right)`, inclusion proofs (2.1.3) and consistency proofs (2.1.4).
 *
 * The tree is named by its perfect subtrees: level 0 the leaves, level `l` index `i` the root of
 * leaves `[i * 2^l, (i + 1) * 2^l)`. Every subtree the RFC's recursion names is a run of at most
 * log2(n) perfect subtrees, so a root or a proof needs O(log n) of them.
 *
 * Only every TILE_HEIGHT-th level is stored (the leaves, then levels 4, 8, ...), as tiles of a
 * tiled log are: a subtree in between is hashed from at most 2^(TILE_HEIGHT - 1) stored ones
 * below it (`tiledReader`). Appending a leaf then stores about 1/15 of a node besides the leaf,
 * where storing every level stores one; a root or a proof reads at most 8 log2(n) hashes.
 */
import { createHash } from 'node:crypto';

import { nodeKey, type NodeRef, type StoredNode } from '../../storage/repositories/transparency-log.js';

export { nodeKey, type NodeRef, type StoredNode };

/** Reads the hashes of the perfect subtrees named; every one asked for must exist. */
export type NodeReader = (refs: NodeRef[]) => Promise<Map<string, Buffer>>;

/** Levels stored: multiples of this (the leaves are level 0). */
export const TILE_HEIGHT = 4;

/** Whether the subtrees of a level are stored. */
export const isStoredLevel = (level: number): boolean => level % TILE_HEIGHT === 0;

/**
 * A reader of any perfect subtree over one that reads stored levels only: a subtree between
 * stored levels is hashed from the stored ones under it (at most 2^(TILE_HEIGHT - 1), all read in
 * one call).
 */
export function tiledReader(readStored: NodeReader): NodeReader {
  return async (refs) => {
    const wanted = new Map<string, NodeRef>();
    for (const r of refs) {
      const base = r.level - (r.level % TILE_HEIGHT);
      const width = 2 ** (r.level - base);
      for (let j = 0; j < width; j += 1) {
        const index = r.index * width + j;
        wanted.set(nodeKey(base, index), { level: base, index });
      }
    }
    const stored = wanted.size > 0 ? await readStored([...wanted.values()]) : new Map<string, Buffer>();
    const out = new Map<string, Buffer>();
    for (const r of refs) {
      out.set(nodeKey(r.level, r.index), subtreeHash(r, stored));
    }
    return out;
  };
}

/** The hash of a perfect subtree from the stored level at or below it. */
function subtreeHash(r: NodeRef, stored: Map<string, Buffer>): Buffer {
  const base = r.level - (r.level % TILE_HEIGHT);
  const width = 2 ** (r.level - base);
  let row: Buffer[] = [];
  for (let j = 0; j < width; j += 1) {
    const h = stored.get(nodeKey(base, r.index * width + j));
    if (!h) {
      throw new Error(`Merkle tree node ${base}/${r.index * width + j} is missing`);
    }
    row.push(h);
  }
  while (row.length > 1) {
    const up: Buffer[] = [];
    for (let j = 0; j < row.length; j += 2) {
      up.push(nodeHash(row[j]!, row[j + 1]!));
    }
    row = up;
  }
  return row[0]!;
}

export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.from([0]))
    .update(data)
    .digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.from([1]))
    .update(left)
    .update(right)
    .digest();
}

/** The root of the empty tree: SHA-256 of the empty string. */
export const EMPTY_ROOT = createHash('sha256').digest();

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) {
    k *= 2;
  }
  return k;
}

/** The perfect subtrees that make up leaves [start, end), left to right. */
function decompose(start: number, end: number): NodeRef[] {
  const out: NodeRef[] = [];
  let a = start;
  while (a < end) {
    let level = 0;
    while (a % 2 ** (level + 1) === 0 && a + 2 ** (level + 1) <= end) {
      level += 1;
    }
    out.push({ level, index: a / 2 ** level });
    a += 2 ** level;
  }
  return out;
}

/** The hash of leaves [start, end) from the stored perfect subtrees. */
function rangeHash(start: number, end: number, nodes: Map<string, Buffer>): Buffer {
  const parts = decompose(start, end).map((r) => {
    const h = nodes.get(nodeKey(r.level, r.index));
    if (!h) {
      throw new Error(`Merkle tree node ${r.level}/${r.index} is missing`);
    }
    return h;
  });
  let acc = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i -= 1) {
    acc = nodeHash(parts[i]!, acc);
  }
  return acc;
}

async function resolve(ranges: Array<[number, number]>, read: NodeReader): Promise<Buffer[]> {
  const refs = new Map<string, NodeRef>();
  for (const [a, b] of ranges) {
    for (const r of decompose(a, b)) {
      refs.set(nodeKey(r.level, r.index), r);
    }
  }
  const nodes = refs.size > 0 ? await read([...refs.values()]) : new Map<string, Buffer>();
  return ranges.map(([a, b]) => rangeHash(a, b, nodes));
}

/** The root hash of the tree of the first `size` leaves. */
export async function rootHash(size: number, read: NodeReader): Promise<Buffer> {
  if (size === 0) {
    return EMPTY_ROOT;
  }
  const [root] = await resolve([[0, size]], read);
  return root!;
}

/** The audit path of leaf `index` in the tree of `size` leaves (RFC 9162 2.1.3.1), leaf to root. */
export async function inclusionProof(index: number, size: number, read: NodeReader): Promise<Buffer[]> {
  const ranges: Array<[number, number]> = [];
  const path = (m: number, a: number, b: number): void => {
    if (b - a <= 1) {
      return;
    }
    const k = split(b - a);
    if (m < a + k) {
      path(m, a, a + k);
      ranges.push([a + k, b]);
    } else {
      path(m, a + k, b);
      ranges.push([a, a + k]);
    }
  };
  path(index, 0, size);
  return resolve(ranges, read);
}

/** The consistency proof between trees of `from` and `to` leaves (RFC 9162 2.1.4.1). */
export async function consistencyProof(from: number, to: number, read: NodeReader): Promise<Buffer[]> {
  if (from === 0 || from === to) {
    return [];
  }
  const ranges: Array<[number, number]> = [];
  const sub = (m: number, a: number, b: number, whole: boolean): void => {
    const n = b - a;
    if (m === n) {
      if (!whole) {
        ranges.push([a, b]);
      }
      return;
    }
    const k = split(n);
    if (m <= k) {
      sub(m, a, a + k, whole);
      ranges.push([a + k, b]);
    } else {
      sub(m - k, a + k, b, false);
      ranges.push([a, a + k]);
    }
  };
  sub(from, 0, to, true);
  return resolve(ranges, read);
}

/**
 * Appends leaves to a tree of `size` leaves: the perfect subtrees that become complete (leaves
 * included; the caller stores those of stored levels) and the new tree's root. Reads only the
 * current frontier (at most log2(size) subtrees).
 */
export async function appendLeaves(
  size: number,
  leaves: Buffer[],
  read: NodeReader,
): Promise<{ nodes: StoredNode[]; root: Buffer }> {
  const frontier = decompose(0, size);
  const known = frontier.length > 0 ? await read(frontier) : new Map<string, Buffer>();
  const out: StoredNode[] = [];
  leaves.forEach((leaf, i) => {
    let level = 0;
    let index = size + i;
    let hash = leaf;
    out.push({ level, index, hash });
    known.set(nodeKey(level, index), hash);
    while (index % 2 === 1) {
      const left = known.get(nodeKey(level, index - 1));
      if (!left) {
        throw new Error(`Merkle tree node ${level}/${index - 1} is missing`);
      }
      hash = nodeHash(left, hash);
      level += 1;
      index = (index - 1) / 2;
      out.push({ level, index, hash });
      known.set(nodeKey(level, index), hash);
    }
  });
  const total = size + leaves.length;
  // The new frontier is the old one's subtrees and those completed here, all in `known`.
  return { nodes: out, root: total === 0 ? EMPTY_ROOT : rangeHash(0, total, known) };
}
