/**
 * The log's tree kept as tiles (only every TILE_HEIGHT-th level stored) answers the roots and
 * proofs of RFC 9162, checked against the RFC's own definition and the independent client.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendLeaves,
  consistencyProof,
  inclusionProof,
  isStoredLevel,
  nodeKey,
  rootHash,
  tiledReader,
  type NodeReader,
} from '../../services/api/src/usecases/log/merkle.js';
import { rfcLeafHash, verifyConsistency, verifyInclusion } from '../helpers/tlog-client.js';

const sha = (...p: Uint8Array[]) => p.reduce((h, x) => h.update(x), createHash('sha256')).digest();

/** RFC 9162 2.1.1 MTH, straight from its definition. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) {
    return sha();
  }
  if (leaves.length === 1) {
    return leaves[0]!;
  }
  let k = 1;
  while (k * 2 < leaves.length) {
    k *= 2;
  }
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** A log held as the sequencer stores it: leaves and the stored levels only. */
function storedLog() {
  const stored = new Map<string, Buffer>();
  const read: NodeReader = tiledReader(async (refs) => {
    const out = new Map<string, Buffer>();
    for (const r of refs) {
      const h = stored.get(nodeKey(r.level, r.index));
      if (h) {
        out.set(nodeKey(r.level, r.index), h);
      }
    }
    return out;
  });
  return { stored, read };
}

const leafOf = (i: number) => rfcLeafHash(Buffer.from(`{"i":${i}}`));

describe('the log tree stored as tiles', () => {
  it('gives the RFC root, inclusion and consistency proofs at every size up to 70, appended in uneven batches', async () => {
    const { stored, read } = storedLog();
    const leaves: Buffer[] = [];
    const roots: Buffer[] = [sha()];
    const batchSizes = [1, 2, 3, 5, 1, 7, 16, 1, 9, 25];
    let size = 0;
    for (const n of batchSizes) {
      const batch = Array.from({ length: n }, (_, j) => leafOf(size + j));
      const { nodes, root } = await appendLeaves(size, batch, read);
      for (const node of nodes.filter((x) => isStoredLevel(x.level))) {
        stored.set(nodeKey(node.level, node.index), node.hash);
      }
      leaves.push(...batch);
      size += n;
      expect(root.equals(mth(leaves))).toBe(true);
      expect((await rootHash(size, read)).equals(mth(leaves))).toBe(true);
    }
    for (let n = 1; n <= size; n += 1) {
      roots[n] = mth(leaves.slice(0, n));
    }
    for (let n = 1; n <= size; n += 1) {
      for (let i = 0; i < n; i += 1) {
        const path = await inclusionProof(i, n, read);
        expect(verifyInclusion(i, n, leaves[i]!, path, roots[n]!)).toBe(true);
      }
      for (let m = 1; m <= n; m += 1) {
        const proof = await consistencyProof(m, n, read);
        expect(verifyConsistency(m, n, roots[m]!, roots[n]!, proof)).toBe(true);
      }
    }
    // Only the leaves and levels 4 (70 / 16 = 4 subtrees) are stored: not every level.
    const levels = [...stored.keys()].map((k) => Number(k.split(':')[0]));
    expect(levels.filter((l) => l === 0)).toHaveLength(size);
    expect(levels.filter((l) => l > 0).sort()).toEqual([4, 4, 4, 4]);
  });

  it('refuses to answer from a tree missing a stored subtree', async () => {
    const { stored, read } = storedLog();
    const { nodes } = await appendLeaves(
      0,
      Array.from({ length: 20 }, (_, i) => leafOf(i)),
      read,
    );
    for (const node of nodes.filter((x) => isStoredLevel(x.level))) {
      stored.set(nodeKey(node.level, node.index), node.hash);
    }
    stored.delete(nodeKey(4, 0));
    await expect(rootHash(20, read)).rejects.toThrow('Merkle tree node 4/0 is missing');
  });
});
