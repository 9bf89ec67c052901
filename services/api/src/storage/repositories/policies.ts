/** Environment policies, their immutable versions and their events. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { PoliciesTable, PolicyEventsTable, PolicyVersionsTable } from '../tables/runtime.js';
import { insertUnlessNameTaken } from './queries.js';
import { pushTo } from '../../group-by.js';

export type PolicyRow = Selectable<PoliciesTable>;
export type PolicyVersionRow = Selectable<PolicyVersionsTable>;
export type PolicyEventRow = Selectable<PolicyEventsTable>;

/** The organization's policies. */
const policiesOf = (db: Db, orgId: string) =>
  db.selectFrom('policies').selectAll().where('org_id', '=', orgId);

export const policiesRepository = {
  async findByName(db: Db, orgId: string, name: string): Promise<PolicyRow | undefined> {
    return policiesOf(db, orgId).where('name', '=', name).executeTakeFirst();
  },

  async lockByName(db: Db, orgId: string, name: string): Promise<PolicyRow | undefined> {
    return policiesOf(db, orgId).where('name', '=', name).forUpdate().executeTakeFirst();
  },

  async findByNames(db: Db, orgId: string, names: readonly string[]): Promise<PolicyRow[]> {
    if (names.length === 0) {
      return [];
    }
    return policiesOf(db, orgId)
      .where('name', 'in', [...names])
      .execute();
  },

  async list(db: Db, orgId: string): Promise<PolicyRow[]> {
    return policiesOf(db, orgId).orderBy('name').execute();
  },

  async insert(db: Db, row: Omit<PolicyRow, 'archived'>): Promise<PolicyRow | undefined> {
    return insertUnlessNameTaken(db, 'policies', row);
  },

  async update(
    db: Db,
    orgId: string,
    id: string,
    patch: Partial<{ description: string; latest_version: number; last_modified_at: Date }>,
  ): Promise<void> {
    await db.updateTable('policies').set(patch).where('org_id', '=', orgId).where('id', '=', id).execute();
  },

  async insertVersion(db: Db, row: Omit<PolicyVersionRow, 'parsed'> & { parsed: object }): Promise<void> {
    await db
      .insertInto('policy_versions')
      .values({ ...row, parsed: JSON.stringify(row.parsed) })
      .execute();
  },

  async versions(db: Db, orgId: string, policyIds: readonly string[]): Promise<PolicyVersionRow[]> {
    if (policyIds.length === 0) {
      return [];
    }
    return db
      .selectFrom('policy_versions')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('policy_id', 'in', [...policyIds])
      .orderBy('policy_id')
      .orderBy('version')
      .execute();
  },

  async version(
    db: Db,
    orgId: string,
    policyId: string,
    version: number,
  ): Promise<PolicyVersionRow | undefined> {
    return db
      .selectFrom('policy_versions')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('policy_id', '=', policyId)
      .where('version', '=', version)
      .executeTakeFirst();
  },

  /** The latest version of every policy attached to an environment (archived ones excluded). */
  async attachedLatest(
    db: Db,
    orgId: string,
    envId: string,
  ): Promise<Array<{ id: string; name: string; version: number; parsed: object }>> {
    return db
      .selectFrom('environment_policies as ep')
      .innerJoin('policies as p', (j) =>
        j.onRef('p.org_id', '=', 'ep.org_id').onRef('p.id', '=', 'ep.policy_id'),
      )
      .innerJoin('policy_versions as v', (j) =>
        j
          .onRef('v.org_id', '=', 'p.org_id')
          .onRef('v.policy_id', '=', 'p.id')
          .onRef('v.version', '=', 'p.latest_version'),
      )
      .select(['p.id', 'p.name', 'v.version', 'v.parsed'])
      .where('ep.org_id', '=', orgId)
      .where('ep.environment_id', '=', envId)
      .where('p.archived', '=', false)
      .orderBy('p.name')
      .execute();
  },

  async insertEvent(
    db: Db,
    row: Omit<PolicyEventRow, 'data'> & { data: Record<string, unknown> },
  ): Promise<void> {
    await db
      .insertInto('policy_events')
      .values({ ...row, data: JSON.stringify(row.data) })
      .execute();
  },

  async events(db: Db, orgId: string, policyIds: readonly string[]): Promise<PolicyEventRow[]> {
    if (policyIds.length === 0) {
      return [];
    }
    return db
      .selectFrom('policy_events')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('policy_id', 'in', [...policyIds])
      .orderBy('at')
      .execute();
  },

  /** Names of the environments each policy is attached to. */
  async consumers(db: Db, orgId: string, policyIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (policyIds.length === 0) {
      return out;
    }
    const rows = await db
      .selectFrom('environment_policies as ep')
      .innerJoin('environments as e', (j) =>
        j.onRef('e.org_id', '=', 'ep.org_id').onRef('e.id', '=', 'ep.environment_id'),
      )
      .select(['ep.policy_id', 'e.name'])
      .where('ep.org_id', '=', orgId)
      .where('ep.policy_id', 'in', [...policyIds])
      .orderBy('e.name')
      .execute();
    for (const r of rows) {
      pushTo(out, r.policy_id, r.name);
    }
    return out;
  },
};
