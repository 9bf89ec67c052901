/**
 * Writing notifications: an event that matches actions becomes one outbox row per target, in the
 * transaction of the change itself (semantics.md section 7), so a rollback sends nothing and a
 * commit loses nothing. Delivery is the notifier's (notify/).
 */
import { newId } from '../../ids.js';
import { actionsFor, type NotificationEvent } from '../../domain/triggers.js';
import type { Db } from '../../storage/database.js';
import { actionsRepository, outboxRepository, type ActionRow } from '../../storage/repositories/actions.js';

/**
 * Fans events out to the org's matching actions and targets; returns the rows written. `known`:
 * the org's actions when the caller already has them. `events` may be a function making them,
 * called only when the org has actions: a snapshot at the report cap is 100,000 events, which an
 * org without actions need not build.
 */
export async function enqueueNotifications(
  db: Db,
  orgId: string,
  eventsOrMake: readonly NotificationEvent[] | (() => readonly NotificationEvent[]),
  now: Date,
  known?: readonly ActionRow[],
): Promise<number> {
  if (Array.isArray(eventsOrMake) && eventsOrMake.length === 0) {
    return 0;
  }
  const actions = known ?? (await actionsRepository.list(db, orgId));
  if (actions.length === 0) {
    return 0;
  }
  const events = typeof eventsOrMake === 'function' ? eventsOrMake() : eventsOrMake;
  const matched = events.map((event) => ({ event, actions: actionsFor(actions, event) }));
  const ids = [...new Set(matched.flatMap((m) => m.actions.map((a) => a.id)))];
  if (ids.length === 0) {
    return 0;
  }
  const targets = await actionsRepository.targets(db, orgId, ids);
  const rows = matched.flatMap(({ event, actions: hit }) =>
    hit.flatMap((action) =>
      (targets.get(action.id) ?? []).map((t) => ({
        org_id: orgId,
        id: newId(),
        action_id: action.id,
        target_position: t.position,
        target_id: t.id,
        target: { type: t.type, webhook: t.webhook, emails: t.emails },
        trigger: event.trigger,
        payload: event,
        created_at: now,
        next_attempt_at: now,
      })),
    ),
  );
  await outboxRepository.insert(db, rows);
  return rows.length;
}
