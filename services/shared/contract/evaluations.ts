/**
 * Server-side policy evaluations (reference/peers-2026-11b.md 1.1-1.2): what `kosli evaluate
 * policy` and `kosli evaluate trail --server-side` send and read. Every object is closed.
 */
import { z } from 'zod';
import { EpochSeconds, Fingerprint, ResourceName } from './common.js';
import { AttestationName, TrailName } from './evidence-common.js';

/** Trails an evaluation may name, and files its policy bundle may hold. */
export const MAX_EVALUATION_TRAILS = 100;
export const MAX_POLICY_FILES = 100;
/** Bytes of a policy bundle: the sum over its files of the path's and the source's UTF-8 lengths. */
export const MAX_POLICY_BUNDLE_BYTES = 1_048_576;

export const EvaluationTrailRef = z.strictObject({ flow: ResourceName, trail: TrailName });

/** Where the decision is written: a trail, or an artifact of it (`fingerprint`). */
export const EvaluationDecisionTarget = z
  .strictObject({
    control: z.string().min(1).max(256),
    name: AttestationName,
    flow: ResourceName,
    trail: TrailName,
    fingerprint: Fingerprint.optional(),
  })
  .meta({ id: 'EvaluationDecisionTarget' });
export type EvaluationDecisionTarget = z.infer<typeof EvaluationDecisionTarget>;

/** Body of `POST /evaluations/{org}`. Counts, sizes and paths are checked after parsing. */
export const EvaluationInput = z
  .strictObject({
    context: z.strictObject({
      trails: z.array(EvaluationTrailRef).min(1).max(MAX_EVALUATION_TRAILS),
    }),
    policy: z.strictObject({
      files: z.record(z.string().max(4_096), z.string()),
    }),
    params: z.record(z.string(), z.unknown()),
    decision: EvaluationDecisionTarget.optional(),
  })
  .meta({ id: 'EvaluationRequest' });
export type EvaluationInput = z.infer<typeof EvaluationInput>;

export const EVALUATION_STATUSES = ['pending', 'completed', 'failed'] as const;

/** An evaluation: `result` only when completed, `error` only when failed, never null. */
export const Evaluation = z
  .object({
    id: z.string(),
    status: z.string().meta({ description: 'pending, completed or failed (clients poll until terminal)' }),
    requested_at: EpochSeconds,
    recorded_at: EpochSeconds,
    result: z.object({ allow: z.boolean(), violations: z.array(z.string()) }).optional(),
    error: z
      .object({
        kind: z.string().meta({ description: 'compile, result_shape, evaluate, no_policy, input_shape' }),
        message: z.string(),
      })
      .optional(),
    decision_attestation_id: z.string().optional(),
    policy_digest: z.string().optional(),
  })
  .meta({ id: 'Evaluation' });
export type Evaluation = z.infer<typeof Evaluation>;

/** The answer to a create: the new evaluation, pending. */
export const EvaluationCreated = z
  .object({
    id: z.string(),
    status: z.literal('pending'),
    requested_at: EpochSeconds,
    recorded_at: EpochSeconds,
  })
  .meta({ id: 'EvaluationCreated' });

/** Body of `PUT /organizations/{org}/features/{feature}`, and its answer. */
export const FeatureSwitchInput = z
  .strictObject({ enabled: z.boolean() })
  .meta({ id: 'FeatureSwitchRequest' });
export const FeatureSwitch = z
  .object({ feature: z.string(), enabled: z.boolean() })
  .meta({ id: 'FeatureSwitch' });
