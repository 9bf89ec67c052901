/**
 * Policy preview: which running artifacts' compliance an environment's policies would change
 * with a policy attached or detached, at each snapshot of a range. Changes nothing.
 */
import { z } from 'zod';
import { EpochSeconds, ResourceName } from './common.js';

/** Snapshots one preview may cover, policies it may attach, and changes it lists at most. */
export const MAX_PREVIEW_SNAPSHOTS = 1_000;
export const MAX_PREVIEW_ATTACH = 20;
export const MAX_PREVIEW_CHANGES = 10_000;

export const PolicyPreviewInput = z
  .strictObject({
    attach: z
      .array(z.strictObject({ name: ResourceName, content: z.string().max(1024 * 1024) }))
      .max(MAX_PREVIEW_ATTACH)
      .optional()
      .default([]),
    detach: z.array(ResourceName).max(100).optional().default([]),
    snapshots: z.strictObject({ from: z.number().int().min(1), to: z.number().int().min(1) }).optional(),
  })
  .meta({ id: 'PolicyPreviewRequest' });
export type PolicyPreviewInput = z.infer<typeof PolicyPreviewInput>;

const PreviewChange = z.object({
  fingerprint: z.string(),
  name: z.string(),
  compliant_now: z.boolean().nullable(),
  compliant_with_change: z.boolean().nullable(),
  reasons: z.array(z.string()),
});

export const PolicyPreview = z
  .object({
    snapshots: z.array(
      z.object({
        index: z.number().int(),
        taken_at: EpochSeconds,
        compliant_now: z.boolean().nullable(),
        compliant_with_change: z.boolean().nullable(),
        changes: z.array(PreviewChange),
      }),
    ),
    summary: z.object({
      snapshots: z.number().int(),
      flipped_snapshots: z.number().int(),
      flipped_artifacts: z.number().int(),
      /** True when more changes than the listed bound were found: the counts still cover them all. */
      changes_truncated: z.boolean(),
    }),
  })
  .meta({ id: 'PolicyPreview' });
export type PolicyPreview = z.infer<typeof PolicyPreview>;
