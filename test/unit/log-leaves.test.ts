/**
 * The worker thread's leaves (workers/log-leaves.mjs) are the domain's: for rows of every kind of
 * record, inserted and removed, with awkward values, the worker gives the record id and leaf that
 * `recordOf` and the RFC 9162 leaf of its RFC 8785 bytes give. A round the worker cannot answer
 * is hashed on the main thread instead.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LOG_KINDS, recordOf } from '../../services/api/src/domain/log-kinds.js';
import { leafHash } from '../../services/api/src/usecases/log/merkle.js';
import { leavesHere, recordBytes } from '../../services/api/src/usecases/log/log.js';
import { LogHasher } from '../../services/api/src/workers/log-hasher.js';
import { logLeaves } from '../../services/api/src/workers/log-leaves.mjs';
import { workerLeaves } from '../../services/api/src/plugins/transparency-log.js';

const keys = Object.fromEntries(LOG_KINDS.map((k) => [k.kind, [...k.key]]));
const awkward = 'quote " backslash \\ nul \u0000 snowman \u2603 emoji \u{1F600} line sep \u2028';

/** A row of each kind: every column of the kind, with values of each JSON type. */
function rowsOf(): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  LOG_KINDS.forEach((k, n) => {
    const fields: Record<string, unknown> = {};
    k.columns.forEach((c, i) => {
      const name = c.as ?? c.column;
      const values = [awkward, 1.5, 7, true, null, { b: [1, 'x', { a: null }], a: 1e21 }, `id-${n}-${i}`];
      fields[name] = k.key.includes(c.column) ? (i % 2 === 0 ? `k-${n}` : 42) : values[i % values.length];
    });
    for (const op of ['insert', 'update', 'delete']) {
      out.push([k.kind, op, JSON.stringify(fields)]);
    }
  });
  return out;
}

const hasher = new LogHasher(keys);
const broken = new LogHasher({});
afterAll(async () => {
  await hasher.close();
  await broken.close();
});

describe("the log's leaves off the main thread", () => {
  const rows = rowsOf();
  const expected = rows.map(([kind, op, text]) => {
    const record = recordOf(
      LOG_KINDS.find((k) => k.kind === kind)!,
      JSON.parse(text),
      op === 'delete',
    );
    return { id: String(record.id), leaf: leafHash(recordBytes(record)).toString('hex') };
  });

  it('gives the record id and leaf of the domain for every kind and operation', () => {
    const { ids, leaves } = logLeaves(keys, rows);
    const got = ids.map((id, i) => ({
      id,
      leaf: Buffer.from(leaves.subarray(i * 32, i * 32 + 32)).toString('hex'),
    }));
    expect(got).toEqual(expected);
    // The composite keys are joined as the domain joins them.
    expect(got.find((g) => g.id.includes(':'))).toBeDefined();
  });

  it('gives the same from the worker thread and from the main thread', async () => {
    const fromWorker = await hasher.leaves('org-1', rows);
    const fromHere = await leavesHere('org-1', rows);
    const hex = (xs: Array<{ id: string; leaf: Buffer }>) =>
      xs.map((x) => ({ id: x.id, leaf: x.leaf.toString('hex') }));
    expect(hex(fromWorker)).toEqual(expected);
    expect(hex(fromHere)).toEqual(expected);
  });

  it('gives every row its own leaf on the main thread across slices', async () => {
    // 20 times the rows: several slices of 250 between turns of the event loop.
    const many = Array.from({ length: 20 }, () => rows).flat();
    const fromHere = await leavesHere('org-1', many);
    expect(fromHere.map((x) => x.leaf.toString('hex'))).toEqual(
      Array.from({ length: 20 }, () => expected.map((e) => e.leaf)).flat(),
    );
  });

  it('hashes a round on the main thread when the worker cannot answer it, and says so', async () => {
    const said: string[] = [];
    const hash = workerLeaves(broken, (err, org, n) => said.push(`${org} ${n}: ${(err as Error).message}`));
    const got = await hash('org-2', rows.slice(0, 3));
    expect(got.map((g) => ({ id: g.id, leaf: g.leaf.toString('hex') }))).toEqual(expected.slice(0, 3));
    expect(said).toEqual([`org-2 3: no key columns for the log kind ${rows[0]![0]}`]);
  });
});
