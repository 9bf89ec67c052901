/** Organizations. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { OrgsTable } from '../tables/identity.js';

export type OrgRow = Selectable<OrgsTable>;

export const orgsRepository = {
  async findByName(db: Db, name: string): Promise<OrgRow | undefined> {
    return db.selectFrom('orgs').selectAll().where('name', '=', name).executeTakeFirst();
  },

  /** The organizations of these names that exist. */
  async findByNames(db: Db, names: readonly string[]): Promise<OrgRow[]> {
    if (names.length === 0) {
      return [];
    }
    return db
      .selectFrom('orgs')
      .selectAll()
      .where('name', 'in', [...names])
      .execute();
  },

  async findById(db: Db, id: string): Promise<OrgRow | undefined> {
    return db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** Whether the database holds any organization at all. */
  async any(db: Db): Promise<boolean> {
    const row = await db.selectFrom('orgs').select('id').limit(1).executeTakeFirst();
    return row !== undefined;
  },

  async list(db: Db): Promise<OrgRow[]> {
    return db.selectFrom('orgs').selectAll().orderBy('name').execute();
  },

  /** Inserts unless an org of that name exists; returns the org either way and whether it was new. */
  async ensure(
    db: Db,
    org: { id: string; name: string; display_name: string },
  ): Promise<{ org: OrgRow; created: boolean }> {
    const inserted = await db
      .insertInto('orgs')
      .values(org)
      .onConflict((oc) => oc.column('name').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      return { org: inserted, created: true };
    }
    const existing = await db
      .selectFrom('orgs')
      .selectAll()
      .where('name', '=', org.name)
      .executeTakeFirstOrThrow();
    return { org: existing, created: false };
  },

  async setExperimentalFeatures(db: Db, orgId: string, enabled: boolean): Promise<void> {
    await db
      .updateTable('orgs')
      .set({ experimental_features_enabled: enabled })
      .where('id', '=', orgId)
      .execute();
  },
};
