/** Flows and the old names of renamed flows (spec rule 1). */
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { FlowsTable } from '../tables/evidence.js';

export type FlowRow = Selectable<FlowsTable>;

export interface FlowListFilter {
  search?: string | undefined;
  caseSensitive: boolean;
  tags: Array<{ key: string; value: string | null }>;
  sort: 'name' | 'latest_activity';
  direction: 'asc' | 'desc';
}

export const flowsRepository = {
  /** The flow named `name`, or the flow that was renamed away from it. */
  async findByName(db: Db, orgId: string, name: string): Promise<FlowRow | undefined> {
    const direct = await db
      .selectFrom('flows')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (direct) return direct;
    return db
      .selectFrom('flow_aliases as a')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
      .selectAll('f')
      .where('a.org_id', '=', orgId)
      .where('a.name', '=', name)
      .executeTakeFirst();
  },

  async findById(db: Db, orgId: string, id: string): Promise<FlowRow | undefined> {
    return db
      .selectFrom('flows')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<FlowRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('flows')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', 'in', [...ids])
      .execute();
  },

  /** Inserts unless the name is taken; undefined when it was. */
  async insert(
    db: Db,
    row: Omit<FlowRow, 'archived' | 'template' | 'legacy_template' | 'tags'> & {
      template: string | null;
      legacy_template: string | null;
      tags: string;
    },
  ): Promise<FlowRow | undefined> {
    return db
      .insertInto('flows')
      .values(row)
      .onConflict((oc) => oc.columns(['org_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  async update(db: Db, orgId: string, id: string, patch: Updateable<FlowsTable>): Promise<FlowRow> {
    return db
      .updateTable('flows')
      .set(patch)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Renames; the old name stays an alias of this flow, and the new name stops being anyone's alias. */
  async rename(db: Db, orgId: string, flow: FlowRow, newName: string, now: Date): Promise<void> {
    await db.deleteFrom('flow_aliases').where('org_id', '=', orgId).where('name', '=', newName).execute();
    await db
      .insertInto('flow_aliases')
      .values({ org_id: orgId, name: flow.name, flow_id: flow.id })
      .onConflict((oc) => oc.columns(['org_id', 'name']).doUpdateSet({ flow_id: flow.id }))
      .execute();
    await db
      .updateTable('flows')
      .set({ name: newName, last_modified_at: now })
      .where('org_id', '=', orgId)
      .where('id', '=', flow.id)
      .execute();
  },

  async list(
    db: Db,
    orgId: string,
    filter: FlowListFilter,
    page?: { limit: number; offset: number },
  ): Promise<{ rows: FlowRow[]; total: number }> {
    let q = db.selectFrom('flows').where('org_id', '=', orgId);
    if (filter.search) {
      const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = filter.caseSensitive ? q.where('name', 'like', pattern) : q.where('name', 'ilike', pattern);
    }
    for (const tag of filter.tags) {
      q =
        tag.value === null
          ? q.where(sql<boolean>`tags ? ${tag.key}`)
          : q.where(sql<boolean>`tags ->> ${tag.key} = ${tag.value}`);
    }
    const total = Number((await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    let rows = q.selectAll();
    if (filter.sort === 'latest_activity') {
      rows = rows.orderBy(sql`latest_activity_at ${sql.raw(filter.direction)} nulls last`).orderBy('name');
    } else {
      rows = rows.orderBy('name', filter.direction);
    }
    if (page) rows = rows.limit(page.limit).offset(page.offset);
    return { rows: await rows.execute(), total };
  },
};
