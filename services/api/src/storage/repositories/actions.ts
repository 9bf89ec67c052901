/** Actions (notification definitions), their targets with delivery records, and the outbox. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import { newId } from '../../ids.js';
import type {
  ActionTargetsTable,
  ActionsTable,
  OutboxTable,
  WebhookSigningKeysTable,
} from '../tables/runtime.js';
import { pushTo } from '../../group-by.js';

export type ActionRow = Selectable<ActionsTable>;
export type ActionTargetRow = Selectable<ActionTargetsTable>;
export type OutboxRow = Selectable<OutboxTable>;
export type SigningKeyRow = Selectable<WebhookSigningKeysTable>;

export interface TargetInput {
  type: 'SLACK' | 'WEBHOOK' | 'EMAIL';
  webhook: string | null;
  payload_version: string | null;
  emails: string[] | null;
  /** The target's own signing secret (webhooks); null signs with the organization's key. */
  secret: string | null;
}

function sameTarget(a: TargetInput, b: ActionTargetRow): boolean {
  return (
    a.type === b.type &&
    a.webhook === b.webhook &&
    a.payload_version === b.payload_version &&
    JSON.stringify(a.emails) === JSON.stringify(b.emails)
  );
}

/** The organization's actions. */
const actionsOf = (db: Db, orgId: string) => db.selectFrom('actions').selectAll().where('org_id', '=', orgId);

/** An update of one action. */
const updateAction = (db: Db, orgId: string, id: string) =>
  db.updateTable('actions').where('org_id', '=', orgId).where('id', '=', id);

