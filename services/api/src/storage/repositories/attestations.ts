/** Attestations: append-only; every report is kept. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationsTable, TrailEventsTable, TrailsTable } from '../tables/evidence.js';
import type { TrailFacts } from './trails.js';

export type AttestationRow = Selectable<AttestationsTable>;
export type AttestationRowWithNames = AttestationRow & { trail_name: string; flow_name: string };

const withNames = (db: Db) =>
  db
    .selectFrom('attestations as x')
    .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'x.org_id').onRef('t.id', '=', 'x.trail_id'))
    .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'x.org_id').onRef('f.id', '=', 'x.flow_id'))
    .selectAll('x')
    .select(['t.name as trail_name', 'f.name as flow_name']);

export interface AttestationSearch {
  id?: string | undefined;
  name?: string | undefined;
  /** A PostgreSQL (POSIX) regular expression the name must match. */
  nameRegex?: string | undefined;
  flowIds?: string[] | undefined;
  types?: string[] | undefined;
  isCompliant?: boolean | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  afterSeq?: number | undefined;
}

export const attestationsRepository = {
  async insert(db: Db, row: Insertable<AttestationsTable>): Promise<AttestationRow> {
    return db.insertInto('attestations').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * Stores a report in one statement: the attestation, its trail event and the trail's new
   * evaluation. With `ifVersion` (from `trailsRepository.readForReport`) nothing is written unless
   * the trail row still has that version; returns whether the report was stored.
   */
  async insertReport(
    db: Db,
    report: {
      row: Insertable<AttestationsTable> & { created_at: Date };
      event: Insertable<TrailEventsTable> & { occurred_at: Date };
      trail: Pick<
        Updateable<TrailsTable>,
        'compliance' | 'compliance_state' | 'evaluated_at' | 'last_modified_at'
      >;
      /** The trail's facts with this report (`trailsRepository.readForReport` reads them). */
      facts: TrailFacts;
      ifVersion: string | null;
    },
  ): Promise<boolean> {
    const { row: r, event: e, trail: t, facts } = report;
    const result = await sql<{ id: string }>`
      with tr as (
        update trails set compliance = ${t.compliance}::jsonb, compliance_state = ${t.compliance_state},
          evaluated_at = ${t.evaluated_at}::timestamptz, last_modified_at = ${t.last_modified_at}::timestamptz
        where org_id = ${r.org_id} and id = ${r.trail_id}
          and (${report.ifVersion}::text is null or xmin::text = ${report.ifVersion}::text)
        returning id
      ), ev as (
        insert into trail_events (org_id, trail_id, type, fingerprint, occurred_at, data)
        select ${e.org_id}, tr.id, ${e.type}, ${e.fingerprint ?? null}, ${e.occurred_at}::timestamptz, ${e.data}::jsonb
        from tr
      ), fa as (
        insert into trail_facts (org_id, trail_id, last_id, facts)
        select ${r.org_id}, tr.id, ${facts.lastId}, ${JSON.stringify(facts.attestations)}::jsonb from tr
        on conflict (org_id, trail_id) do update set last_id = excluded.last_id, facts = excluded.facts
      )
      insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
        artifact_fingerprint, target_artifacts, git_commit, payload, description, origin_url, user_data,
        annotations, external_urls, git_commit_info, repo_info, repo_id, evidence_sha256, evidence_filename,
        evidence_size, evidence_content_type, created_by, created_at)
      select ${r.org_id}, ${r.id}, ${r.flow_id}, tr.id, ${r.name}, ${r.type}, ${r.kind}, ${r.is_compliant}::boolean,
        ${r.artifact_fingerprint ?? null}, ${r.target_artifacts ?? null}::jsonb, ${r.git_commit ?? null},
        ${r.payload}::jsonb, ${r.description ?? ''}, ${r.origin_url ?? ''}, ${r.user_data ?? null}::jsonb,
        ${r.annotations ?? null}::jsonb, ${r.external_urls ?? null}::jsonb, ${r.git_commit_info ?? null}::jsonb,
        ${r.repo_info ?? null}::jsonb, ${r.repo_id ?? null}, ${r.evidence_sha256 ?? null},
        ${r.evidence_filename ?? null}, ${r.evidence_size ?? null}::bigint, ${r.evidence_content_type ?? null},
        ${r.created_by}, ${r.created_at}::timestamptz
      from tr
      returning id`.execute(db);
    return result.rows.length === 1;
  },

  /** What compliance needs of every attestation of a trail, in report order. */
  async factsForTrail(db: Db, orgId: string, trailId: string) {
    return db
      .selectFrom('attestations')
      .select([
        'id',
        'seq',
        'name',
        'type',
        'kind',
        'is_compliant',
        'artifact_fingerprint',
        'target_artifacts',
        'git_commit',
        sql<string | null>`payload ->> 'original_attestation_type'`.as('original_type'),
      ])
      .where('org_id', '=', orgId)
      .where('trail_id', '=', trailId)
      .orderBy('seq')
      .execute();
  },

  async listForTrail(db: Db, orgId: string, trailId: string): Promise<AttestationRowWithNames[]> {
    return withNames(db)
      .where('x.org_id', '=', orgId)
      .where('x.trail_id', '=', trailId)
      .orderBy('x.seq')
      .execute();
  },

  async findByIds(db: Db, orgId: string, ids: readonly string[]): Promise<AttestationRowWithNames[]> {
    if (ids.length === 0) return [];
    return withNames(db)
      .where('x.org_id', '=', orgId)
      .where('x.id', 'in', [...ids])
      .execute();
  },

  /** Reports of one name on a trail, newest first. */
  async byName(
    db: Db,
    orgId: string,
    trailId: string,
    name: string,
    scope: { fingerprint: string } | { trailLevel: true },
  ): Promise<AttestationRowWithNames[]> {
    let q = withNames(db)
      .where('x.org_id', '=', orgId)
      .where('x.trail_id', '=', trailId)
      .where('x.name', '=', name);
    if ('fingerprint' in scope) q = q.where('x.artifact_fingerprint', '=', scope.fingerprint);
    return q.orderBy('x.seq', 'desc').execute();
  },

  /** A flow's attestations in a time span, newest first (spec endpoint 12). */
  async listForFlow(
    db: Db,
    orgId: string,
    flowId: string,
    span: { from?: Date | undefined; to?: Date | undefined },
    page: { limit: number; offset: number },
  ): Promise<{ rows: AttestationRowWithNames[]; total: number }> {
    let q = withNames(db).where('x.org_id', '=', orgId).where('x.flow_id', '=', flowId);
    if (span.from) q = q.where('x.created_at', '>=', span.from);
    if (span.to) q = q.where('x.created_at', '<=', span.to);
    const total = Number(
      (
        await q
          .clearSelect()
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const rows = await q.orderBy('x.seq', 'desc').limit(page.limit).offset(page.offset).execute();
    return { rows, total };
  },

  /** `GET /attestations/{org}`: filters and a cursor (the seq of the last item seen), newest first. */
  async search(
    db: Db,
    orgId: string,
    s: AttestationSearch,
    limit: number,
  ): Promise<AttestationRowWithNames[]> {
    let q = withNames(db).where('x.org_id', '=', orgId);
    if (s.id) q = q.where('x.id', '=', s.id);
    if (s.name) q = q.where('x.name', '=', s.name);
    if (s.nameRegex) q = q.where('x.name', '~', s.nameRegex);
    if (s.flowIds) q = q.where('x.flow_id', 'in', s.flowIds.length > 0 ? s.flowIds : ['']);
    if (s.types && s.types.length > 0) q = q.where('x.type', 'in', s.types);
    if (s.isCompliant !== undefined) q = q.where('x.is_compliant', '=', s.isCompliant);
    if (s.from) q = q.where('x.created_at', '>=', s.from);
    if (s.to) q = q.where('x.created_at', '<=', s.to);
    if (s.afterSeq !== undefined) q = q.where('x.seq', '<', s.afterSeq);
    return q.orderBy('x.seq', 'desc').limit(limit).execute();
  },
};
