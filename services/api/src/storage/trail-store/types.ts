/**
 * The trail aggregate as the trail store reads and writes it: a trail with its flow, artifacts,
 * attestations, facts and trail events.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EvaluationInputs as DomainEvaluationInputs } from '../../domain/trail-evaluation.js';
import type { ArtifactsTable, AttestationsTable, TrailEventsTable, TrailsTable } from '../tables/evidence.js';
import type { FlowRow } from '../repositories/flows.js';
import type { TrailRow } from '../repositories/trails.js';

/** What a trail's evaluation reads of it (`evaluationInputs`). */
export interface EvaluationInputs {
  artifacts: Array<
    Pick<
      Selectable<ArtifactsTable>,
      'id' | 'fingerprint' | 'template_reference_name' | 'git_commit' | 'seq' | 'state' | 'compliance'
    >
  >;
  attestations: DomainEvaluationInputs['attestations'];
}

/** What `readTrailsForAttestations` reads for one trail. */
export interface AttestationTrailRead {
  flow: FlowRow;
  trail: TrailRow;
  /** The trail row's version (xmin) at the read. */
  version: string;
  /** The flow row's version (xmin) at the read. */
  flowVersion: string;
  /** Each of the trail's artifacts' row version (xmin) at the read, by artifact id. */
  artifactVersions: Record<string, string>;
  inputs: EvaluationInputs;
  /** How many of the trail's reports its stored facts leave out (`fromEvaluationInputsColumns`). */
  factsBehind: number;
}

/**
 * A trail's reports reduced to what its evaluation reads (`essentialAttestations` in
 * domain/trail-evaluation.ts), in report order, as migration 0303 stores them.
 */
export interface TrailFacts {
  /** The trail's latest report when these were taken; later reports are read with them. */
  lastId: string | null;
  attestations: Array<Omit<EvaluationInputs['attestations'][number], 'seq'>>;
}

/** One attestation's rows: the attestation and its trail event. */
export interface StoredAttestation {
  row: Insertable<AttestationsTable> & { created_at: Date };
  event: Insertable<TrailEventsTable> & { occurred_at: Date };
}

/** Attestations to one trail, and the trail after them (`trailStore.write`). */
export interface TrailAttestationBatch {
  orgId: string;
  trailId: string;
  /**
   * What the attestations were planned on (`trailStore.readTrailsForAttestations`): the versions of the
   * trail and flow rows, and the flow names they were sent to, which must all still name the
   * trail's flow. Null: the caller holds the trail's lock.
   */
  ifUnchanged: { version: string; flowVersion: string; flowNames: readonly string[] } | null;
  trail: Pick<
    Updateable<TrailsTable>,
    'compliance' | 'compliance_state' | 'evaluated_at' | 'last_modified_at'
  >;
  /**
   * The trail's facts after the last attestation (`trailStore.readTrailsForAttestations` reads
   * them); null leaves the stored ones, which are then read with the reports after them.
   */
  facts: TrailFacts | null;
  attestations: StoredAttestation[];
  /**
   * Artifact states after the last attestation, each written only if its row is still at `version`
   * (the read's; null: the caller holds the trail's lock), else nothing of the trail is written.
   */
  artifacts?: ReadonlyArray<ArtifactStateWrite>;
  /** Fingerprints whose compliance changed: every environment where one runs is marked, at `at`. */
  marks?: { fingerprints: readonly string[]; at: Date };
}

/** An artifact's new state (`EvaluationWrites['artifacts']`) and the row version it was planned on. */
export interface ArtifactStateWrite {
  id: string;
  state: string;
  compliance: string;
  /**
   * The key of the trail's `artifacts_statuses` whose document is `compliance`, when the batch's
   * trail compliance holds it: the statement then copies it from there instead of being sent it again.
   */
  statusKey?: string | undefined;
  version: string | null;
}

/** The trails a write stored (`org_id:trail_id` to the row's new version), and the marks it made. */
export type StoredTrails = Map<string, string> & { marks: number };
