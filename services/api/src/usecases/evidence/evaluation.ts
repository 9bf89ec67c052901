/**
 * Re-evaluates a trail after every change that touches it and stores the result with
 * `evaluated_at` (semantics.md section 4), reporting which fingerprints changed state. The
 * evaluation itself is pure: domain/trail-evaluation.ts.
 */
import {
  evaluateInputs,
  type EvaluationOutcome,
  type EvaluationWrites,
} from '../../domain/trail-evaluation.js';
import type { Db } from '../../storage/database.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import type { FlowRow } from '../../storage/repositories/flows.js';
import type { TrailRow } from '../../storage/repositories/trails.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { trailStore } from '../../storage/trail-store/index.js';

/** Stores the artifact states of an evaluation (the trail's is the caller's). */
async function storeArtifactStates(db: Db, orgId: string, writes: EvaluationWrites): Promise<void> {
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
  const inputs = await trailStore.evaluationInputs(db, orgId, trail.id);
  const writes = evaluateInputs({ flow, trail, inputs, now });
  await storeArtifactStates(db, orgId, writes);
  await trailsRepository.update(db, orgId, trail.id, writes.trail);
  return { evaluation: writes.evaluation, changedFingerprints: writes.changedFingerprints };
}
