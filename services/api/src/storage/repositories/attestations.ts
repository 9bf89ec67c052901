/** Attestations: append-only; every report is kept. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationsTable, TrailEventsTable, TrailsTable } from '../tables/evidence.js';
import { flowIdByName, type TrailFacts } from './trails.js';

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
  /**
   * A test the name must pass, run in process (a tenant's regular expression, compiled with
   * RE2), never as SQL: a pattern given to the database would run there without a time bound.
   */
  nameMatches?: ((name: string) => boolean) | undefined;
  flowIds?: string[] | undefined;
  /** A trail name (with flowIds: that flow's trail). */
  trailName?: string | undefined;
  types?: string[] | undefined;
  isCompliant?: boolean | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  afterSeq?: number | undefined;
}

/** One report's rows: the attestation and its trail event. */
export interface StoredReport {
  row: Insertable<AttestationsTable> & { created_at: Date };
  event: Insertable<TrailEventsTable> & { occurred_at: Date };
}

/** Reports to one trail, and the trail after them (`insertReports`). */
export interface TrailReports {
  orgId: string;
  trailId: string;
  /**
   * What the reports were planned on (`trailsRepository.readForReports`): the versions of the
   * trail and flow rows, and the flow names they were sent to, which must all still name the
   * trail's flow. Null: the caller holds the trail's lock.
   */
  ifUnchanged: { version: string; flowVersion: string; flowNames: readonly string[] } | null;
  trail: Pick<
    Updateable<TrailsTable>,
    'compliance' | 'compliance_state' | 'evaluated_at' | 'last_modified_at'
  >;
  /** The trail's facts after the last report (`trailsRepository.readForReports` reads them). */
  facts: TrailFacts;
  reports: StoredReport[];
}

/** A jsonb column's value as text (stored rows carry JSON text already), cast in SQL. */
const jsonText = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

