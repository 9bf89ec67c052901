/**
 * The services every use case may call, built once per app (plugins/services.ts) and carried in
 * its `OrgScope`: nothing else is injected.
 */
import type { Readable } from 'node:stream';
import type { LogSettings } from '../log/log.js';
import type { SbomLimits } from '../../domain/sbom.js';
import type { Db } from '../../storage/database.js';
import type { AttestationBatcher } from '../../storage/batching/attestation-batcher.js';
import type { CustomEvaluator } from '../../workers/custom-evaluator.js';
import type { SignatureVerifier } from '../../workers/signature-verifier.js';
import type { ProvenancePort } from './provenance.js';
import type { ViewCache } from './view-cache.js';

/** The bytes of one evidence file, already summed: in memory or in a temporary file. */
export interface EvidenceBlob {
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  size: number;
  /** A fresh stream of the bytes (each call starts again). */
  open(): Readable;
  /** The bytes in memory: for the database store and SBOM reading, never for a download. */
  read(): Promise<Buffer>;
}

/** A stored file as read back: its size, and its bytes checked against the digest as they flow. */
export interface StoredEvidence {
  size: number;
  /**
   * The bytes; the last chunk is held back until size and digest are checked, so a changed file
   * ends in an error (`EvidenceIntegrityError`) before it was served whole.
   */
  stream: Readable;
}

/**
 * Evidence files behind one small interface, addressed by sha256 (evidence/evidence-store.ts):
 * the database, or an S3-compatible object store (storage/s3-evidence-store.ts). Either keeps a
 * row per file in `evidence_files` (digest, size, when stored); the database store keeps the
 * bytes in it too. A store that cannot be reached throws `ServiceUnavailableError` (503).
 */
export interface EvidenceStore {
  /** Which one: `database` or `s3`. */
  readonly kind: 'database' | 's3';
  /**
   * Stores the bytes under their sha256 (idempotent); resolves once they are stored and their
   * digest checked. `db` is the caller's transaction.
   */
  put(db: Db, orgId: string, file: EvidenceBlob, now: Date): Promise<void>;
  get(db: Db, orgId: string, sha256: string): Promise<StoredEvidence | undefined>;
  stat(db: Db, orgId: string, sha256: string): Promise<{ size: number } | undefined>;
  /**
   * Deletes at most `limit` files stored before `span.before` (and since `span.since`, when given;
   * a file stored again counts from then) that no attestation names: left by an attestation that
   * failed after its file was stored.
   */
  collect(db: Db, span: { since: Date | null; before: Date }, limit: number): Promise<number>;
  /**
   * Deletes those of these files stored before `storedBefore` (a file stored again counts from
   * then, so one an attestation is naming right now stays); returns the digests deleted. The
   * retention job calls it for files it found past their period (`db` is its transaction).
   */
  remove(db: Db, orgId: string, sha256s: readonly string[], storedBefore: Date): Promise<string[]>;
}

export interface Services {
  /** Where a running fingerprint came from: the runtime's view of the evidence. */
  provenance: ProvenancePort;
  /** jq and JSON Schema rules of custom attestation types, in a bounded worker pool. */
  evaluator: CustomEvaluator;
  store: EvidenceStore;
  /** Stores attestations without the trail's lock, several in one statement (pool only). */
  batcher: AttestationBatcher;
  /** Repos, custom types and actions as last read, per organization (moved by any change to them). */
  catalog: ViewCache;
  /** Verifies evidence files that are Sigstore bundles or DSSE envelopes (absent: none is verified). */
  signatures?: SignatureVerifier;
  /** What one attestation's SBOM documents index at most (the defaults when absent). */
  sbomLimits?: SbomLimits;
  /**
   * Started fingerprints from which a snapshot records its deployments after its transaction
   * (usecases/runtime/delivery-deferred.ts, VERITY_DEPLOYMENTS_DEFER_FROM).
   */
  deploymentsDeferFrom: number;
  /** The transparency log's settings when it runs: audit packages then carry its proofs. */
  log?: LogSettings | undefined;
}
