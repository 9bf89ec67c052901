/** Trails of flows. */
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { TrailsTable } from '../tables/evidence.js';
import { countRows } from './queries.js';

export type TrailRow = Selectable<TrailsTable>;
export type NewTrailRow = Omit<
  TrailRow,
  'template' | 'git_commit_info' | 'repo_info' | 'external_urls' | 'user_data' | 'compliance'
> & {
  template: string | null;
  git_commit_info: string | null;
  repo_info: string | null;
  external_urls: string | null;
  user_data: string | null;
  compliance: string;
};

export interface TrailListFilter {
  flowId?: string | undefined;
  fingerprintPrefix?: string | undefined;
  flowTag?: { key: string; value: string } | undefined;
}

/** The organization's trails. */
const trailsOf = (db: Db, orgId: string) => db.selectFrom('trails').selectAll().where('org_id', '=', orgId);

export const trailsRepository = {
  /** The trail; with `lock`, locked for the rest of the transaction so its evaluation sees every write. */
  async find(
    db: Db,
    orgId: string,
    flowId: string,
    name: string,
    lock = false,
  ): Promise<TrailRow | undefined> {
    const q = trailsOf(db, orgId).where('flow_id', '=', flowId).where('name', '=', name);
    return (lock ? q.forUpdate() : q).executeTakeFirst();
  },

  /** The trail, locked (see `find`). */
  async findForUpdate(db: Db, orgId: string, flowId: string, name: string): Promise<TrailRow | undefined> {
    return trailsRepository.find(db, orgId, flowId, name, true);
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<TrailRow[]> {
    if (ids.length === 0) {
      return [];
    }
    return trailsOf(db, orgId)
      .where('id', 'in', [...ids])
      .execute();
  },

  /** Inserts unless the name is taken in the flow; undefined when it was. */
  async insert(db: Db, row: NewTrailRow): Promise<TrailRow | undefined> {
    return db
      .insertInto('trails')
      .values(row)
      .onConflict((oc) => oc.columns(['org_id', 'flow_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  async update(db: Db, orgId: string, id: string, patch: Updateable<TrailsTable>): Promise<void> {
    await db.updateTable('trails').set(patch).where('org_id', '=', orgId).where('id', '=', id).execute();
  },

  async list(
    db: Db,
    orgId: string,
    filter: TrailListFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: Array<TrailRow & { flow_name: string }>; total: number }> {
    let q = db
      .selectFrom('trails as t')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 't.org_id').onRef('f.id', '=', 't.flow_id'))
      .where('t.org_id', '=', orgId);
    if (filter.flowId) {
      q = q.where('t.flow_id', '=', filter.flowId);
    }
    if (filter.flowTag) {
      q = q.where(sql<boolean>`f.tags ->> ${filter.flowTag.key} = ${filter.flowTag.value}`);
    }
    if (filter.fingerprintPrefix) {
      const prefix = `${filter.fingerprintPrefix}%`;
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('artifacts as a')
            .select('a.id')
            .whereRef('a.org_id', '=', 't.org_id')
            .whereRef('a.trail_id', '=', 't.id')
            .where('a.fingerprint', 'like', prefix),
        ),
      );
    }
    const total = await countRows(q);
    // The page's ids first, then the whole rows of those alone (as artifacts' list does): the
    // offset then passes over ids, not over every earlier trail's row.
    const pageIds = q
      .select('t.id')
      .orderBy('t.created_at', 'desc')
      .orderBy('t.name')
      .limit(page.limit)
      .offset(page.offset);
    const rows = await db
      .selectFrom('trails as t')
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 't.org_id').onRef('f.id', '=', 't.flow_id'))
      .selectAll('t')
      .select('f.name as flow_name')
      .where('t.org_id', '=', orgId)
      .where('t.id', 'in', pageIds)
      .orderBy('t.created_at', 'desc')
      .orderBy('t.name')
      .execute();
    return { rows, total };
  },
};
