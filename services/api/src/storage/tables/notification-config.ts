/**
 * Notification configs and the record of API-key expiry warnings (migration
 * 0386_notification_config).
 */
import type { ColumnType, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

/** Notification types an organization configures (shared/contract/notification-config.ts). */
export type NotificationTypeColumn = 'api_key_expiry' | 'log_checkpoint';

/** An organization's own recipients for one notification type; absent: Verity derives them. */
export interface NotificationConfigsTable {
  org_id: string;
  notification_type: NotificationTypeColumn;
  created_by: string;
  created_at: Timestamp;
  last_modified_at: Timestamp;
}

/** One target of a config, with its delivery record; `id` stays while the target stays the same. */
export interface NotificationConfigTargetsTable {
  org_id: string;
  notification_type: NotificationTypeColumn;
  id: string;
  position: number;
  type: 'SLACK' | 'WEBHOOK' | 'EMAIL';
  webhook: string | null;
  payload_version: string | null;
  emails: Json<string[]> | null;
  last_success_at: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_error: string | null;
}

/** Who a warning went to: the config's targets, the organization's admins, or nobody. */
export type WarningRecipients = 'configured' | 'admins' | 'none';

/** A warning written for a key at a threshold (days before expiry; 0 = on expiry). */
export interface ApiKeyExpiryWarningsTable {
  org_id: string;
  key_id: string;
  threshold_days: number;
  expires_at: Timestamp;
  warned_at: Timestamp;
  recipients: WarningRecipients;
}

export interface NotificationConfigTables {
  notification_configs: NotificationConfigsTable;
  notification_config_targets: NotificationConfigTargetsTable;
  api_key_expiry_warnings: ApiKeyExpiryWarningsTable;
}
