/**
 * Notification configs (`/notification-config/{org}/{type}`, the Terraform provider's
 * `kosli_notification_config`): the targets an organization names for what Verity raises itself
 * replace the recipients Verity would derive; deleting the config derives them again. Targets
 * are normalized before they are stored, and keep their identity and delivery record across
 * updates as action targets do.
 */
import type {
  NotificationConfig,
  NotificationConfigPut,
  NotificationType,
} from '../../../../shared/contract/notification-config.js';
import { KEY_EXPIRY_THRESHOLDS_DAYS } from '../../domain/api-key-expiry.js';
import { normalizeTargets } from '../../domain/notification-targets.js';
import { ValidationError } from '../../errors.js';
import {
  notificationConfigsRepository,
  type ConfigTargetInput,
  type NotificationConfigTargetRow,
} from '../../storage/repositories/notification-configs.js';
import { epochSeconds } from '../../time.js';
import { transact, type OrgScope } from '../scope/org-scope.js';
import { maskAddress } from './actions.js';

/** When Verity raises each notification type. */
const DETECTION: Record<NotificationType, NotificationConfig['detection']> = {
  api_key_expiry: {
    days_before_expiry: KEY_EXPIRY_THRESHOLDS_DAYS.filter((d) => d > 0),
    on_expiry: KEY_EXPIRY_THRESHOLDS_DAYS.includes(0),
  },
  log_checkpoint: { days_before_expiry: [], on_expiry: false, on_checkpoint: true },
};

const latest = (dates: Array<Date | null>): Date | null =>
  dates.reduce<Date | null>((m, d) => (d && (!m || d > m) ? d : m), null);

/**
 * The config as read back. Webhook and Slack addresses are whole only with `fullAddresses`
 * (callers who may change the config): their paths are often the credential.
 */
function present(
  type: NotificationType,
  targets: readonly NotificationConfigTargetRow[],
  fullAddresses: boolean,
): NotificationConfig {
  const lastSuccess = latest(targets.map((t) => t.last_success_at));
  const failing = targets
    .filter((t) => t.last_failure_at !== null && t.last_error !== null)
    .sort((a, b) => b.last_failure_at!.getTime() - a.last_failure_at!.getTime())[0];
  const failedLast = failing && (!lastSuccess || failing.last_failure_at! > lastSuccess);
  return {
    notification_type: type,
    scope: null,
    targets: targets.map((t) => ({
      type: t.type,
      ...(t.webhook !== null ? { webhook: fullAddresses ? t.webhook : maskAddress(t.webhook) } : {}),
      ...(t.payload_version !== null ? { payload_version: t.payload_version } : {}),
      ...(t.emails !== null ? { emails: t.emails } : {}),
    })),
    detection: DETECTION[type],
    last_notified_at: lastSuccess ? epochSeconds(lastSuccess) : null,
    last_failure: failedLast
      ? { failed_at: epochSeconds(failing.last_failure_at!), error: failing.last_error! }
      : null,
  };
}

/** The organization's config of a type; empty targets when it configured none. */
export async function getNotificationConfig(
  scope: OrgScope,
  type: NotificationType,
  fullAddresses: boolean,
): Promise<NotificationConfig> {
  const { db, org } = scope;
  return present(type, await notificationConfigsRepository.targets(db, org.id, type), fullAddresses);
}

/** Replaces the config's targets (400 naming each bad one); returns the stored config and whether it was created. */
export async function putNotificationConfig(
  scope: OrgScope,
  type: NotificationType,
  input: NotificationConfigPut,
): Promise<{ created: boolean; config: NotificationConfig }> {
  const normalized = normalizeTargets(input.targets);
  if (!normalized.ok) {
    throw new ValidationError(normalized.errors);
  }
  const targets = normalized.targets.map((t): ConfigTargetInput =>
    t.type === 'EMAIL'
      ? { type: 'EMAIL', webhook: null, payload_version: null, emails: t.emails }
      : {
          type: t.type,
          webhook: t.webhook,
          payload_version: t.type === 'WEBHOOK' ? t.payload_version : null,
          emails: null,
        },
  );
  return transact(scope, async ({ db, org, now, actor }) => {
    const created = await notificationConfigsRepository.upsert(db, {
      org_id: org.id,
      notification_type: type,
      created_by: actor,
      now,
    });
    await notificationConfigsRepository.replaceTargets(db, org.id, type, targets);
    const stored = await notificationConfigsRepository.targets(db, org.id, type);
    return { created, config: present(type, stored, true) };
  });
}

/** Deletes the config (nothing to delete is fine): Verity derives the recipients again. */
export async function deleteNotificationConfig(scope: OrgScope, type: NotificationType): Promise<void> {
  await transact(scope, ({ db, org }) => notificationConfigsRepository.delete(db, org.id, type));
}
