/** Artifacts reported to trails. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { SlotStatus } from '../../domain/compliance.js';
import type { Db } from '../database.js';
import type { ArtifactsTable, AttestationsTable } from '../tables/evidence.js';
import { withDates } from './json-rows.js';
import {
  artifactHistoryColumns,
  fromHistoryColumns,
  type ArtifactHistoryRows,
  type HistoryColumns,
} from './trail-events.js';

export type ArtifactRow = Selectable<ArtifactsTable>;
export type ArtifactRowWithNames = ArtifactRow & { trail_name: string; flow_name: string };

/** The payload keys an artifact's evidence shows (usecases/evidence/artifacts.ts `presentEvidence`). */
export const EVIDENCE_PAYLOAD_KEYS = [
  'git_provider',
  'snyk_results',
  'junit_results',
  'jira_results',
  'pull_requests',
] as const;

/**
 * What an artifact's evidence shows of an attestation: a row with its names, its payload cut to
 * EVIDENCE_PAYLOAD_KEYS (a key it lacks reads as null). The payload's type names only those keys,
 * so a reader that wants another one must add it to the list the read selects.
 */
export type EvidenceAttestation = Pick<
  Selectable<AttestationsTable> & { trail_name: string; flow_name: string },
  | 'id'
  | 'kind'
  | 'type'
  | 'is_compliant'
  | 'created_at'
  | 'origin_url'
  | 'evidence_sha256'
  | 'description'
  | 'git_commit'
  | 'user_data'
  | 'trail_name'
  | 'flow_name'
> & { payload: Partial<Record<(typeof EVIDENCE_PAYLOAD_KEYS)[number], unknown>> };

const withNames = (db: Db) =>
  db
    .selectFrom('artifacts as a')
    .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
    .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
    .selectAll('a')
    .select(['t.name as trail_name', 'f.name as flow_name']);

/** The artifacts of a flow with this fingerprint or commit (in the named trail, if any), newest first. */
function newestInFlow(
  db: Db,
  orgId: string,
  flowId: string,
  column: 'a.fingerprint' | 'a.git_commit',
  value: string,
  trailName: string | undefined,
) {
  let q = withNames(db)
    .where('a.org_id', '=', orgId)
    .where('a.flow_id', '=', flowId)
    .where(column, '=', value);
  if (trailName !== undefined) {
    q = q.where('t.name', '=', trailName);
  }
  return q.orderBy('a.created_at', 'desc').orderBy('a.seq', 'desc');
}

/**
 * Per fingerprint and flow, the artifact of the flow's most recent trail holding it (the latest
 * reported, on a tie the later in the trail): the query `latestPerFlow` and `latestHoldersPerFlow`
 * select from.
 */
const latestInEachFlow = (db: Db, orgId: string, fingerprints: readonly string[]) =>
  db
    .selectFrom('artifacts as a')
    .distinctOn(['a.fingerprint', 'a.flow_id'])
    .where('a.org_id', '=', orgId)
    .where('a.fingerprint', 'in', [...fingerprints])
    .orderBy('a.fingerprint')
    .orderBy('a.flow_id')
    .orderBy('a.created_at', 'desc')
    .orderBy('a.seq', 'desc');

