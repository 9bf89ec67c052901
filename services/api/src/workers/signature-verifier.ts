/**
 * The signed-evidence verifier (signed-evidence.mjs) in a worker pool: an evidence file that
 * looks like a Sigstore bundle or a DSSE envelope (or such a member of a gzipped tar archive,
 * signed-evidence-files.ts) is verified in a worker thread, with a time and heap bound,
 * organizations queued apart; any other file costs a look at its first bytes. The
 * trust material (trusted root, keyed-signature keys) is built in each worker from the settings.
 */
import { EvaluationLimitError, WorkerPool } from './worker-pool.js';
import { verifyEvidenceFile } from './signed-evidence-files.js';
import {
  looksSigned,
  MAX_SIGNED_EVIDENCE_BYTES,
  oversize,
  type SignatureResult,
} from './signed-evidence.mjs';

export type { SignatureResult } from './signed-evidence.mjs';

/** The settings the workers build their trust material from (the files' text). */
export interface SignatureSettings {
  trustedRoot: string | undefined;
  publicKeys: string | undefined;
}

/** One verification is milliseconds; these bounds only stop a pathological file. */
const LIMITS = { timeoutMs: 5_000, maxHeapMb: 128, workers: 1, queuePerOrg: 64 };

const WORKER_FILE = new URL('./signature-verifier.worker.mjs', import.meta.url);

export class SignatureVerifier extends WorkerPool {
  constructor(settings: SignatureSettings) {
    const data: Record<string, string> = {};
    if (settings.trustedRoot !== undefined) {
      data.trustedRoot = settings.trustedRoot;
    }
    if (settings.publicKeys !== undefined) {
      data.publicKeys = settings.publicKeys;
    }
    super(LIMITS, WORKER_FILE, data);
  }

  /**
   * The verification of an evidence file (null: it is not signed evidence), for the artifact
   * with `fingerprint` (null: the attestation names none), in organization `org`'s queue. A
   * verification past its bounds is a failed one, saying so.
   */
  async verify(
    org: string,
    file: { filename: string; data: Buffer },
    fingerprint: string | null,
  ): Promise<SignatureResult | null> {
    return verifyEvidenceFile(file, (candidate) => this.verifyOne(org, candidate, fingerprint));
  }

  private async verifyOne(
    org: string,
    file: { filename: string; data: Uint8Array },
    fingerprint: string | null,
  ): Promise<SignatureResult | null> {
    const kind = looksSigned(file);
    if (kind === null) {
      return null;
    }
    const failed = (reason: string): SignatureResult => ({
      verified: false,
      kind,
      identity: null,
      issuer: null,
      reason,
    });
    if (file.data.length > MAX_SIGNED_EVIDENCE_BYTES) {
      return failed(oversize(file.data.length));
    }
    try {
      const job = { op: 'verify', filename: file.filename, data: file.data, fingerprint };
      return (await this.run(org, job)) as SignatureResult | null;
    } catch (err) {
      if (err instanceof EvaluationLimitError) {
        return failed(`verification did not finish: ${err.message}`);
      }
      throw err;
    }
  }
}