export const actionsRepository = {
  async findByName(db: Db, orgId: string, name: string): Promise<ActionRow | undefined> {
    return actionsOf(db, orgId).where('name', '=', name).executeTakeFirst();
  },

  async findByNumber(db: Db, orgId: string, number: number): Promise<ActionRow | undefined> {
    return actionsOf(db, orgId).where('number', '=', number).executeTakeFirst();
  },

  async list(db: Db, orgId: string, type?: 'env' | 'flow'): Promise<ActionRow[]> {
    let q = actionsOf(db, orgId);
    if (type) {
      q = q.where('type', '=', type);
    }
    return q.orderBy('number').execute();
  },

  async targets(
    db: Db,
    orgId: string,
    actionIds: readonly string[],
  ): Promise<Map<string, ActionTargetRow[]>> {
    const out = new Map<string, ActionTargetRow[]>();
    if (actionIds.length === 0) {
      return out;
    }
    const rows = await db
      .selectFrom('action_targets')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('action_id', 'in', [...actionIds])
      .orderBy('action_id')
      .orderBy('position')
      .execute();
    for (const r of rows) {
      pushTo(out, r.action_id, r);
    }
    return out;
  },

  /** Inserts a new action with the next number of the org; a concurrent insert fails with 23505 (retryable). */
  async insert(
    db: Db,
    row: Omit<ActionRow, 'number' | 'environments' | 'flows' | 'triggers'> & {
      environments: string[];
      flows: string[];
      triggers: string[];
    },
  ): Promise<ActionRow> {
    return db
      .insertInto('actions')
      .values({
        ...row,
        environments: JSON.stringify(row.environments),
        flows: JSON.stringify(row.flows),
        triggers: JSON.stringify(row.triggers),
        number: sql<number>`(select coalesce(max(number), 0) + 1 from actions where org_id = ${row.org_id})`,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async update(
    db: Db,
    orgId: string,
    id: string,
    patch: {
      name: string;
      environments: string[];
      flows: string[];
      triggers: string[];
      last_modified_at: Date;
    },
  ): Promise<void> {
    await updateAction(db, orgId, id)
      .set({
        name: patch.name,
        environments: JSON.stringify(patch.environments),
        flows: JSON.stringify(patch.flows),
        triggers: JSON.stringify(patch.triggers),
        last_modified_at: patch.last_modified_at,
      })
      .execute();
  },

  /**
   * Replaces the targets. A target that stays the same (kind, address, payload version,
   * e-mails) keeps its identity, its delivery record and its pending notifications; pending
   * notifications of targets that went away are dropped, so nothing is sent to a replaced address.
   */
  async replaceTargets(
    db: Db,
    orgId: string,
    actionId: string,
    targets: readonly TargetInput[],
  ): Promise<void> {
    const existing = (await this.targets(db, orgId, [actionId])).get(actionId) ?? [];
    await db
      .deleteFrom('action_targets')
      .where('org_id', '=', orgId)
      .where('action_id', '=', actionId)
      .execute();
    const unclaimed = [...existing];
    const rows = targets.map((t, position) => {
      const i = unclaimed.findIndex((e) => sameTarget(t, e));
      const kept = i >= 0 ? unclaimed.splice(i, 1)[0] : undefined;
      return { t, position, kept };
    });
    const keptIds = rows.flatMap((r) => (r.kept ? [r.kept.id] : []));
    let stale = db
      .deleteFrom('outbox')
      .where('org_id', '=', orgId)
      .where('action_id', '=', actionId)
      .where('delivered_at', 'is', null)
      .where('failed_at', 'is', null);
    if (keptIds.length > 0) {
      stale = stale.where((eb) => eb.or([eb('target_id', 'is', null), eb('target_id', 'not in', keptIds)]));
    }
    await stale.execute();
    if (targets.length === 0) {
      return;
    }
    await db
      .insertInto('action_targets')
      .values(
        rows.map(({ t, position, kept }) => {
          return {
            org_id: orgId,
            action_id: actionId,
            id: kept?.id ?? newId(),
            position,
            type: t.type,
            webhook: t.webhook,
            payload_version: t.payload_version,
            emails: t.emails ? JSON.stringify(t.emails) : null,
            secret: t.secret,
            last_success_at: kept?.last_success_at ?? null,
            last_failure_at: kept?.last_failure_at ?? null,
            last_error: kept?.last_error ?? null,
          };
        }),
      )
      .execute();
  },

  async delete(db: Db, orgId: string, id: string): Promise<void> {
    await db
      .deleteFrom('outbox')
      .where('org_id', '=', orgId)
      .where('action_id', '=', id)
      .where('delivered_at', 'is', null)
      .execute();
    await db.deleteFrom('actions').where('org_id', '=', orgId).where('id', '=', id).execute();
  },

  /** Renames an environment inside every action that names it. */
  async renameEnvironment(db: Db, orgId: string, from: string, to: string): Promise<void> {
    const rows = await db
      .selectFrom('actions')
      .select(['id', 'environments'])
      .where('org_id', '=', orgId)
      .where(sql<boolean>`environments ? ${from}`)
      .execute();
    for (const r of rows) {
      await updateAction(db, orgId, r.id)
        .set({ environments: JSON.stringify(r.environments.map((e) => (e === from ? to : e))) })
        .execute();
    }
  },

  /** One target of an action by its identity. */
  async findTarget(
    db: Db,
    orgId: string,
    actionId: string,
    targetId: string,
  ): Promise<ActionTargetRow | undefined> {
    return db
      .selectFrom('action_targets')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('action_id', '=', actionId)
      .where('id', '=', targetId)
      .executeTakeFirst();
  },

  /** Records a delivery result on the target it was for (a target removed since records nothing). */
  async recordDelivery(
    db: Db,
    orgId: string,
    actionId: string,
    targetId: string,
    result: { ok: true; at: Date } | { ok: false; at: Date; error: string },
  ): Promise<void> {
    await db
      .updateTable('action_targets')
      .set(
        result.ok
          ? { last_success_at: result.at, last_error: null }
          : { last_failure_at: result.at, last_error: result.error.slice(0, 1000) },
      )
      .where('org_id', '=', orgId)
      .where('action_id', '=', actionId)
      .where('id', '=', targetId)
      .execute();
  },
};

export const outboxRepository = {
  async insert(
    db: Db,
    rows: ReadonlyArray<
      Omit<
        OutboxRow,
        | 'attempts'
        | 'lease_until'
        | 'delivered_at'
        | 'failed_at'
        | 'last_error'
        | 'target'
        | 'payload'
        | 'source'
      > & {
        target: object;
        payload: object;
        /** Where the target lives; an action's by default. */
        source?: OutboxRow['source'];
      }
    >,
  ): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    await db
      .insertInto('outbox')
      .values(
        rows.map((r) => ({ ...r, target: JSON.stringify(r.target), payload: JSON.stringify(r.payload) })),
      )
      .execute();
  },

  /**
   * Claims due rows for `leaseMs`: `FOR UPDATE SKIP LOCKED` lets replicas claim side by side
   * without taking the same row, and the lease lets a worker that dies release its rows.
   */
  async claim(
    db: Db,
    now: Date,
    leaseMs: number,
    limit: number,
    skipOrgs: readonly string[] = [],
  ): Promise<OutboxRow[]> {
    return db.transaction().execute(async (tx) => {
      let query = tx
        .selectFrom('outbox')
        .select(['org_id', 'id'])
        .where('delivered_at', 'is', null)
        .where('failed_at', 'is', null)
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]));
      if (skipOrgs.length > 0) {
        query = query.where('org_id', 'not in', [...skipOrgs]);
      }
      const due = await query.orderBy('next_attempt_at').limit(limit).forUpdate().skipLocked().execute();
      if (due.length === 0) {
        return [];
      }
      const claimed: OutboxRow[] = [];
      for (const row of due) {
        const updated = await tx
          .updateTable('outbox')
          .set({ lease_until: new Date(now.getTime() + leaseMs), attempts: sql`attempts + 1` })
          .where('org_id', '=', row.org_id)
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        claimed.push(updated);
      }
      return claimed;
    });
  },

  async markDelivered(db: Db, row: OutboxRow, at: Date): Promise<void> {
    await db
      .updateTable('outbox')
      .set({ delivered_at: at, lease_until: null, last_error: null })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.id)
      .execute();
  },

  /** Drops a row whose target no longer exists. */
  async drop(db: Db, row: OutboxRow): Promise<void> {
    await db.deleteFrom('outbox').where('org_id', '=', row.org_id).where('id', '=', row.id).execute();
  },

  async markFailed(db: Db, row: OutboxRow, error: string, retryAt: Date | null, at: Date): Promise<void> {
    await db
      .updateTable('outbox')
      .set({
        lease_until: null,
        last_error: error.slice(0, 1000),
        ...(retryAt ? { next_attempt_at: retryAt } : { failed_at: at }),
      })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.id)
      .execute();
  },

  /**
   * Deletes up to `limit` notifications delivered or given up before `before`; returns how many.
   * Pending rows are never touched. Each target keeps its last success and failure.
   */
  async purgeFinished(db: Db, before: Date, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('outbox')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('outbox')
          .select('id')
          .where((w) => w.or([w('delivered_at', '<', before), w('failed_at', '<', before)]))
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** The earliest time a row becomes due, if any is pending. */
  async nextDue(db: Db): Promise<Date | undefined> {
    const row = await db
      .selectFrom('outbox')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('delivered_at', 'is', null)
      .where('failed_at', 'is', null)
      .executeTakeFirst();
    return row?.at ? new Date(row.at) : undefined;
  },

  async forOrg(db: Db, orgId: string): Promise<OutboxRow[]> {
    return db.selectFrom('outbox').selectAll().where('org_id', '=', orgId).orderBy('created_at').execute();
  },
};

export const signingKeysRepository = {
  async find(db: Db, orgId: string): Promise<SigningKeyRow | undefined> {
    return db.selectFrom('webhook_signing_keys').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  },

  /** Stores `key` as the org's key unless it has one; returns the key in force. */
  async ensure(db: Db, orgId: string, key: string, now: Date): Promise<SigningKeyRow> {
    await db
      .insertInto('webhook_signing_keys')
      .values({ org_id: orgId, key, created_at: now, previous_key: null, rotated_at: null })
      .onConflict((oc) => oc.column('org_id').doNothing())
      .execute();
    return (await this.find(db, orgId))!;
  },

  /** Makes `key` the org's key and keeps the one it replaces as the previous key. */
  async rotate(db: Db, orgId: string, key: string, now: Date): Promise<SigningKeyRow> {
    return db
      .insertInto('webhook_signing_keys')
      .values({ org_id: orgId, key, created_at: now, previous_key: null, rotated_at: null })
      .onConflict((oc) =>
        oc.column('org_id').doUpdateSet({
          previous_key: sql<string>`webhook_signing_keys.key`,
          rotated_at: now,
          key,
          created_at: now,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },
};
