/**
 * The port between the runtime (environments, snapshots) and the evidence (flows, trails,
 * artifacts): where a running fingerprint came from, and the runtime events written back onto
 * the trails that produced it (semantics.md sections 3 and 5).
 */
import type { Db } from '../../storage/database.js';

export type ComplianceState = 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';

/** An effective attestation (latest per slot, overrides applied) on an artifact or its trail. */
export interface ProvenanceAttestation {
  name: string;
  /** generic, junit, snyk, pull_request, jira, sonar, custom:<name>, decision, ... */
  type: string;
  isCompliant: boolean | null;
  scope: 'trail' | 'artifact';
  /** For decisions: the control identifier. */
  control?: string | null;
}

/** One (flow, trail) context in which a fingerprint was reported. */
export interface ProvenanceRecord {
  fingerprint: string;
  flowName: string;
  flowTags: Record<string, string>;
  trailName: string;
  artifactId: string;
  /** The artifact's display name (filename). */
  artifactName: string;
  templateReferenceName: string | null;
  gitCommit: string | null;
  /** The commit as CI reported it with the artifact (sha1, message, author, branch, ...). */
  gitCommitInfo: Record<string, unknown> | null;
  commitUrl: string | null;
  buildUrl: string | null;
  htmlUrl: string;
  reportedAt: Date;
  /** The artifact's status in its trail. */
  artifactCompliance: ComplianceState;
  trailCompliance: ComplianceState;
  /** Why the artifact is not compliant in its trail: its failing and missing slots (empty when compliant). */
  nonComplianceReasons: string[];
  attestations: ProvenanceAttestation[];
  /** The verified signatures on attestations naming the fingerprint, in any trail (who signed). */
  signatures?: Array<{ kind: string; identity: string | null; issuer: string | null }>;
}

/** A start or stop of a fingerprint in an environment, to be written onto its trails. */
export interface RuntimeEvent {
  fingerprint: string;
  type: 'artifact_started_running' | 'artifact_stopped_running';
  environmentName: string;
  snapshotIndex: number;
  instanceCount: number;
  at: Date;
  /**
   * Only the trails of these artifact records: a fingerprint already running when CI reported it
   * tells its new trails only. Absent: the latest trail of every flow holding the fingerprint.
   */
  artifactIds?: readonly string[];
}

export interface ProvenancePort {
  /** For each fingerprint: one record per flow holding it (that flow's latest trail with it). */
  find(db: Db, orgId: string, fingerprints: readonly string[]): Promise<Map<string, ProvenanceRecord[]>>;
  /** Appends runtime events to the latest trail of every flow holding each fingerprint (or those named). */
  recordRuntimeEvents(db: Db, orgId: string, events: readonly RuntimeEvent[]): Promise<void>;
}

/** The answer when no evidence is recorded: nothing has provenance, and there is no trail to write to. */
export const noProvenance: ProvenancePort = {
  find: async () => new Map(),
  recordRuntimeEvents: async () => undefined,
};
