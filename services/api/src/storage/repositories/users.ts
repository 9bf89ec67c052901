/** Users and their memberships in organizations. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { Role, UsersTable } from '../tables/identity.js';

export type UserRow = Selectable<UsersTable>;

export const usersRepository = {
  async findByName(db: Db, name: string): Promise<UserRow | undefined> {
    return db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
  },

  async findById(db: Db, id: string): Promise<UserRow | undefined> {
    return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  },

  async create(db: Db, user: { id: string; name: string; email: string | null }): Promise<UserRow> {
    return db
      .insertInto('users')
      .values({ ...user, default_org_id: null })
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async setDefaultOrg(db: Db, userId: string, orgId: string): Promise<void> {
    await db.updateTable('users').set({ default_org_id: orgId }).where('id', '=', userId).execute();
  },

  /** The user's role in an org found by name, with the org; undefined when not a member. */
  async membershipByOrgName(
    db: Db,
    userId: string,
    orgName: string,
  ): Promise<
    { role: Role; org_id: string; org_name: string; experimental_features_enabled: boolean } | undefined
  > {
    return db
      .selectFrom('memberships')
      .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
      .select([
        'memberships.role',
        'orgs.id as org_id',
        'orgs.name as org_name',
        'orgs.experimental_features_enabled',
      ])
      .where('memberships.user_id', '=', userId)
      .where('orgs.name', '=', orgName)
      .executeTakeFirst();
  },

  async upsertMembership(db: Db, orgId: string, userId: string, role: Role): Promise<void> {
    await db
      .insertInto('memberships')
      .values({ org_id: orgId, user_id: userId, role })
      .onConflict((oc) => oc.columns(['org_id', 'user_id']).doUpdateSet({ role }))
      .execute();
  },
};
