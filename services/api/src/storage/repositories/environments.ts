/** Environments, logical membership, attached policies and tags. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { EnvironmentsTable, EnvironmentType } from '../tables/runtime.js';
import { countRows, insertUnlessNameTaken } from './queries.js';
import { pushTo } from '../../group-by.js';

export type EnvironmentRow = Selectable<EnvironmentsTable>;

export interface EnvironmentListFilter {
  name?: string;
  types?: string[];
  tags?: Array<{ key: string; value?: string }>;
  sort: 'name' | 'last_modified_at' | 'last_changed_at';
  direction: 'asc' | 'desc';
  limit?: number;
  offset?: number;
}

/** The organization's environments. */
const environmentsOf = (db: Db, orgId: string) =>
  db.selectFrom('environments').selectAll().where('org_id', '=', orgId);

export const environmentsRepository = {
  async findByName(db: Db, orgId: string, name: string): Promise<EnvironmentRow | undefined> {
    return environmentsOf(db, orgId).where('name', '=', name).executeTakeFirst();
  },

  /** The row, locked for the rest of the transaction: reports and re-evaluations of one environment take turns. */
  async lockByName(db: Db, orgId: string, name: string): Promise<EnvironmentRow | undefined> {
    return environmentsOf(db, orgId).where('name', '=', name).forUpdate().executeTakeFirst();
  },

  async lockById(db: Db, orgId: string, id: string): Promise<EnvironmentRow | undefined> {
    return environmentsOf(db, orgId).where('id', '=', id).forUpdate().executeTakeFirst();
  },

  async findByNames(db: Db, orgId: string, names: readonly string[]): Promise<EnvironmentRow[]> {
    if (names.length === 0) {
      return [];
    }
    return environmentsOf(db, orgId)
      .where('name', 'in', [...names])
      .execute();
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<EnvironmentRow[]> {
    if (ids.length === 0) {
      return [];
    }
    return environmentsOf(db, orgId)
      .where('id', 'in', [...ids])
      .execute();
  },

  async list(
    db: Db,
    orgId: string,
    f: EnvironmentListFilter,
  ): Promise<{ rows: EnvironmentRow[]; total: number }> {
    let q = db.selectFrom('environments').where('org_id', '=', orgId).where('archived', '=', false);
    if (f.name) {
      q = q.where(sql<boolean>`position(lower(${f.name}) in lower(name)) > 0`);
    }
    if (f.types && f.types.length > 0) {
      q = q.where('type', 'in', f.types as EnvironmentType[]);
    }
    for (const tag of f.tags ?? []) {
      q =
        tag.value === undefined
          ? q.where(sql<boolean>`tags ? ${tag.key}`)
          : q.where(sql<boolean>`tags ->> ${tag.key} = ${tag.value}`);
    }
    const total = await countRows(q);
    let rows = q.selectAll().orderBy(f.sort, f.direction).orderBy('name', 'asc');
    if (f.limit !== undefined) {
      rows = rows.limit(f.limit).offset(f.offset ?? 0);
    }
    return { rows: await rows.execute(), total };
  },

  async insert(
    db: Db,
    row: Omit<EnvironmentRow, 'latest_snapshot' | 'archived' | 'require_provenance' | 'tags'> & {
      require_provenance: boolean;
      tags?: Record<string, string>;
    },
  ): Promise<EnvironmentRow | undefined> {
    return insertUnlessNameTaken(db, 'environments', { ...row, tags: JSON.stringify(row.tags ?? {}) });
  },

  async update(
    db: Db,
    orgId: string,
    id: string,
    patch: Partial<{
      name: string;
      description: string;
      require_provenance: boolean;
      archived: boolean;
      last_modified_at: Date;
      last_reported_at: Date;
      last_changed_at: Date;
      latest_snapshot: number;
      compliant: boolean | null;
      last_report_hash: string | null;
      last_report_raw_hash: string | null;
    }>,
  ): Promise<void> {
    await db
      .updateTable('environments')
      .set(patch)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .execute();
  },

  /**
   * Moves the report time of an environment whose last report still has the bytes' hash
   * `previous.rawHash` and no later snapshot (the caller found the new report unchanged);
   * false when another report changed the row meanwhile.
   */
  async touchIfSameReport(
    db: Db,
    orgId: string,
    id: string,
    previous: { rawHash: string; latestSnapshot: number },
    now: Date,
  ): Promise<boolean> {
    const row = await db
      .updateTable('environments')
      .set({ last_reported_at: now })
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('archived', '=', false)
      .where('latest_snapshot', '=', previous.latestSnapshot)
      .where('last_report_raw_hash', '=', previous.rawHash)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Members of logical environments, by logical id. */
  async membersOf(db: Db, orgId: string, logicalIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (logicalIds.length === 0) {
      return out;
    }
    const rows = await db
      .selectFrom('environment_members as m')
      .innerJoin('environments as e', (j) =>
        j.onRef('e.org_id', '=', 'm.org_id').onRef('e.id', '=', 'm.physical_id'),
      )
      .select(['m.logical_id', 'e.name'])
      .where('m.org_id', '=', orgId)
      .where('m.logical_id', 'in', [...logicalIds])
      .orderBy('e.name')
      .execute();
    for (const r of rows) {
      pushTo(out, r.logical_id, r.name);
    }
    return out;
  },

  async setMembers(db: Db, orgId: string, logicalId: string, physicalIds: readonly string[]): Promise<void> {
    await db
      .deleteFrom('environment_members')
      .where('org_id', '=', orgId)
      .where('logical_id', '=', logicalId)
      .execute();
    await this.addMembers(db, orgId, logicalId, physicalIds);
  },

  async addMembers(db: Db, orgId: string, logicalId: string, physicalIds: readonly string[]): Promise<void> {
    if (physicalIds.length === 0) {
      return;
    }
    await db
      .insertInto('environment_members')
      .values(physicalIds.map((p) => ({ org_id: orgId, logical_id: logicalId, physical_id: p })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  },

  /** Names of attached policies, by environment id. */
  async policyNamesOf(db: Db, orgId: string, envIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (envIds.length === 0) {
      return out;
    }
    const rows = await db
      .selectFrom('environment_policies as ep')
      .innerJoin('policies as p', (j) =>
        j.onRef('p.org_id', '=', 'ep.org_id').onRef('p.id', '=', 'ep.policy_id'),
      )
      .select(['ep.environment_id', 'p.name'])
      .where('ep.org_id', '=', orgId)
      .where('ep.environment_id', 'in', [...envIds])
      .orderBy('p.name')
      .execute();
    for (const r of rows) {
      pushTo(out, r.environment_id, r.name);
    }
    return out;
  },

  async attachPolicies(
    db: Db,
    orgId: string,
    envId: string,
    policyIds: readonly string[],
    now: Date,
  ): Promise<number> {
    if (policyIds.length === 0) {
      return 0;
    }
    const rows = await db
      .insertInto('environment_policies')
      .values(
        policyIds.map((p) => ({ org_id: orgId, environment_id: envId, policy_id: p, attached_at: now })),
      )
      .onConflict((oc) => oc.doNothing())
      .returning('policy_id')
      .execute();
    return rows.length;
  },

  async detachPolicies(db: Db, orgId: string, envId: string, policyIds: readonly string[]): Promise<number> {
    if (policyIds.length === 0) {
      return 0;
    }
    const rows = await db
      .deleteFrom('environment_policies')
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('policy_id', 'in', [...policyIds])
      .returning('policy_id')
      .execute();
    return rows.length;
  },

  async environmentIdsUsingPolicy(db: Db, orgId: string, policyId: string): Promise<string[]> {
    const rows = await db
      .selectFrom('environment_policies')
      .select('environment_id')
      .where('org_id', '=', orgId)
      .where('policy_id', '=', policyId)
      .execute();
    return rows.map((r) => r.environment_id);
  },

  /** Every environment with compliance and report time, for the metrics scrape. */
  async complianceOverview(db: Db): Promise<
    Array<{
      org: string;
      name: string;
      compliant: boolean | null;
      last_reported_at: Date | null;
      latest_snapshot_at: Date | null;
    }>
  > {
    return db
      .selectFrom('environments as e')
      .innerJoin('orgs as o', 'o.id', 'e.org_id')
      .leftJoin('runtime_snapshots as s', (j) =>
        j
          .onRef('s.org_id', '=', 'e.org_id')
          .onRef('s.environment_id', '=', 'e.id')
          .onRef('s.index', '=', 'e.latest_snapshot'),
      )
      .select([
        'o.name as org',
        'e.name',
        'e.compliant',
        'e.last_reported_at',
        's.created_at as latest_snapshot_at',
      ])
      .where('e.archived', '=', false)
      .where('e.type', '!=', 'logical')
      .execute();
  },
};

/**
 * Sets and removes tags on an environment (the tags route of the evidence area calls this).
 * Returns false when the environment does not exist.
 */
export async function setEnvironmentTags(
  db: Db,
  orgId: string,
  envName: string,
  set: Record<string, string>,
  remove: readonly string[],
): Promise<boolean> {
  const rows = await db
    .updateTable('environments')
    .set({
      // Set first, then remove: a key both set and removed ends up removed (as on flows).
      tags: sql`(tags || ${JSON.stringify(set)}::jsonb) - ${sql.val([...remove])}::text[]`,
    })
    .where('org_id', '=', orgId)
    .where('name', '=', envName)
    .returning('id')
    .execute();
  return rows.length > 0;
}
