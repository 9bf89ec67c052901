/** Service accounts of an organization. */
import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { ServiceAccountsTable } from '../tables/identity.js';
import { insertUnlessNameTaken } from './queries.js';

export type ServiceAccountRow = Selectable<ServiceAccountsTable>;

/** The organization's service accounts. */
const accountsOf = (db: Db, orgId: string) =>
  db.selectFrom('service_accounts').selectAll().where('org_id', '=', orgId);

export const serviceAccountsRepository = {
  async list(db: Db, orgId: string): Promise<ServiceAccountRow[]> {
    return accountsOf(db, orgId).orderBy('name').execute();
  },

  async countInOrg(db: Db, orgId: string): Promise<number> {
    const row = await db
      .selectFrom('service_accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async findByName(db: Db, orgId: string, name: string): Promise<ServiceAccountRow | undefined> {
    return accountsOf(db, orgId).where('name', '=', name).executeTakeFirst();
  },

  /** Inserts; returns undefined when the name is taken. */
  async insert(
    db: Db,
    row: Omit<ServiceAccountRow, 'created_at' | 'display_name'> & { display_name?: string | null },
  ): Promise<ServiceAccountRow | undefined> {
    return insertUnlessNameTaken(db, 'service_accounts', row);
  },

  async update(
    db: Db,
    orgId: string,
    id: string,
    patch: Updateable<ServiceAccountsTable>,
  ): Promise<ServiceAccountRow> {
    return db
      .updateTable('service_accounts')
      .set(patch)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Deletes the account; its keys go with it. */
  async delete(db: Db, orgId: string, id: string): Promise<void> {
    await db.deleteFrom('service_accounts').where('org_id', '=', orgId).where('id', '=', id).execute();
  },
};
