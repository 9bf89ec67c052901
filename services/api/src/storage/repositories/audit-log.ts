/** The audit log: one entry per write through the API and per sign-in, per organization. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import { countRowsUpTo } from './queries.js';
import type { AuditLogTable } from '../tables/people.js';

export type AuditEntryRow = Selectable<AuditLogTable>;
export type NewAuditEntry = Insertable<AuditLogTable>;

export interface AuditFilter {
  from?: Date;
  to?: Date;
  actor?: string;
  action?: string;
}

export interface AuditQuery extends AuditFilter {
  offset: number;
  limit: number;
}

/** The organization's entries that match the filter. */
function entriesOf(db: Db, orgId: string, q: AuditFilter) {
  let query = db.selectFrom('audit_log').where('org_id', '=', orgId);
  if (q.from) {
    query = query.where('at', '>=', q.from);
  }
  if (q.to) {
    query = query.where('at', '<=', q.to);
  }
  if (q.actor) {
    const actor = q.actor;
    query = query.where((eb) => eb.or([eb('actor_name', '=', actor), eb('actor_email', '=', actor)]));
  }
  if (q.action) {
    query = query.where('action', '=', q.action);
  }
  return query;
}

export const auditLogRepository = {
  async insert(db: Db, entries: NewAuditEntry[]): Promise<void> {
    if (entries.length > 0) {
      await db.insertInto('audit_log').values(entries).execute();
    }
  },

  /** Newest first, through the (org_id, at, id) index; `limit` rows at most (the offset is bounded by the route). */
  async list(db: Db, orgId: string, q: AuditQuery): Promise<AuditEntryRow[]> {
    return entriesOf(db, orgId, q)
      .selectAll()
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .offset(q.offset)
      .limit(q.limit)
      .execute();
  },

  /** The entries that match the filter, counted up to `cap + 1` (the log only grows). */
  async count(db: Db, orgId: string, q: AuditFilter, cap: number): Promise<number> {
    return countRowsUpTo(db, entriesOf(db, orgId, q).select('id'), cap);
  },
};
