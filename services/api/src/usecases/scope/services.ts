/**
 * The services every use case may call, built once per app (plugins/services.ts) and carried in
 * its `OrgScope`: nothing else is injected.
 */
import type { LogSettings } from '../log/log.js';
import type { SbomLimits } from '../../domain/sbom.js';
import type { Db } from '../../storage/database.js';
import type { AttestationBatcher } from '../../storage/batching/attestation-batcher.js';
import type { CustomEvaluator } from '../../workers/custom-evaluator.js';
import type { ProvenancePort } from './provenance.js';
import type { ViewCache } from './view-cache.js';

/** Evidence files behind one small interface, addressed by sha256 (evidence/evidence-store.ts). */
export interface EvidenceStore {
  /** Stores the content under its sha256 (idempotent). `db` is the caller's transaction. */
  put(db: Db, orgId: string, file: { sha256: string; content: Buffer }, now: Date): Promise<void>;
  get(db: Db, orgId: string, sha256: string): Promise<Buffer | undefined>;
  stat(db: Db, orgId: string, sha256: string): Promise<{ size: number } | undefined>;
  /**
   * Deletes at most `limit` files stored before `span.before` (and since `span.since`, when given;
   * a file stored again counts from then) that no attestation names: left by an attestation that
   * failed after its file was stored.
   */
  collect(db: Db, span: { since: Date | null; before: Date }, limit: number): Promise<number>;
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
  /** What one attestation's SBOM documents index at most (the defaults when absent). */
  sbomLimits?: SbomLimits;
  /** The transparency log's settings when it runs: audit packages then carry its proofs. */
  log?: LogSettings | undefined;
}
