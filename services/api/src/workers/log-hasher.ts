/**
 * The leaves of a sequencing round, hashed in a worker thread (log-leaves.worker.mjs): the
 * rows' JSON is parsed, canonicalized and hashed there, so a busy organization's round is not
 * milliseconds of the API's event loop per hundred records. Organizations queue apart; a round
 * the worker cannot answer within its bounds is hashed here instead, in slices
 * (usecases/log/log.ts).
 */
import { WorkerPool } from './worker-pool.js';

/** A round of 2,000 records is tens of milliseconds; the bounds only stop a pathological one. */
const LIMITS = { timeoutMs: 30_000, maxHeapMb: 256, workers: 1, queuePerOrg: 4 };

const WORKER_FILE = new URL('./log-leaves.worker.mjs', import.meta.url);

export class LogHasher extends WorkerPool {
  /** @param keys the key columns of each kind of record */
  constructor(keys: Record<string, string[]>) {
    super(LIMITS, WORKER_FILE, { keys });
  }

  /** The record id and leaf hash of each row. */
  async leaves(
    org: string,
    rows: Array<[kind: string, op: string, row: string]>,
  ): Promise<Array<{ id: string; leaf: Buffer }>> {
    const value = (await this.run(org, { rows })) as { ids: string[]; leaves: Uint8Array };
    const all = Buffer.from(value.leaves.buffer, value.leaves.byteOffset, value.leaves.byteLength);
    return value.ids.map((id, i) => ({ id, leaf: all.subarray(i * 32, i * 32 + 32) }));
  }
}
