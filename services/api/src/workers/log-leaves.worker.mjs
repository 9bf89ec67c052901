// @ts-check
/**
 * One worker thread of the log's leaf hasher (log-hasher.ts): parses, canonicalizes (RFC 8785)
 * and hashes a sequencing round's queued rows (log-leaves.mjs), a few milliseconds of CPU per
 * hundred records that would otherwise hold the API's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { logLeaves } from './log-leaves.mjs';

if (!parentPort) {
  throw new Error('log-leaves.worker.mjs runs only as a worker thread');
}
const jobs = parentPort;
/**
 * What the pool gave this worker: its answers port and the key columns of each kind.
 * @param {unknown} given
 */
const settingsOf = (given) =>
  /** @type {{ answers: import('node:worker_threads').MessagePort; keys: Record<string, string[]> }} */ (
    given
  );
const data = settingsOf(workerData);
const answers = data.answers;
answers.postMessage({ ready: true });

jobs.on('message', (/** @type {{ id: number; rows: Array<[string, string, string]> }} */ job) => {
  try {
    const value = logLeaves(data.keys, job.rows);
    answers.postMessage({ id: job.id, ok: true, value }, [/** @type {ArrayBuffer} */ (value.leaves.buffer)]);
  } catch (e) {
    answers.postMessage({ id: job.id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
