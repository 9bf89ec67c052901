/**
 * Notification configs: who hears of what Verity raises itself, per organization and type
 * (the Terraform provider's `kosli_notification_config`, reference/peers-2026-11b.md section 2).
 * `api_key_expiry`: service-account keys about to expire; `log_checkpoint`: each new signed
 * checkpoint of the organization's transparency log, for witnesses.
 */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** The notification types an organization may configure. */
export const NOTIFICATION_TYPES = ['api_key_expiry', 'log_checkpoint'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Targets a config holds at most. */
export const MAX_NOTIFICATION_TARGETS = 20;
/** Addresses the one EMAIL target holds at most. */
export const MAX_NOTIFICATION_EMAILS = 50;

const HttpsUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      return new URL(v).protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an https:// URL');

const NotificationSlackTarget = z.strictObject({ type: z.literal('SLACK'), webhook: HttpsUrl });
const NotificationWebhookTarget = z.strictObject({
  type: z.literal('WEBHOOK'),
  webhook: HttpsUrl,
  payload_version: z.literal('1.0').default('1.0'),
});
const NotificationEmailTarget = z.strictObject({
  type: z.literal('EMAIL'),
  emails: z.array(z.email().max(254)).min(1).max(MAX_NOTIFICATION_EMAILS),
});

/** One destination: a Slack incoming webhook, a signed webhook (payload 1.0) or e-mail addresses. */
export const NotificationTarget = z
  .discriminatedUnion('type', [NotificationSlackTarget, NotificationWebhookTarget, NotificationEmailTarget])
  .meta({ id: 'NotificationTarget' });
export type NotificationTarget = z.infer<typeof NotificationTarget>;

/** Body of `PUT /notification-config/{org}/{notification_type}`: the targets replace the derived recipients. */
export const NotificationConfigPut = z
  .strictObject({
    targets: z.array(NotificationTarget).min(1, 'needs at least one target').max(MAX_NOTIFICATION_TARGETS),
  })
  .meta({ id: 'NotificationConfigPut' });
export type NotificationConfigPut = z.infer<typeof NotificationConfigPut>;

/** A target as read back: only the fields of its kind. */
export const NotificationTargetState = z
  .object({
    type: z.enum(['SLACK', 'WEBHOOK', 'EMAIL']),
    webhook: z.string().optional(),
    payload_version: z.string().optional(),
    emails: z.array(z.string()).optional(),
  })
  .meta({ id: 'NotificationTargetState' });

/** A notification config as read back; `targets` is empty when the organization configured none. */
export const NotificationConfig = z
  .object({
    notification_type: z.enum(NOTIFICATION_TYPES),
    /** The entity the config applies to; null: the whole organization. */
    scope: z.string().nullable(),
    targets: z.array(NotificationTargetState),
    /** When Verity raises the notification. */
    detection: z.object({
      days_before_expiry: z.array(z.number().int()),
      on_expiry: z.boolean(),
      /** log_checkpoint: every new checkpoint is sent. */
      on_checkpoint: z.boolean().optional(),
    }),
    last_notified_at: EpochSeconds.nullable(),
    /** Set when the most recent delivery failed. */
    last_failure: z.object({ failed_at: EpochSeconds, error: z.string() }).nullable(),
  })
  .meta({ id: 'NotificationConfig' });
export type NotificationConfig = z.infer<typeof NotificationConfig>;
