/**
 * Notification configs (per organization and type) with their targets and delivery records,
 * and their pending rows in the outbox.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import { newId } from '../../ids.js';
import type {
  NotificationConfigTargetsTable,
  NotificationConfigsTable,
  NotificationTypeColumn,
} from '../tables/notification-config.js';

export type NotificationConfigRow = Selectable<NotificationConfigsTable>;
export type NotificationConfigTargetRow = Selectable<NotificationConfigTargetsTable>;

export interface ConfigTargetInput {
  type: 'SLACK' | 'WEBHOOK' | 'EMAIL';
  webhook: string | null;
  payload_version: string | null;
  emails: string[] | null;
}

function sameTarget(a: ConfigTargetInput, b: NotificationConfigTargetRow): boolean {
  return (
    a.type === b.type &&
    a.webhook === b.webhook &&
    a.payload_version === b.payload_version &&
    JSON.stringify(a.emails) === JSON.stringify(b.emails)
  );
}

/** Undelivered outbox rows of a config's targets. */
const pendingRows = (db: Db, orgId: string, type: NotificationTypeColumn) =>
  db
    .deleteFrom('outbox')
    .where('org_id', '=', orgId)
    .where('source', '=', 'notification_config')
    .where('action_id', '=', type)
    .where('delivered_at', 'is', null)
    .where('failed_at', 'is', null);

export const notificationConfigsRepository = {
  async find(
    db: Db,
    orgId: string,
    type: NotificationTypeColumn,
  ): Promise<NotificationConfigRow | undefined> {
    return db
      .selectFrom('notification_configs')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type)
      .executeTakeFirst();
  },

  async targets(db: Db, orgId: string, type: NotificationTypeColumn): Promise<NotificationConfigTargetRow[]> {
    return db
      .selectFrom('notification_config_targets')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type)
      .orderBy('position')
      .execute();
  },

  /** Creates the config, or marks it modified; returns whether it was created. */
  async upsert(
    db: Db,
    row: { org_id: string; notification_type: NotificationTypeColumn; created_by: string; now: Date },
  ): Promise<boolean> {
    const inserted = await db
      .insertInto('notification_configs')
      .values({
        org_id: row.org_id,
        notification_type: row.notification_type,
        created_by: row.created_by,
        created_at: row.now,
        last_modified_at: row.now,
      })
      .onConflict((oc) => oc.columns(['org_id', 'notification_type']).doNothing())
      .returning('org_id')
      .executeTakeFirst();
    if (inserted) {
      return true;
    }
    await db
      .updateTable('notification_configs')
      .set({ last_modified_at: row.now })
      .where('org_id', '=', row.org_id)
      .where('notification_type', '=', row.notification_type)
      .execute();
    return false;
  },

  /**
   * Replaces the targets. A target that stays the same keeps its identity, delivery record and
   * pending deliveries; pending deliveries of targets that went away are dropped.
   */
  async replaceTargets(
    db: Db,
    orgId: string,
    type: NotificationTypeColumn,
    targets: readonly ConfigTargetInput[],
  ): Promise<void> {
    const unclaimed = await this.targets(db, orgId, type);
    await db
      .deleteFrom('notification_config_targets')
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type)
      .execute();
    const rows = targets.map((t, position) => {
      const i = unclaimed.findIndex((e) => sameTarget(t, e));
      const kept = i >= 0 ? unclaimed.splice(i, 1)[0] : undefined;
      return { t, position, kept };
    });
    const keptIds = rows.flatMap((r) => (r.kept ? [r.kept.id] : []));
    let stale = pendingRows(db, orgId, type);
    if (keptIds.length > 0) {
      stale = stale.where((eb) => eb.or([eb('target_id', 'is', null), eb('target_id', 'not in', keptIds)]));
    }
    await stale.execute();
    if (rows.length === 0) {
      return;
    }
    await db
      .insertInto('notification_config_targets')
      .values(
        rows.map(({ t, position, kept }) => ({
          org_id: orgId,
          notification_type: type,
          id: kept?.id ?? newId(),
          position,
          type: t.type,
          webhook: t.webhook,
          payload_version: t.payload_version,
          emails: t.emails ? JSON.stringify(t.emails) : null,
          last_success_at: kept?.last_success_at ?? null,
          last_failure_at: kept?.last_failure_at ?? null,
          last_error: kept?.last_error ?? null,
        })),
      )
      .execute();
  },

  /** Deletes the config, its targets and their pending deliveries. */
  async delete(db: Db, orgId: string, type: NotificationTypeColumn): Promise<void> {
    await pendingRows(db, orgId, type).execute();
    await db
      .deleteFrom('notification_configs')
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type)
      .execute();
  },

  /** One target of a config by its identity. */
  async findTarget(
    db: Db,
    orgId: string,
    type: string,
    targetId: string,
  ): Promise<NotificationConfigTargetRow | undefined> {
    return db
      .selectFrom('notification_config_targets')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type as NotificationTypeColumn)
      .where('id', '=', targetId)
      .executeTakeFirst();
  },

  /** Records a delivery result on the target it was for (a target removed since records nothing). */
  async recordDelivery(
    db: Db,
    orgId: string,
    type: string,
    targetId: string,
    result: { ok: true; at: Date } | { ok: false; at: Date; error: string },
  ): Promise<void> {
    await db
      .updateTable('notification_config_targets')
      .set(
        result.ok
          ? { last_success_at: result.at, last_error: null }
          : { last_failure_at: result.at, last_error: result.error.slice(0, 1000) },
      )
      .where('org_id', '=', orgId)
      .where('notification_type', '=', type as NotificationTypeColumn)
      .where('id', '=', targetId)
      .execute();
  },
};
