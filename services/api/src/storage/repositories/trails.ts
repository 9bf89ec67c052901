/** Trails of flows. */
import { sql, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { TrailsTable } from '../tables/evidence.js';
import type { FlowRow } from './flows.js';
import {
  evaluationInputsColumns,
  fromEvaluationInputsColumns,
  withDates,
  type EvaluationInputs,
  type EvaluationInputsColumns,
} from './artifacts.js';
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

/** The id of the flow with this name, or of the flow that had it before a rename (its alias). */
export const flowIdByName = (orgId: RawBuilder<unknown>, name: RawBuilder<unknown>) => sql`
  select id from (
    select id, 0 as p from flows where org_id = ${orgId} and name = ${name}
    union all
    select flow_id, 1 from flow_aliases where org_id = ${orgId} and name = ${name}
  ) named order by p limit 1`;

/** A flow row read back with row_to_json. */
const flowFromJson = (f: FlowRow): FlowRow => withDates(f, ['created_at', 'last_modified_at']);

/** What `readTrailsForAttestations` reads for one trail. */
export interface AttestationTrailRead {
  flow: FlowRow;
  trail: TrailRow;
  /** The trail row's version (xmin) at the read. */
  version: string;
  /** The flow row's version (xmin) at the read. */
  flowVersion: string;
  /** Each of the trail's artifacts' row version (xmin) at the read, by artifact id. */
  artifactVersions: Record<string, string>;
  inputs: EvaluationInputs;
  /** How many of the trail's reports its stored facts leave out (`fromEvaluationInputsColumns`). */
  factsBehind: number;
}

/**
 * A trail's reports reduced to what its evaluation reads (`essentialAttestations` in
 * usecases/evidence/evaluation.ts), in report order, as migration 0303 stores them.
 */
export interface TrailFacts {
  /** The trail's latest report when these were taken; later reports are read with them. */
  lastId: string | null;
  attestations: Array<Omit<EvaluationInputs['attestations'][number], 'seq'>>;
}

/** The organization's trails. */
const trailsOf = (db: Db, orgId: string) => db.selectFrom('trails').selectAll().where('org_id', '=', orgId);

export const trailsRepository = {
  /**
   * The flow (by name or an old name) and its trail, the trail locked, in one round trip;
   * undefined when either is missing (the caller then creates what is missing).
   */
  async lockWithFlow(
    db: Db,
    orgId: string,
    flowName: string,
    trailName: string,
  ): Promise<{ flow: FlowRow; trail: TrailRow } | undefined> {
    const result = await sql<TrailRow & { flow_json: FlowRow }>`
      with fl as (${flowIdByName(sql`${orgId}`, sql`${flowName}`)})
      select t.*, row_to_json(f) as flow_json
      from fl
      join trails t on t.org_id = ${orgId} and t.flow_id = fl.id and t.name = ${trailName}
      join flows f on f.org_id = ${orgId} and f.id = fl.id
      for update of t`.execute(db);
    const row = result.rows[0];
    if (!row) {
      return undefined;
    }
    const { flow_json, ...trail } = row;
    return {
      trail,
      flow: flowFromJson(flow_json),
    };
  },

  /**
   * For each (org, flow, trail): the flow (by name or an old name), its trail, the versions (xmin)
   * of both rows and of its artifacts' rows, and what the trail's evaluation reads (as `artifactsRepository.evaluationInputs`),
   * all from one snapshot in one round trip, locking nothing; undefined where the flow or the
   * trail is missing. A write conditioned on the versions (`attestationsRepository.insertAttestationBatch`)
   * then succeeds only if no other write to the flow or the trail committed meanwhile: every write
   * to a trail's evidence also rewrites the trail row (its evaluation), which gives the row a new
   * version.
   */
  async readTrailsForAttestations(
    db: Db,
    keys: ReadonlyArray<{ orgId: string; flowName: string; trailName: string }>,
  ): Promise<Array<AttestationTrailRead | undefined>> {
    const result = await sql<
      TrailRow & {
        key_index: number;
        flow_json: FlowRow;
        version: string;
        flow_version: string;
        artifact_versions: Record<string, string>;
      } & EvaluationInputsColumns
    >`
      select k.key_index::int as key_index, t.*, row_to_json(f) as flow_json, f.xmin::text as flow_version,
        (select coalesce(json_object_agg(a.id, a.xmin::text), '{}'::json) from artifacts a
          where a.org_id = t.org_id and a.trail_id = t.id) as artifact_versions,
        ${evaluationInputsColumns(sql.ref('t.org_id'), sql.ref('t.id'))}
      from unnest(${keys.map((k) => k.orgId)}::text[], ${keys.map((k) => k.flowName)}::text[],
        ${keys.map((k) => k.trailName)}::text[]) with ordinality as k(org_id, flow_name, trail_name, key_index)
      -- Lookups per key (lateral), so even a plan made while the tables were empty uses their keys.
      cross join lateral (${flowIdByName(sql.ref('k.org_id'), sql.ref('k.flow_name'))}) fl
      cross join lateral (
        select *, xmin::text as version from trails
        where org_id = k.org_id and flow_id = fl.id and name = k.trail_name
      ) t
      join flows f on f.org_id = k.org_id and f.id = fl.id`.execute(db);
    const reads: Array<AttestationTrailRead | undefined> = keys.map(() => undefined);
    for (const row of result.rows) {
      const {
        key_index,
        flow_json,
        version,
        flow_version,
        artifact_versions,
        artifacts,
        attestations_source,
        ...trail
      } = row;
      reads[key_index - 1] = {
        trail,
        flow: flowFromJson(flow_json),
        version,
        flowVersion: flow_version,
        artifactVersions: artifact_versions,
        ...fromEvaluationInputsColumns({ artifacts, attestations_source }),
      };
    }
    return reads;
  },

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
    const rows = await q
      .selectAll('t')
      .select('f.name as flow_name')
      .orderBy('t.created_at', 'desc')
      .orderBy('t.name')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { rows, total };
  },
};