export const attestationsRepository = {
  async insert(db: Db, row: Insertable<AttestationsTable>): Promise<AttestationRow> {
    return db.insertInto('attestations').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * Stores a report in one statement: the attestation, its trail event and the trail's new
   * evaluation and facts. With `ifUnchanged` nothing is written unless it still holds; returns
   * whether the report was stored.
   */
  async insertReport(
    db: Db,
    report: Omit<TrailReports, 'reports' | 'orgId' | 'trailId'> & StoredReport,
  ): Promise<boolean> {
    const { row, event, ...trail } = report;
    const stored = await attestationsRepository.insertReports(db, [
      { ...trail, orgId: row.org_id, trailId: row.trail_id, reports: [{ row, event }] },
    ]);
    return stored.size === 1;
  },

  /**
   * Stores reports to several trails in one statement: per trail its reports (attestations and
   * trail events, in the order given) and its evaluation and facts after the last of them. A trail
   * with `ifUnchanged` is written only if that still holds, and then with all of its reports.
   * Returns the trails written, as `org_id:trail_id`, each with its row's new version.
   */
  async insertReports(db: Db, trails: readonly TrailReports[]): Promise<Map<string, string>> {
    if (trails.length === 0) return new Map();
    const trailRecords: object[] = [];
    const eventRecords: object[] = [];
    const rowRecords: object[] = [];
    let ord = 0;
    for (const t of trails) {
      trailRecords.push({
        org_id: t.orgId,
        trail_id: t.trailId,
        version: t.ifUnchanged?.version ?? null,
        flow_version: t.ifUnchanged?.flowVersion ?? null,
        flow_names: t.ifUnchanged ? JSON.stringify(t.ifUnchanged.flowNames) : null,
        compliance: jsonText(t.trail.compliance),
        compliance_state: t.trail.compliance_state,
        evaluated_at: t.trail.evaluated_at,
        last_modified_at: t.trail.last_modified_at,
        facts_last_id: t.facts.lastId,
        facts: JSON.stringify(t.facts.attestations),
      });
      for (const { row: r, event: e } of t.reports) {
        ord += 1;
        eventRecords.push({
          ord,
          org_id: e.org_id,
          trail_id: e.trail_id,
          type: e.type,
          fingerprint: e.fingerprint ?? null,
          occurred_at: e.occurred_at,
          data: jsonText(e.data),
        });
        rowRecords.push({
          ord,
          org_id: r.org_id,
          id: r.id,
          flow_id: r.flow_id,
          trail_id: r.trail_id,
          name: r.name,
          type: r.type,
          kind: r.kind,
          is_compliant: r.is_compliant,
          artifact_fingerprint: r.artifact_fingerprint ?? null,
          target_artifacts: jsonText(r.target_artifacts),
          git_commit: r.git_commit ?? null,
          payload: jsonText(r.payload),
          description: r.description ?? '',
          origin_url: r.origin_url ?? '',
          user_data: jsonText(r.user_data),
          annotations: jsonText(r.annotations),
          external_urls: jsonText(r.external_urls),
          git_commit_info: jsonText(r.git_commit_info),
          repo_info: jsonText(r.repo_info),
          repo_id: r.repo_id ?? null,
          evidence_sha256: r.evidence_sha256 ?? null,
          evidence_filename: r.evidence_filename ?? null,
          evidence_size: r.evidence_size ?? null,
          evidence_content_type: r.evidence_content_type ?? null,
          created_by: r.created_by,
          created_at: r.created_at,
        });
      }
    }
    const result = await sql<{ org_id: string; id: string; version: string }>`
      with v as (
        select org_id, trail_id, version, flow_version, flow_names::jsonb as flow_names,
          compliance::jsonb as compliance, compliance_state, evaluated_at, last_modified_at, facts_last_id,
          facts::jsonb as facts
        from jsonb_to_recordset(${JSON.stringify(trailRecords)}::jsonb) as v(org_id text,
          trail_id text, version text, flow_version text, flow_names text, compliance text,
          compliance_state text, evaluated_at timestamptz, last_modified_at timestamptz, facts_last_id text,
          facts text)
      ), tr as (
        update trails t set compliance = v.compliance, compliance_state = v.compliance_state,
          evaluated_at = v.evaluated_at, last_modified_at = v.last_modified_at
        from v
        where t.org_id = v.org_id and t.id = v.trail_id and (v.version is null or (
          t.xmin::text = v.version
          and exists (select 1 from flows f
            where f.org_id = t.org_id and f.id = t.flow_id and f.xmin::text = v.flow_version)
          and not exists (select 1 from jsonb_array_elements_text(v.flow_names) n(name)
            where (${flowIdByName(sql.ref('t.org_id'), sql.ref('n.name'))}) is distinct from t.flow_id)))
        returning t.org_id, t.id, t.xmin::text as version
      ), fa as (
        insert into trail_facts (org_id, trail_id, last_id, facts)
        select v.org_id, v.trail_id, v.facts_last_id, v.facts from v
        join tr on tr.org_id = v.org_id and tr.id = v.trail_id
        on conflict (org_id, trail_id) do update set last_id = excluded.last_id, facts = excluded.facts
      ), ev as (
        insert into trail_events (org_id, trail_id, type, fingerprint, occurred_at, data)
        select e.org_id, e.trail_id, e.type, e.fingerprint, e.occurred_at, e.data::jsonb
        from jsonb_to_recordset(${JSON.stringify(eventRecords)}::jsonb) as e(ord int, org_id text,
          trail_id text, type text, fingerprint text, occurred_at timestamptz, data text)
        join tr on tr.org_id = e.org_id and tr.id = e.trail_id
        order by e.ord
      ), ins as (
        insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
          artifact_fingerprint, target_artifacts, git_commit, payload, description, origin_url, user_data,
          annotations, external_urls, git_commit_info, repo_info, repo_id, evidence_sha256, evidence_filename,
          evidence_size, evidence_content_type, created_by, created_at)
        select r.org_id, r.id, r.flow_id, r.trail_id, r.name, r.type, r.kind, r.is_compliant,
          r.artifact_fingerprint, r.target_artifacts::jsonb, r.git_commit, r.payload::jsonb, r.description,
          r.origin_url, r.user_data::jsonb, r.annotations::jsonb, r.external_urls::jsonb,
          r.git_commit_info::jsonb, r.repo_info::jsonb, r.repo_id, r.evidence_sha256, r.evidence_filename,
          r.evidence_size, r.evidence_content_type, r.created_by, r.created_at
        from jsonb_to_recordset(${JSON.stringify(rowRecords)}::jsonb) as r(ord int, org_id text, id text,
          flow_id text, trail_id text, name text, type text, kind text, is_compliant boolean,
          artifact_fingerprint text, target_artifacts text, git_commit text, payload text, description text,
          origin_url text, user_data text, annotations text, external_urls text, git_commit_info text,
          repo_info text, repo_id text, evidence_sha256 text, evidence_filename text, evidence_size bigint,
          evidence_content_type text, created_by text, created_at timestamptz)
        join tr on tr.org_id = r.org_id and tr.id = r.trail_id
        order by r.ord
      )
      select org_id, id, version from tr`.execute(db);
    return new Map(result.rows.map((r) => [`${r.org_id}:${r.id}`, r.version]));
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

  /**
   * `GET /attestations/{org}`: filters and a cursor (the seq of the last item seen), newest first.
   * With `nameMatches`, reads the candidates' names in chunks and tests them in process, reading
   * at most `maxScanned` candidates; `resumeAfter` is then the seq to continue from when the scan
   * stopped before the end with fewer than `limit` found (null otherwise).
   */
  async search(
    db: Db,
    orgId: string,
    s: AttestationSearch,
    limit: number,
    maxScanned = 10_000,
  ): Promise<{ rows: AttestationRowWithNames[]; resumeAfter: number | null }> {
    let q = withNames(db).where('x.org_id', '=', orgId);
    if (s.id) q = q.where('x.id', '=', s.id);
    if (s.name) q = q.where('x.name', '=', s.name);
    if (s.flowIds) q = q.where('x.flow_id', 'in', s.flowIds.length > 0 ? s.flowIds : ['']);
    if (s.trailName !== undefined) q = q.where('t.name', '=', s.trailName);
    if (s.types && s.types.length > 0) q = q.where('x.type', 'in', s.types);
    if (s.isCompliant !== undefined) q = q.where('x.is_compliant', '=', s.isCompliant);
    if (s.from) q = q.where('x.created_at', '>=', s.from);
    if (s.to) q = q.where('x.created_at', '<=', s.to);
    const test = s.nameMatches;
    if (!test) {
      if (s.afterSeq !== undefined) q = q.where('x.seq', '<', s.afterSeq);
      return { rows: await q.orderBy('x.seq', 'desc').limit(limit).execute(), resumeAfter: null };
    }
    const verdicts = new Map<string, boolean>();
    const found: number[] = [];
    let cursor = s.afterSeq;
    let scanned = 0;
    for (;;) {
      const want = Math.min(1000, maxScanned - scanned);
      const candidates = await (cursor === undefined ? q : q.where('x.seq', '<', cursor))
        .clearSelect()
        .select(['x.seq', 'x.name'])
        .orderBy('x.seq', 'desc')
        .limit(want)
        .execute();
      for (const c of candidates) {
        scanned += 1;
        cursor = Number(c.seq);
        let ok = verdicts.get(c.name);
        if (ok === undefined) {
          ok = test(c.name);
          verdicts.set(c.name, ok);
        }
        if (ok) found.push(cursor);
        if (found.length === limit) break;
      }
      if (found.length === limit || candidates.length < want) break;
      if (scanned >= maxScanned) {
        return { rows: await this.bySeqs(db, orgId, found), resumeAfter: cursor ?? null };
      }
    }
    return { rows: await this.bySeqs(db, orgId, found), resumeAfter: null };
  },

  /** Attestations by seq, newest first. */
  async bySeqs(db: Db, orgId: string, seqs: number[]): Promise<AttestationRowWithNames[]> {
    if (seqs.length === 0) return [];
    return withNames(db)
      .where('x.org_id', '=', orgId)
      .where('x.seq', 'in', seqs)
      .orderBy('x.seq', 'desc')
      .execute();
  },
};
