/**
 * What the API-key expiry sweep reads and writes: service-account keys that reached a warning
 * threshold without a warning for it (one indexed range over expiring keys, migration 0386),
 * the durable record of warnings, and the e-mail addresses of an organization's admins.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.js';
import type { WarningRecipients } from '../tables/notification-config.js';

/** A key that reached a threshold, with the names a warning shows. */
export interface DueKey {
  org_id: string;
  org_name: string;
  key_id: string;
  description: string;
  service_account: string;
  expires_at: Date;
  threshold_days: number;
}

const DAY_MS = 86_400_000;

/**
 * The threshold each key has reached at `now`, in SQL: the smallest threshold whose moment
 * (expiry minus that many days) has come (domain/api-key-expiry.ts).
 */
function thresholdAt(now: Date, thresholdsDays: readonly number[]): RawBuilder<number> {
  const ascending = [...thresholdsDays].sort((a, b) => a - b);
  const last = ascending.at(-1)!;
  const cases = ascending
    .slice(0, -1)
    .map((days) => sql`when k.expires_at <= ${new Date(now.getTime() + days * DAY_MS)} then ${days}::int`);
  return sql<number>`(case ${sql.join(cases, sql` `)} else ${last}::int end)`;
}

export const apiKeyExpiryRepository = {
  /**
   * Up to `limit` live service-account keys (not revoked, not replaced by a rotation) whose
   * expiry lies between `now - windowMs` and the most distant threshold, that have no warning
   * at their threshold or a nearer one. Ordered by expiry, so the most urgent come first.
   */
  async due(
    db: Db,
    now: Date,
    options: { thresholdsDays: readonly number[]; windowMs: number; limit: number },
  ): Promise<DueKey[]> {
    const furthest = Math.max(...options.thresholdsDays);
    const threshold = thresholdAt(now, options.thresholdsDays);
    const rows = await sql<DueKey>`
      select k.org_id, o.name as org_name, k.id as key_id, k.description, sa.name as service_account,
        k.expires_at, ${threshold} as threshold_days
      from api_keys k
      join service_accounts sa on sa.org_id = k.org_id and sa.id = k.service_account_id
      join orgs o on o.id = k.org_id
      where k.service_account_id is not null and k.revoked_at is null and k.expires_at is not null
        and k.expires_at <= ${new Date(now.getTime() + furthest * DAY_MS)}
        and k.expires_at > ${new Date(now.getTime() - options.windowMs)}
        and not exists (select 1 from api_keys r where r.rotated_from = k.id)
        and not exists (
          select 1 from api_key_expiry_warnings w
          where w.org_id = k.org_id and w.key_id = k.id and w.threshold_days <= ${threshold}
        )
      order by k.expires_at, k.id
      limit ${options.limit}`.execute(db);
    return rows.rows.map((r) => ({ ...r, expires_at: new Date(r.expires_at) }));
  },

  /**
   * Records the warning for a key at a threshold; false when it is recorded already (another
   * replica, or an earlier round, wrote it), and then nothing must be sent.
   */
  async record(
    db: Db,
    row: {
      org_id: string;
      key_id: string;
      threshold_days: number;
      expires_at: Date;
      warned_at: Date;
      recipients: WarningRecipients;
    },
  ): Promise<boolean> {
    const inserted = await db
      .insertInto('api_key_expiry_warnings')
      .values(row)
      .onConflict((oc) => oc.columns(['org_id', 'key_id', 'threshold_days']).doNothing())
      .returning('key_id')
      .executeTakeFirst();
    return inserted !== undefined;
  },

  /** The warnings recorded for a key, by threshold. */
  async forKey(db: Db, orgId: string, keyId: string): Promise<Array<{ threshold_days: number }>> {
    return db
      .selectFrom('api_key_expiry_warnings')
      .select('threshold_days')
      .where('org_id', '=', orgId)
      .where('key_id', '=', keyId)
      .orderBy('threshold_days', 'desc')
      .execute();
  },

  /** E-mail addresses of the organization's admins (users with an address), at most `limit`. */
  async adminEmails(db: Db, orgId: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.email')
      .where('memberships.org_id', '=', orgId)
      .where('memberships.role', '=', 'admin')
      .where('users.email', 'is not', null)
      .orderBy('users.email')
      .limit(limit)
      .execute();
    return rows.flatMap((r) => (r.email ? [r.email] : []));
  },
};
