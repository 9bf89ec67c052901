/**
 * Actions: notification definitions for environments or flows (spec endpoints 4, 5, 6 and 19;
 * semantics.md section 7; the Terraform provider's environments_notifications).
 */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** Triggers of environment actions (spec: Events). */
export const ENV_TRIGGERS = [
  'ON_STARTED_ARTIFACT',
  'ON_EXITED_ARTIFACT',
  'ON_SCALED_ARTIFACT',
  'ON_ALLOWED_ARTIFACT',
  'ON_NON_COMPLIANT_ENV',
  'ON_COMPLIANT_ENV',
] as const;
/** Triggers of flow actions (spec: Events). */
export const FLOW_TRIGGERS = [
  'ON_STARTED_TRAIL',
  'ON_ATTESTED_PROVENANCE',
  'ON_ATTESTATION',
  'ON_APPROVAL',
  'ON_RELEASE',
] as const;

/** Action names (spec endpoint 4): letters, digits and `_ . ~ / -`. */
export const ACTION_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.~/-]*$/;

const HttpUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'https:' || u.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

export const SlackTarget = z
  .strictObject({
    type: z.literal('SLACK'),
    webhook: HttpUrl,
    context: z.looseObject({}).nullable().optional(),
  })
  .meta({ id: 'SlackTarget' });
export const WebhookTarget = z
  .strictObject({
    type: z.literal('WEBHOOK'),
    webhook: HttpUrl,
    payload_version: z.literal('1.0').default('1.0'),
    /**
     * This target's own signing key (write-only: never read back). Without it deliveries are
     * signed with the organization's key.
     */
    secret: z
      .string()
      .min(16)
      .max(512)
      .optional()
      .describe(
        "Key of this target's X-Verity-Signature, 16 to 512 characters; write-only. Without it, the organization's webhook signing key signs.",
      ),
  })
  .meta({ id: 'WebhookTarget' });
export const EmailTarget = z
  .strictObject({ type: z.literal('EMAIL'), emails: z.array(z.email()).min(1).max(50) })
  .meta({ id: 'EmailTarget' });
/** A chat, webhook or e-mail target. */
export const ActionTarget = z.discriminatedUnion('type', [SlackTarget, WebhookTarget, EmailTarget]);
export type ActionTarget = z.infer<typeof ActionTarget>;

const Names = z.array(z.string().min(1).max(255)).max(500);
const ActionName = z
  .string()
  .max(255)
  .regex(ACTION_NAME_PATTERN, `must match pattern '${ACTION_NAME_PATTERN.source}'`);

/** Body of the environment action endpoints (spec endpoints 4 and 5). */
export const EnvActionPut = z
  .strictObject({
    name: ActionName,
    type: z.literal('env').default('env'),
    environments: Names.default([]),
    triggers: z.array(z.string()).max(20),
    targets: z.array(ActionTarget).min(1).max(20),
  })
  .meta({ id: 'EnvActionPut' });
export type EnvActionPut = z.infer<typeof EnvActionPut>;

/** Body of `PUT /actions/{org}/flows` (spec endpoint 6). */
export const FlowActionPut = z
  .strictObject({
    name: ActionName,
    type: z.literal('flow').default('flow'),
    flows: Names.default([]),
    triggers: z.array(z.string()).max(20),
    targets: z.array(ActionTarget).min(1).max(20),
  })
  .meta({ id: 'FlowActionPut' });
export type FlowActionPut = z.infer<typeof FlowActionPut>;

/** A target with its delivery record. */
export const ActionTargetState = z
  .looseObject({
    type: z.enum(['SLACK', 'WEBHOOK', 'EMAIL']),
    webhook: z.string().optional(),
    payload_version: z.string().optional(),
    emails: z.array(z.string()).optional(),
    /** Webhooks: whether the target has its own signing secret (the secret is never shown). */
    has_secret: z.boolean().optional(),
    last_success_at: EpochSeconds.nullable(),
    last_failure_at: EpochSeconds.nullable(),
    last_error: z.string().nullable(),
  })
  .meta({ id: 'ActionTargetState' });

/** An action as read back. */
export const Action = z
  .object({
    name: z.string(),
    type: z.enum(['env', 'flow']),
    number: z.number().int(),
    environments: z.array(z.string()).nullable(),
    flows: z.array(z.string()).nullable(),
    triggers: z.array(z.string()),
    targets: z.array(ActionTargetState),
    created_by: z.string(),
    is_created_from_slack_app: z.boolean(),
    is_failing: z.boolean(),
    last_success_timestamp: EpochSeconds.nullable(),
    last_failure_timestamp: EpochSeconds.nullable(),
    created_at: EpochSeconds,
    last_modified_at: EpochSeconds,
  })
  .meta({ id: 'Action' });
export type Action = z.infer<typeof Action>;

/** An organization's webhook signing key, as an admin reads it. */
export const WebhookSigningKey = z
  .strictObject({
    key: z.string().describe('Signs webhook deliveries of targets without their own secret'),
    created_at: EpochSeconds,
    previous_key_signs_until: EpochSeconds.nullable().describe(
      'After a rotation, the replaced key adds a second signature until then',
    ),
  })
  .meta({ id: 'WebhookSigningKey' });
export type WebhookSigningKey = z.infer<typeof WebhookSigningKey>;
