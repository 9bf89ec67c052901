/** Allow-listed fingerprints per environment. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { AllowlistEntriesTable } from '../tables/runtime.js';

export type AllowlistRow = Selectable<AllowlistEntriesTable>;

/** The allow-list of one environment. */
const entriesOf = (db: Db, orgId: string, envId: string) =>
  db.selectFrom('allowlist_entries').where('org_id', '=', orgId).where('environment_id', '=', envId);

export const allowlistsRepository = {
  /** Adds or updates an entry; returns true when it is new. */
  async upsert(db: Db, row: AllowlistRow): Promise<boolean> {
    const existing = await entriesOf(db, row.org_id, row.environment_id)
      .select('id')
      .where('fingerprint', '=', row.fingerprint)
      .executeTakeFirst();
    await db
      .insertInto('allowlist_entries')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['org_id', 'environment_id', 'fingerprint']).doUpdateSet({
          artifact_name: row.artifact_name,
          description: row.description,
        }),
      )
      .execute();
    return existing === undefined;
  },

  async find(db: Db, orgId: string, envId: string, fingerprint: string): Promise<AllowlistRow | undefined> {
    return entriesOf(db, orgId, envId).selectAll().where('fingerprint', '=', fingerprint).executeTakeFirst();
  },

  async fingerprints(db: Db, orgId: string, envId: string): Promise<Set<string>> {
    const rows = await entriesOf(db, orgId, envId).select('fingerprint').execute();
    return new Set(rows.map((r) => r.fingerprint));
  },

  async list(db: Db, orgId: string): Promise<Array<AllowlistRow & { environment_name: string }>> {
    return db
      .selectFrom('allowlist_entries as a')
      .innerJoin('environments as e', (j) =>
        j.onRef('e.org_id', '=', 'a.org_id').onRef('e.id', '=', 'a.environment_id'),
      )
      .selectAll('a')
      .select('e.name as environment_name')
      .where('a.org_id', '=', orgId)
      .orderBy('e.name')
      .orderBy('a.created_at')
      .execute();
  },
};
