/**
 * Re-evaluates a trail after every change that touches it and stores the result with
 * `evaluated_at` (semantics.md section 4), reporting which fingerprints changed state.
 */
import { evaluateTrail, type AttestationFact, type TrailEvaluation } from '../domain/compliance.js';
import { templateOrEmpty } from '../domain/flow-template.js';
import { epochSeconds } from '../ids.js';
import type { Db } from '../storage/database.js';
import {
  artifactsRepository,
  type ArtifactRow,
  type EvaluationInputs,
} from '../storage/repositories/artifacts.js';
import type { FlowRow } from '../storage/repositories/flows.js';
import type { TrailRow } from '../storage/repositories/trails.js';
import { trailsRepository } from '../storage/repositories/trails.js';

export interface EvaluationOutcome {
  evaluation: TrailEvaluation;
  /** Fingerprints whose stored state changed with this evaluation. */
  changedFingerprints: string[];
}

/** The trail's template: its own, else its flow's, else none (the empty template). */
export function trailTemplate(trail: Pick<TrailRow, 'template'>, flow: Pick<FlowRow, 'template'>) {
  return templateOrEmpty(trail.template ?? flow.template);
}

/** The stored form of an evaluation (without the per-artifact index). */
export function storedCompliance(e: TrailEvaluation): Omit<TrailEvaluation, 'byArtifactId'> {
  const { byArtifactId: _unused, ...rest } = e;
  return rest;
}

const comparable = (c: unknown) =>
  JSON.stringify(c, (k, v: unknown) => (k === 'evaluated_at' ? undefined : v));

type InputAttestation = EvaluationInputs['attestations'][number];

/** The writes an evaluation makes: the trail's stored compliance, and each artifact whose compliance changed. */
export interface EvaluationWrites extends EvaluationOutcome {
  trail: {
    compliance: string;
    compliance_state: TrailEvaluation['status'];
    evaluated_at: Date;
    last_modified_at: Date;
  };
  artifacts: Array<{ id: string; state: ArtifactRow['state']; compliance: string }>;
}

/**
 * Evaluates a trail from what it holds (the inputs, plus `added`: an attestation about to be
 * stored, reported after every other) without touching the database; `reevaluateTrail` and the
 * attestation writer store the result.
 */
export function evaluateInputs(input: {
  flow: FlowRow;
  trail: TrailRow;
  inputs: EvaluationInputs;
  added?: Omit<InputAttestation, 'seq'>;
  now: Date;
}): EvaluationWrites {
  const { flow, trail, now } = input;
  const { artifacts } = input.inputs;
  const facts: InputAttestation[] = input.added
    ? // Stored later under the trail's lock, the added report takes a seq above all of these.
      [...input.inputs.attestations, { ...input.added, seq: Number.MAX_SAFE_INTEGER }]
    : input.inputs.attestations;
  const attestations: AttestationFact[] = facts.map((f) => ({
    id: f.id,
    name: f.name,
    type: f.kind === 'override' ? (f.original_type ?? f.type) : f.type,
    isCompliant: f.is_compliant,
    isOverride: f.kind === 'override',
    artifactFingerprint: f.artifact_fingerprint,
    targetArtifacts: f.target_artifacts,
    gitCommit: f.git_commit,
    seq: Number(f.seq),
  }));
  const evaluation = evaluateTrail({
    template: trailTemplate(trail, flow),
    templateId: trail.template ? trail.id : flow.template ? flow.id : null,
    artifacts: artifacts.map((a) => ({
      id: a.id,
      fingerprint: a.fingerprint,
      templateReferenceName: a.template_reference_name,
      gitCommit: a.git_commit,
      seq: Number(a.seq),
    })),
    attestations,
    evaluatedAt: epochSeconds(now),
  });

  const changedFingerprints: string[] = [];
  const artifactWrites: EvaluationWrites['artifacts'] = [];
  for (const a of artifacts) {
    const next = evaluation.byArtifactId[a.id];
    if (!next) continue;
    const state = next.status === 'MISSING' ? 'INCOMPLETE' : next.status;
    if (state !== a.state) changedFingerprints.push(a.fingerprint);
    if (state !== a.state || comparable(next) !== comparable(a.compliance)) {
      artifactWrites.push({ id: a.id, state, compliance: JSON.stringify(next) });
    }
  }
  return {
    evaluation,
    changedFingerprints: [...new Set(changedFingerprints)],
    trail: {
      compliance: JSON.stringify(storedCompliance(evaluation)),
      compliance_state: evaluation.status,
      evaluated_at: now,
      last_modified_at: now,
    },
    artifacts: artifactWrites,
  };
}

/** Stores the artifact states of an evaluation (the trail's is the caller's). */
export async function storeArtifactStates(db: Db, orgId: string, writes: EvaluationWrites): Promise<void> {
  for (const a of writes.artifacts) {
    await artifactsRepository.update(db, orgId, a.id, { state: a.state, compliance: a.compliance });
  }
}

/** Evaluates the trail inside the caller's transaction and stores trail, artifact and flow states. */
export async function reevaluateTrail(
  db: Db,
  input: { orgId: string; flow: FlowRow; trail: TrailRow; now: Date },
): Promise<EvaluationOutcome> {
  const { orgId, flow, trail, now } = input;
  const inputs = await artifactsRepository.evaluationInputs(db, orgId, trail.id);
  const writes = evaluateInputs({ flow, trail, inputs, now });
  await storeArtifactStates(db, orgId, writes);
  await trailsRepository.update(db, orgId, trail.id, writes.trail);
  return { evaluation: writes.evaluation, changedFingerprints: writes.changedFingerprints };
}
