/**
 * Witnesses: each new checkpoint of an organization's log goes to the targets of its
 * `log_checkpoint` notification config (signed webhooks, Slack, e-mail), through the outbox and
 * the notifier's retries. A witness keeps the checkpoints it received and checks each next one is
 * consistent with them (`npm run verify -- watch` does the same by polling).
 */
import type { NotificationEvent } from '../../domain/triggers.js';
import { newId } from '../../ids.js';
import { outboxRepository } from '../../storage/repositories/actions.js';
import { notificationConfigsRepository } from '../../storage/repositories/notification-configs.js';
import type { Db } from '../../storage/database.js';
import { epochSeconds } from '../../time.js';

/** Writes the checkpoint's deliveries to the outbox; returns how many. */
export async function announceCheckpoint(
  db: Db,
  org: { id: string; name: string },
  sequenced: { size: number; checkpoint: string },
  now: Date,
): Promise<number> {
  const targets = await notificationConfigsRepository.targets(db, org.id, 'log_checkpoint');
  if (targets.length === 0) {
    return 0;
  }
  const origin = sequenced.checkpoint.split('\n', 1)[0] ?? '';
  const event: NotificationEvent = {
    trigger: 'ON_LOG_CHECKPOINT',
    org: org.name,
    timestamp: epochSeconds(now),
    description: `The transparency log of ${org.name} has ${sequenced.size} entries`,
    checkpoint: { origin, tree_size: sequenced.size, note: sequenced.checkpoint },
  };
  await outboxRepository.insert(
    db,
    targets.map((t) => ({
      id: newId(),
      org_id: org.id,
      action_id: 'log_checkpoint',
      trigger: event.trigger,
      payload: event,
      created_at: now,
      next_attempt_at: now,
      source: 'notification_config' as const,
      target_id: t.id,
      target_position: t.position,
      target: { type: t.type, webhook: t.webhook, emails: t.emails },
    })),
  );
  return targets.length;
}
