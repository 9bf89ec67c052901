/** Artifacts reported to trails. */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { ArtifactsTable } from '../tables/evidence.js';

export type ArtifactRow = Selectable<ArtifactsTable>;
export type ArtifactRowWithNames = ArtifactRow & { trail_name: string; flow_name: string };

const withNames = (db: Db) =>
  db
    .selectFrom('artifacts as a')
    .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
    .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
    .selectAll('a')
    .select(['t.name as trail_name', 'f.name as flow_name']);

export const artifactsRepository = {
  async findInTrail(
    db: Db,
    orgId: string,
    trailId: string,
    fingerprint: string,
  ): Promise<ArtifactRow | undefined> {
    return db
      .selectFrom('artifacts')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('trail_id', '=', trailId)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst();
  },

  async insert(db: Db, row: Insertable<ArtifactsTable>): Promise<ArtifactRow> {
    return db.insertInto('artifacts').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async update(db: Db, orgId: string, id: string, patch: Updateable<ArtifactsTable>): Promise<void> {
    await db.updateTable('artifacts').set(patch).where('org_id', '=', orgId).where('id', '=', id).execute();
  },

  async listForTrail(db: Db, orgId: string, trailId: string): Promise<ArtifactRow[]> {
    return db
      .selectFrom('artifacts')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('trail_id', '=', trailId)
      .orderBy('seq')
      .execute();
  },

  /** The distinct fingerprints starting with `prefix` (in one flow, or anywhere), at most `limit`. */
  async fingerprintsByPrefix(
    db: Db,
    orgId: string,
    prefix: string,
    flowId: string | null,
    limit: number,
  ): Promise<string[]> {
    let q = db
      .selectFrom('artifacts')
      .select('fingerprint')
      .distinct()
      .where('org_id', '=', orgId)
      .where('fingerprint', 'like', `${prefix}%`);
    if (flowId) q = q.where('flow_id', '=', flowId);
    return (await q.orderBy('fingerprint').limit(limit).execute()).map((r) => r.fingerprint);
  },

  /** The distinct commits starting with `prefix`, at most `limit`. */
  async commitsByPrefix(db: Db, orgId: string, prefix: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('artifacts')
      .select('git_commit')
      .distinct()
      .where('org_id', '=', orgId)
      .where('git_commit', 'like', `${prefix}%`)
      .orderBy('git_commit')
      .limit(limit)
      .execute();
    return rows.map((r) => r.git_commit).filter((c): c is string => c !== null);
  },

  /** The artifact with this fingerprint in the flow: in the named trail, else the most recent one. */
  async findInFlow(
    db: Db,
    orgId: string,
    flowId: string,
    fingerprint: string,
    trailName?: string,
  ): Promise<ArtifactRowWithNames | undefined> {
    let q = withNames(db)
      .where('a.org_id', '=', orgId)
      .where('a.flow_id', '=', flowId)
      .where('a.fingerprint', '=', fingerprint);
    if (trailName !== undefined) q = q.where('t.name', '=', trailName);
    return q.orderBy('a.created_at', 'desc').orderBy('a.seq', 'desc').limit(1).executeTakeFirst();
  },

  async findById(db: Db, orgId: string, id: string): Promise<ArtifactRowWithNames | undefined> {
    return withNames(db).where('a.org_id', '=', orgId).where('a.id', '=', id).executeTakeFirst();
  },

  async byCommit(
    db: Db,
    orgId: string,
    flowId: string,
    commit: string,
    trailName?: string,
  ): Promise<ArtifactRowWithNames[]> {
    let q = withNames(db)
      .where('a.org_id', '=', orgId)
      .where('a.flow_id', '=', flowId)
      .where('a.git_commit', '=', commit);
    if (trailName !== undefined) q = q.where('t.name', '=', trailName);
    return q.orderBy('a.created_at', 'desc').orderBy('a.seq', 'desc').execute();
  },

  /** Every artifact with one of these fingerprints or commits, newest first. */
  async bySha(
    db: Db,
    orgId: string,
    fingerprints: string[],
    commits: string[],
    limit: number,
  ): Promise<ArtifactRowWithNames[]> {
    if (fingerprints.length === 0 && commits.length === 0) return [];
    return withNames(db)
      .where('a.org_id', '=', orgId)
      .where((eb) =>
        eb.or([
          ...(fingerprints.length > 0 ? [eb('a.fingerprint', 'in', fingerprints)] : []),
          ...(commits.length > 0 ? [eb('a.git_commit', 'in', commits)] : []),
        ]),
      )
      .orderBy('a.created_at', 'desc')
      .orderBy('a.seq', 'desc')
      .limit(limit)
      .execute();
  },

  /** The latest commit reported in the flow before this fingerprint (on a branch when given). */
  async latestCommit(
    db: Db,
    orgId: string,
    flowId: string,
    branch: string | undefined,
  ): Promise<string | null> {
    let q = db
      .selectFrom('artifacts')
      .select('git_commit')
      .where('org_id', '=', orgId)
      .where('flow_id', '=', flowId)
      .where('git_commit', 'is not', null);
    if (branch) q = q.where((eb) => eb(eb.ref('git_commit_info', '->>').key('branch'), '=', branch));
    const row = await q.orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row?.git_commit ?? null;
  },

  async list(
    db: Db,
    orgId: string,
    filter: { flowId?: string | undefined; repoId?: string | undefined },
    page: { limit: number; offset: number },
  ): Promise<ArtifactRowWithNames[]> {
    let q = withNames(db).where('a.org_id', '=', orgId);
    if (filter.flowId) q = q.where('a.flow_id', '=', filter.flowId);
    if (filter.repoId) q = q.where('a.repo_id', '=', filter.repoId);
    return q
      .orderBy('a.created_at', 'desc')
      .orderBy('a.seq', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  },

  /**
   * For each fingerprint and each flow holding it, the artifact in that flow's most recent trail
   * holding it, with the trail's stored compliance: one query for any number of fingerprints.
   */
  async latestPerFlow(db: Db, orgId: string, fingerprints: readonly string[]) {
    if (fingerprints.length === 0) return [];
    return db
      .selectFrom('artifacts as a')
      .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
      .innerJoin('orgs as o', 'o.id', 'a.org_id')
      .distinctOn(['a.fingerprint', 'a.flow_id'])
      .select([
        'a.id',
        'a.fingerprint',
        'a.filename',
        'a.template_reference_name',
        'a.git_commit',
        'a.commit_url',
        'a.build_url',
        'a.created_at',
        'a.state',
        'a.compliance',
        'a.flow_id',
        'a.trail_id',
        't.name as trail_name',
        't.compliance_state as trail_state',
        't.compliance as trail_compliance',
        'f.name as flow_name',
        'f.tags as flow_tags',
        'o.name as org_name',
      ])
      .where('a.org_id', '=', orgId)
      .where('a.fingerprint', 'in', [...fingerprints])
      .orderBy('a.fingerprint')
      .orderBy('a.flow_id')
      .orderBy('a.created_at', 'desc')
      .orderBy('a.seq', 'desc')
      .execute();
  },
};
