/** Controls (beta) and their versions. */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../database.js';
import { containsPattern } from '../like-pattern.js';
import type { ControlsTable, ControlVersionsTable } from '../tables/evidence.js';
import { countRows } from './queries.js';

export type ControlRow = Selectable<ControlsTable>;
export type ControlVersionRow = Selectable<ControlVersionsTable>;

export const controlsRepository = {
  async find(db: Db, orgId: string, identifier: string, lock = false): Promise<ControlRow | undefined> {
    let q = db
      .selectFrom('controls')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('identifier', '=', identifier);
    if (lock) {
      q = q.forUpdate();
    }
    return q.executeTakeFirst();
  },

  async insert(db: Db, row: Insertable<ControlsTable>): Promise<ControlRow | undefined> {
    return db
      .insertInto('controls')
      .values(row)
      .onConflict((oc) => oc.columns(['org_id', 'identifier']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  async update(db: Db, orgId: string, id: string, patch: Updateable<ControlsTable>): Promise<void> {
    await db.updateTable('controls').set(patch).where('org_id', '=', orgId).where('id', '=', id).execute();
  },

  async insertVersion(db: Db, row: Insertable<ControlVersionsTable>): Promise<void> {
    await db.insertInto('control_versions').values(row).execute();
  },

  async latestVersions(db: Db, orgId: string, controlIds: readonly string[]): Promise<ControlVersionRow[]> {
    if (controlIds.length === 0) {
      return [];
    }
    return db
      .selectFrom('control_versions')
      .selectAll()
      .distinctOn('control_id')
      .where('org_id', '=', orgId)
      .where('control_id', 'in', [...controlIds])
      .orderBy('control_id')
      .orderBy('version', 'desc')
      .execute();
  },

  async version(
    db: Db,
    orgId: string,
    controlId: string,
    version: number,
  ): Promise<ControlVersionRow | undefined> {
    return db
      .selectFrom('control_versions')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('control_id', '=', controlId)
      .where('version', '=', version)
      .executeTakeFirst();
  },

  async list(
    db: Db,
    orgId: string,
    filter: {
      archived: boolean;
      search?: string | undefined;
      tags: Array<{ key: string; value: string | null }>;
    },
    page: { limit: number; offset: number },
    direction: 'asc' | 'desc',
  ): Promise<{ rows: ControlRow[]; total: number }> {
    let q = db
      .selectFrom('controls as c')
      .where('c.org_id', '=', orgId)
      .where('c.archived', '=', filter.archived);
    if (filter.search) {
      const pattern = containsPattern(filter.search);
      q = q.where((eb) =>
        eb.or([
          eb('c.identifier', 'ilike', pattern),
          eb.exists(
            eb
              .selectFrom('control_versions as v')
              .select('v.version')
              .whereRef('v.org_id', '=', 'c.org_id')
              .whereRef('v.control_id', '=', 'c.id')
              .where('v.name', 'ilike', pattern),
          ),
        ]),
      );
    }
    for (const tag of filter.tags) {
      q = q.where((eb) =>
        tag.value === null
          ? eb(eb.ref('c.tags', '->>').key(tag.key), 'is not', null)
          : eb(eb.ref('c.tags', '->>').key(tag.key), '=', tag.value),
      );
    }
    const total = await countRows(q);
    const rows = await q
      .selectAll('c')
      .orderBy('c.identifier', direction)
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { rows, total };
  },
};
