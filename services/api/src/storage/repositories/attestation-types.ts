/** Custom attestation types and their immutable versions. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { CustomAttestationTypesTable, CustomAttestationTypeVersionsTable } from '../tables/evidence.js';
import { insertUnlessNameTaken } from './queries.js';

export type AttestationTypeRow = Selectable<CustomAttestationTypesTable>;
export type AttestationTypeVersionRow = Selectable<CustomAttestationTypeVersionsTable>;

/** The organization's custom attestation types. */
const typesOf = (db: Db, orgId: string) =>
  db.selectFrom('custom_attestation_types').selectAll().where('org_id', '=', orgId);

export const attestationTypesRepository = {
  async findByName(
    db: Db,
    orgId: string,
    name: string,
    lock = false,
  ): Promise<AttestationTypeRow | undefined> {
    let q = typesOf(db, orgId).where('name', '=', name);
    if (lock) {
      q = q.forUpdate();
    }
    return q.executeTakeFirst();
  },

  async insert(
    db: Db,
    row: Insertable<CustomAttestationTypesTable>,
  ): Promise<AttestationTypeRow | undefined> {
    return insertUnlessNameTaken(db, 'custom_attestation_types', row);
  },

  async touch(
    db: Db,
    orgId: string,
    id: string,
    patch: { last_modified_at: Date; description?: string | null; archived?: boolean },
  ): Promise<void> {
    await db
      .updateTable('custom_attestation_types')
      .set(patch)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .execute();
  },

  async insertVersion(db: Db, row: Insertable<CustomAttestationTypeVersionsTable>): Promise<void> {
    await db.insertInto('custom_attestation_type_versions').values(row).execute();
  },

  async latestVersionNumber(db: Db, orgId: string, typeId: string): Promise<number> {
    const row = await db
      .selectFrom('custom_attestation_type_versions')
      .select((eb) => eb.fn.max('version').as('v'))
      .where('org_id', '=', orgId)
      .where('type_id', '=', typeId)
      .executeTakeFirst();
    return Number(row?.v ?? 0);
  },

  async versions(db: Db, orgId: string, typeIds: readonly string[]): Promise<AttestationTypeVersionRow[]> {
    if (typeIds.length === 0) {
      return [];
    }
    return db
      .selectFrom('custom_attestation_type_versions')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('type_id', 'in', [...typeIds])
      .orderBy('version')
      .execute();
  },

  async list(db: Db, orgId: string): Promise<AttestationTypeRow[]> {
    return typesOf(db, orgId).orderBy('name').execute();
  },
};
