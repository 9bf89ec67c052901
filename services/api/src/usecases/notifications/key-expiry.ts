/**
 * The API-key expiry sweep: finds service-account keys that reached a warning threshold (14 and
 * 3 days before expiry, and the expiry itself; domain/api-key-expiry.ts) in bounded batches, and
 * for each writes the warning to the outbox and a durable record of it in one transaction. The
 * record's primary key makes each warning once per key and threshold, whichever replica or
 * round gets there first; delivery is the notifier's, with its retries.
 *
 * Recipients: the organization's `api_key_expiry` config when it has one; otherwise the e-mail
 * addresses of its admins (when e-mail can go out); otherwise nobody, which the caller logs and
 * counts.
 */
import {
  EXPIRED_WARNING_WINDOW_DAYS,
  DAY_MS,
  KEY_EXPIRY_THRESHOLDS_DAYS,
  keyExpiryEvent,
} from '../../domain/api-key-expiry.js';
import { newId } from '../../ids.js';
import { apiKeyExpiryRepository, type DueKey } from '../../storage/repositories/api-key-expiry.js';
import { outboxRepository } from '../../storage/repositories/actions.js';
import { notificationConfigsRepository } from '../../storage/repositories/notification-configs.js';
import type { Db } from '../../storage/database.js';
import type { WarningRecipients } from '../../storage/tables/notification-config.js';
import { epochSeconds } from '../../time.js';
import { scopeFor, transact, type AppScope } from '../scope/org-scope.js';

/** Admin addresses one default warning goes to at most (as an EMAIL target holds). */
const MAX_DEFAULT_RECIPIENTS = 50;

export interface KeyExpirySweepOptions {
  /** Whether e-mail can be sent (SMTP configured): without it, admins cannot be warned by default. */
  emailEnabled: boolean;
  /** Keys read and warned per batch. */
  batchSize?: number;
  /** Batches per sweep at most; the next sweep goes on where this one stopped. */
  maxBatches?: number;
}

/** A warning written by the sweep. */
export interface KeyExpiryWarning {
  org: string;
  serviceAccount: string;
  keyId: string;
  thresholdDays: number;
  recipients: WarningRecipients;
  /** Outbox rows written (0 when nobody was warned). */
  deliveries: number;
}

type OutboxInsert = Parameters<typeof outboxRepository.insert>[1][number];

/** The outbox rows that warn the organization, and who they go to. */
async function warningRows(
  db: Db,
  key: DueKey,
  payload: object,
  trigger: string,
  now: Date,
  emailEnabled: boolean,
): Promise<{ recipients: WarningRecipients; rows: OutboxInsert[] }> {
  const base = { org_id: key.org_id, action_id: 'api_key_expiry', trigger, payload, created_at: now };
  const row = (r: Pick<OutboxInsert, 'source' | 'target_id' | 'target_position' | 'target'>) => ({
    ...base,
    ...r,
    id: newId(),
    next_attempt_at: now,
  });
  const targets = await notificationConfigsRepository.targets(db, key.org_id, 'api_key_expiry');
  if (targets.length > 0) {
    const rows = targets.map((t) =>
      row({
        source: 'notification_config',
        target_id: t.id,
        target_position: t.position,
        target: { type: t.type, webhook: t.webhook, emails: t.emails },
      }),
    );
    return { recipients: 'configured', rows };
  }
  const emails = emailEnabled
    ? await apiKeyExpiryRepository.adminEmails(db, key.org_id, MAX_DEFAULT_RECIPIENTS)
    : [];
  if (emails.length === 0) {
    return { recipients: 'none', rows: [] };
  }
  const target = { type: 'EMAIL' as const, webhook: null, emails };
  return {
    recipients: 'admins',
    rows: [row({ source: 'notification_default', target_id: null, target_position: 0, target })],
  };
}

/** Warns of one key in its own transaction; null when another round or replica already did. */
async function warn(
  app: AppScope,
  key: DueKey,
  now: Date,
  emailEnabled: boolean,
): Promise<KeyExpiryWarning | null> {
  const scope = scopeFor(app, { id: key.org_id, name: key.org_name }, now, 'verity');
  const event = keyExpiryEvent(
    {
      org: key.org_name,
      serviceAccount: key.service_account,
      keyId: key.key_id,
      description: key.description,
      expiresAt: epochSeconds(key.expires_at),
      expiresAtUtc: key.expires_at.toISOString(),
      thresholdDays: key.threshold_days,
    },
    epochSeconds(now),
  );
  return transact(scope, async ({ db }) => {
    const { recipients, rows } = await warningRows(db, key, event, event.trigger, now, emailEnabled);
    const fresh = await apiKeyExpiryRepository.record(db, {
      org_id: key.org_id,
      key_id: key.key_id,
      threshold_days: key.threshold_days,
      expires_at: key.expires_at,
      warned_at: now,
      recipients,
    });
    if (!fresh) {
      return null;
    }
    await outboxRepository.insert(db, rows);
    return {
      org: key.org_name,
      serviceAccount: key.service_account,
      keyId: key.key_id,
      thresholdDays: key.threshold_days,
      recipients,
      deliveries: rows.length,
    };
  });
}

/**
 * One sweep at `now()`: warns of every key due, a batch at a time, and announces what it wrote
 * (the notifier wakes, the warnings are counted). Returns the warnings written.
 */
export async function sweepKeyExpiry(
  app: AppScope,
  now: () => Date,
  options: KeyExpirySweepOptions,
): Promise<KeyExpiryWarning[]> {
  const batchSize = options.batchSize ?? 100;
  const written: KeyExpiryWarning[] = [];
  for (let batch = 0; batch < (options.maxBatches ?? 20); batch++) {
    const at = now();
    const due = await apiKeyExpiryRepository.due(app.db, at, {
      thresholdsDays: KEY_EXPIRY_THRESHOLDS_DAYS,
      windowMs: EXPIRED_WARNING_WINDOW_DAYS * DAY_MS,
      limit: batchSize,
    });
    for (const key of due) {
      const warning = await warn(app, key, at, options.emailEnabled);
      if (warning) {
        written.push(warning);
        app.events.committed([
          { type: 'key-expiry.warned', thresholdDays: warning.thresholdDays, recipients: warning.recipients },
          ...(warning.deliveries > 0
            ? [{ type: 'notifications.enqueued' as const, count: warning.deliveries }]
            : []),
        ]);
      }
    }
    if (due.length < batchSize) {
      break;
    }
  }
  return written;
}