export const artifactsRepository = {
  /**
   * The artifact of endpoint 1 in one round trip: the flow by its current name, the artifact in
   * its latest trail (or the named one), its effective attestations and its history as its
   * answer shows it (`artifactHistoryColumns`).
   * Undefined when not found (old flow names and errors take the general path).
   */
  async readWithEvidence(
    db: Db,
    orgId: string,
    flowName: string,
    fingerprint: string,
    trailName: string | undefined,
  ): Promise<
    | { artifact: ArtifactRowWithNames; attestations: EvidenceAttestation[]; history: ArtifactHistoryRows }
    | undefined
  > {
    const result = await sql<ArtifactRowWithNames & HistoryColumns & { evidence_rows: unknown[] }>`
      select a.*, t.name as trail_name, f.name as flow_name,
        (select coalesce(json_agg(x order by x.seq), '[]'::json) from (
          -- Each attestation the artifact's compliance names, looked up by its key (org_id, id), one
          -- at a time (the lateral subquery's limit keeps the planner from joining it whole): as
          -- \`att.id in (...)\`, a planner without fresh statistics read every attestation of the
          -- trail to keep the few named (8 ms for a trail of 40,000, bench/limits-reads.ts). Of
          -- each, what an artifact's evidence shows (\`EvidenceAttestation\`), not the whole row:
          -- the rest would only be sent, parsed and dropped.
          select att.*, t.name as trail_name, f.name as flow_name
          from (select distinct s ->> 'attestation_id' as id
            from jsonb_array_elements(coalesce(a.compliance -> 'attestations_statuses', '[]'::jsonb)) s) named
          cross join lateral (
            select att.seq, att.id, att.kind, att.type, att.is_compliant, att.created_at, att.origin_url,
              att.evidence_sha256, att.description, att.git_commit, att.user_data,
              jsonb_build_object(${sql.join(EVIDENCE_PAYLOAD_KEYS.map((k) => sql`${k}::text, att.payload -> ${k}::text`))}) as payload
            from attestations att
            where att.org_id = a.org_id and att.id = named.id
            limit 1
          ) att
        ) x) as evidence_rows,
        ${artifactHistoryColumns(sql.ref('a.org_id'), sql.ref('a.trail_id'), sql.ref('a.fingerprint'))}
      from flows f
      join artifacts a on a.org_id = f.org_id and a.flow_id = f.id and a.fingerprint = ${fingerprint}
      join trails t on t.org_id = a.org_id and t.id = a.trail_id
      where f.org_id = ${orgId} and f.name = ${flowName}
        and ${trailName === undefined ? sql`true` : sql`t.name = ${trailName}`}
      order by a.created_at desc, a.seq desc
      limit 1`.execute(db);
    const row = result.rows[0];
    if (!row) {
      return undefined;
    }
    const { evidence_rows, event_rows, place_rows, event_total, ...artifact } = row;
    return {
      artifact,
      attestations: (evidence_rows as EvidenceAttestation[]).map((a) => withDates(a, ['created_at'])),
      history: fromHistoryColumns({ event_rows, place_rows, event_total }),
    };
  },

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
    if (flowId) {
      q = q.where('flow_id', '=', flowId);
    }
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
    return newestInFlow(db, orgId, flowId, 'a.fingerprint', fingerprint, trailName)
      .limit(1)
      .executeTakeFirst();
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
    return newestInFlow(db, orgId, flowId, 'a.git_commit', commit, trailName).execute();
  },

  /** Every artifact with one of these fingerprints or commits, newest first. */
  async bySha(
    db: Db,
    orgId: string,
    fingerprints: string[],
    commits: string[],
    limit: number,
  ): Promise<ArtifactRowWithNames[]> {
    if (fingerprints.length === 0 && commits.length === 0) {
      return [];
    }
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
    if (branch) {
      q = q.where((eb) => eb(eb.ref('git_commit_info', '->>').key('branch'), '=', branch));
    }
    const row = await q.orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row?.git_commit ?? null;
  },

  async list(
    db: Db,
    orgId: string,
    filter: { flowId?: string | undefined; repoId?: string | undefined },
    page: { limit: number; offset: number },
  ): Promise<ArtifactRowWithNames[]> {
    // The page's ids first, from the artifacts alone; its trail and flow names then for those
    // rows only. Joined before the offset, every artifact of the earlier pages was joined too:
    // page 1,000 of 100 in a flow of 100,000, the statement alone on the embedded database, took
    // 494 ms that way and 111 ms this way (bench/limits-lists.ts times the whole request).
    let ids = db.selectFrom('artifacts as p').select('p.id').where('p.org_id', '=', orgId);
    if (filter.flowId) {
      ids = ids.where('p.flow_id', '=', filter.flowId);
    }
    if (filter.repoId) {
      ids = ids.where('p.repo_id', '=', filter.repoId);
    }
    const pageIds = ids
      .orderBy('p.created_at', 'desc')
      .orderBy('p.seq', 'desc')
      .limit(page.limit)
      .offset(page.offset);
    return withNames(db)
      .where('a.org_id', '=', orgId)
      .where('a.id', 'in', pageIds)
      .orderBy('a.created_at', 'desc')
      .orderBy('a.seq', 'desc')
      .execute();
  },

  /**
   * For each fingerprint and each flow holding it, the artifact in that flow's most recent trail
   * holding it, with its own and its trail's compliance slots (`attestations_statuses` of the
   * stored compliance, null if none; the rest of the documents stays in the database): one query
   * for any number of fingerprints.
   */
  async latestPerFlow(db: Db, orgId: string, fingerprints: readonly string[]) {
    if (fingerprints.length === 0) {
      return [];
    }
    return latestInEachFlow(db, orgId, fingerprints)
      .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
      .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.id', '=', 'a.flow_id'))
      .innerJoin('orgs as o', 'o.id', 'a.org_id')
      .select([
        'a.id',
        'a.fingerprint',
        'a.filename',
        'a.template_reference_name',
        'a.git_commit',
        'a.git_commit_info',
        'a.commit_url',
        'a.build_url',
        'a.created_at',
        'a.state',
        sql<SlotStatus[] | null>`a.compliance -> 'attestations_statuses'`.as('artifact_slots'),
        'a.flow_id',
        'a.trail_id',
        't.name as trail_name',
        't.compliance_state as trail_state',
        sql<SlotStatus[] | null>`t.compliance -> 'attestations_statuses'`.as('trail_slots'),
        'f.name as flow_name',
        'f.tags as flow_tags',
        'o.name as org_name',
      ])
      .execute();
  },

  /**
   * The same artifacts as `latestPerFlow`, with only what runtime events are written from: their
   * ids, trails and template names. A report's events name hundreds of fingerprints; their
   * compliance documents are not read for them.
   */
  async latestHoldersPerFlow(db: Db, orgId: string, fingerprints: readonly string[]) {
    if (fingerprints.length === 0) {
      return [];
    }
    return latestInEachFlow(db, orgId, fingerprints)
      .select(['a.id', 'a.fingerprint', 'a.trail_id', 'a.template_reference_name'])
      .execute();
  },
};
