/** Flows and the old names of renamed flows (spec rule 1). */
import { sql, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import { containsPattern } from '../like-pattern.js';
import type { ComplianceStateValue, FlowsTable } from '../tables/evidence.js';
import { countRows, insertUnlessNameTaken } from './queries.js';

export type FlowRow = Selectable<FlowsTable>;
/** A flow with its latest activity: the last change of any of its trails, and that trail's state. */
export type FlowWithActivity = FlowRow & {
  latest_activity_at: Date | null;
  latest_state: ComplianceStateValue | null;
};

/** The id of the flow with this name, or of the flow that had it before a rename (its alias). */
export const flowIdByName = (orgId: RawBuilder<unknown>, name: RawBuilder<unknown>) => sql`
  select id from (
    select id, 0 as p from flows where org_id = ${orgId} and name = ${name}
    union all
    select flow_id, 1 from flow_aliases where org_id = ${orgId} and name = ${name}
  ) named order by p limit 1`;

/** The organization's flows. */
const flowsOf = (db: Db, orgId: string) => db.selectFrom('flows').selectAll().where('org_id', '=', orgId);

/** An update of one flow. */
const updateFlow = (db: Db, orgId: string, id: string) =>
  db.updateTable('flows').where('org_id', '=', orgId).where('id', '=', id);

const withActivity = (db: Db) =>
  db
    .selectFrom('flows as f')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('trails as t')
          .select(['t.last_modified_at as latest_activity_at', 't.compliance_state as latest_state'])
          .whereRef('t.org_id', '=', 'f.org_id')
          .whereRef('t.flow_id', '=', 'f.id')
          .orderBy('t.last_modified_at', 'desc')
          .limit(1)
          .as('lt'),
      (join) => join.onTrue(),
    )
    .selectAll('f')
    .select(['lt.latest_activity_at', 'lt.latest_state']);

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
    const direct = await flowsRepository.findByOwnName(db, orgId, name);
    if (direct) {
      return direct;
    }
    return db
      .selectFrom('flow_aliases as a')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
      .selectAll('f')
      .where('a.org_id', '=', orgId)
      .where('a.name', '=', name)
      .executeTakeFirst();
  },

  /** The flow whose current name is `name`; an old name of a renamed flow does not count. */
  async findByOwnName(db: Db, orgId: string, name: string): Promise<FlowRow | undefined> {
    return flowsOf(db, orgId).where('name', '=', name).executeTakeFirst();
  },

  /** The old name stops answering for the flow renamed away from it: another flow has taken it. */
  async releaseAlias(db: Db, orgId: string, name: string): Promise<void> {
    await db.deleteFrom('flow_aliases').where('org_id', '=', orgId).where('name', '=', name).execute();
  },

  /** A flow by id with its latest activity. */
  async findWithActivity(db: Db, orgId: string, id: string): Promise<FlowWithActivity | undefined> {
    return withActivity(db).where('f.org_id', '=', orgId).where('f.id', '=', id).executeTakeFirst();
  },

  async findById(db: Db, orgId: string, id: string): Promise<FlowRow | undefined> {
    return flowsOf(db, orgId).where('id', '=', id).executeTakeFirst();
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<FlowRow[]> {
    if (ids.length === 0) {
      return [];
    }
    return flowsOf(db, orgId)
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
    return insertUnlessNameTaken(db, 'flows', row);
  },

  async update(db: Db, orgId: string, id: string, patch: Updateable<FlowsTable>): Promise<FlowRow> {
    return updateFlow(db, orgId, id).set(patch).returningAll().executeTakeFirstOrThrow();
  },

  /** Renames; the old name stays an alias of this flow, and the new name stops being anyone's alias. */
  async rename(db: Db, orgId: string, flow: FlowRow, newName: string, now: Date): Promise<void> {
    await flowsRepository.releaseAlias(db, orgId, newName);
    await db
      .insertInto('flow_aliases')
      .values({ org_id: orgId, name: flow.name, flow_id: flow.id })
      .onConflict((oc) => oc.columns(['org_id', 'name']).doUpdateSet({ flow_id: flow.id }))
      .execute();
    await updateFlow(db, orgId, flow.id).set({ name: newName, last_modified_at: now }).execute();
  },

  async list(
    db: Db,
    orgId: string,
    filter: FlowListFilter,
    page?: { limit: number; offset: number },
  ): Promise<{ rows: FlowWithActivity[]; total: number }> {
    let q = withActivity(db).where('f.org_id', '=', orgId);
    if (filter.search) {
      const pattern = containsPattern(filter.search);
      q = filter.caseSensitive ? q.where('f.name', 'like', pattern) : q.where('f.name', 'ilike', pattern);
    }
    for (const tag of filter.tags) {
      q =
        tag.value === null
          ? q.where(sql<boolean>`f.tags ? ${tag.key}`)
          : q.where(sql<boolean>`f.tags ->> ${tag.key} = ${tag.value}`);
    }
    const total = await countRows(q);
    let rows = q;
    if (filter.sort === 'latest_activity') {
      rows = rows
        .orderBy(sql`lt.latest_activity_at ${sql.raw(filter.direction)} nulls last`)
        .orderBy('f.name');
    } else {
      rows = rows.orderBy('f.name', filter.direction);
    }
    if (page) {
      rows = rows.limit(page.limit).offset(page.offset);
    }
    return { rows: await rows.execute(), total };
  },
};
