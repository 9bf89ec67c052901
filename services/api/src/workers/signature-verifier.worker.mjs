// @ts-check
/**
 * One worker thread of the signed-evidence verifier (signature-verifier.ts): builds the trust
 * material once from the settings it is given, then verifies one evidence file per job
 * (signed-evidence.mjs). Verification costs milliseconds of CPU a bundle; here it holds no
 * request up, and the pool bounds its time and heap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildSignatureTrust, verifySignedEvidence } from './signed-evidence.mjs';

/**
 * @typedef {{ id: number; op: 'verify'; filename: string; data: Uint8Array; fingerprint: string | null }} VerifyJob
 */

if (!parentPort) {
  throw new Error('signature-verifier.worker.mjs runs only as a worker thread');
}
const jobs = parentPort;
/**
 * What the pool gave this worker: its answers port and the settings' text.
 * @param {unknown} given
 */
const settingsOf = (given) =>
  /** @type {{ answers: import('node:worker_threads').MessagePort; trustedRoot?: string; publicKeys?: string }} */ (
    given
  );
const data = settingsOf(workerData);
const answers = data.answers;
// The settings were checked when the configuration was read, so this does not throw.
const trust = buildSignatureTrust(data.trustedRoot, data.publicKeys);
answers.postMessage({ ready: true });

jobs.on('message', (/** @type {VerifyJob} */ job) => {
  try {
    const value = verifySignedEvidence(trust, { filename: job.filename, data: job.data }, job.fingerprint);
    answers.postMessage({ id: job.id, ok: true, value });
  } catch (e) {
    answers.postMessage({ id: job.id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
