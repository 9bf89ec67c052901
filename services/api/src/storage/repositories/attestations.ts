/** Attestations: append-only; every one is kept. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationsTable, TrailEventsTable, TrailsTable } from '../tables/evidence.js';
import { flowIdByName, type TrailFacts } from './trails.js';
import { ATTESTATION_INSERT, batchRecords } from './attestation-batch-records.js';

export type AttestationRow = Selectable<AttestationsTable>;
export type AttestationRowWithNames = AttestationRow & { trail_name: string; flow_name: string };

/** The payload keys an artifact's evidence shows (usecases/evidence/artifacts.ts \`presentEvidence\`). */
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
  AttestationRowWithNames,
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

/** One attestation's rows: the attestation and its trail event. */
export interface StoredAttestation {
  row: Insertable<AttestationsTable> & { created_at: Date };
  event: Insertable<TrailEventsTable> & { occurred_at: Date };
}

/** Attestations to one trail, and the trail after them (`insertAttestationBatch`). */
export interface TrailAttestationBatch {
  orgId: string;
  trailId: string;
  /**
   * What the attestations were planned on (`trailsRepository.readTrailsForAttestations`): the versions of the
   * trail and flow rows, and the flow names they were sent to, which must all still name the
   * trail's flow. Null: the caller holds the trail's lock.
   */
  ifUnchanged: { version: string; flowVersion: string; flowNames: readonly string[] } | null;
  trail: Pick<
    Updateable<TrailsTable>,
    'compliance' | 'compliance_state' | 'evaluated_at' | 'last_modified_at'
  >;
  /**
   * The trail's facts after the last attestation (`trailsRepository.readTrailsForAttestations` reads
   * them); null leaves the stored ones, which are then read with the reports after them.
   */
  facts: TrailFacts | null;
  attestations: StoredAttestation[];
  /**
   * Artifact states after the last attestation, each written only if its row is still at `version`
   * (the read's; null: the caller holds the trail's lock), else nothing of the trail is written.
   */
  artifacts?: ReadonlyArray<ArtifactStateWrite>;
  /** Fingerprints whose compliance changed: every environment where one runs is marked, at `at`. */
  marks?: { fingerprints: readonly string[]; at: Date };
}

/** An artifact's new state (`EvaluationWrites['artifacts']`) and the row version it was planned on. */
export interface ArtifactStateWrite {
  id: string;
  state: string;
  compliance: string;
  /**
   * The key of the trail's `artifacts_statuses` whose document is `compliance`, when the batch's
   * trail compliance holds it: the statement then copies it from there instead of being sent it again.
   */
  statusKey?: string | undefined;
  version: string | null;
}

/** The trails a batch wrote (`org_id:trail_id` to the row's new version), and the marks it made. */
export type StoredTrails = Map<string, string> & { marks: number };

export const attestationsRepository = {
  async insert(db: Db, row: Insertable<AttestationsTable>): Promise<AttestationRow> {
    return db.insertInto('attestations').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * Stores an attestation in one statement: the attestation, its trail event and the trail's new
   * evaluation and facts. With `ifUnchanged` nothing is written unless it still holds; returns
   * whether it was stored.
   */
  async insertAttestation(
    db: Db,
    report: Omit<TrailAttestationBatch, 'attestations' | 'orgId' | 'trailId'> & StoredAttestation,
  ): Promise<boolean> {
    const { row, event, ...trail } = report;
    const stored = await attestationsRepository.insertAttestationBatch(db, [
      { ...trail, orgId: row.org_id, trailId: row.trail_id, attestations: [{ row, event }] },
    ]);
    return stored.size === 1;
  },

  /**
   * Stores attestations to several trails in one statement: per trail its attestations (with their
   * trail events, in the order given), its evaluation and facts after the last of them, its
   * artifacts' new states and the re-evaluation marks of environments running a changed
   * fingerprint. A trail with `ifUnchanged` is written only if that still holds (and its artifacts
   * are at the versions given), and then with all of its attestations. Returns the trails written,
   * as `org_id:trail_id`, each with its row's new version (its artifacts written share it: one
   * statement, one transaction id), and how many marks were made.
   */
  async insertAttestationBatch(db: Db, trails: readonly TrailAttestationBatch[]): Promise<StoredTrails> {
    if (trails.length === 0) {
      return Object.assign(new Map<string, string>(), { marks: 0 });
    }
    const { trailRecords, eventRecords, rowRecords } = batchRecords(trails);
    const orgIds = [...new Set(trails.map((t) => t.orgId))];
    // One organization (nearly every batch) as a scalar: PostgreSQL costs a generic plan's
    // `= any($n)` as ten probes per array, so two arrays made the generic plan look ten times
    // dearer than it is, and it planned the statement afresh on every execution, about a fifth
    // of its CPU for the statement on a 1,000,000-attestation organization. With the scalar, the
    // generic plan (the same index scan) is used from the sixth execution on.
    const inOrgs = (column: string) =>
      orgIds.length === 1
        ? sql`${sql.ref(column)} = ${orgIds[0]}`
        : sql`${sql.ref(column)} = any(${orgIds}::text[])`;
    const trailIds = trails.map((t) => t.trailId);
    const artifactIds = trails.flatMap((t) => (t.artifacts ?? []).map((a) => a.id));
    // Rows are locked trail first, then its artifacts (`au` joins `tr`), as every other writer does.
    const result = await sql<{ org_id: string; id: string; version: string; marks: number }>`
      with v as (
        select * from jsonb_to_recordset(${trailRecords}::jsonb) as v(org_id text,
          trail_id text, version text, flow_version text, flow_names jsonb, compliance jsonb,
          compliance_state text, evaluated_at timestamptz, last_modified_at timestamptz, facts_last_id text,
          facts jsonb, artifacts jsonb, marks jsonb, marked_at timestamptz)
      ), tr as (
        update trails t set compliance = v.compliance, compliance_state = v.compliance_state,
          evaluated_at = v.evaluated_at, last_modified_at = v.last_modified_at
        from v
        -- The trails by key as well as by join: the join alone, planned for the 100 rows a record
        -- set is assumed to hold, reads the whole trails table while it is small enough.
        where ${inOrgs('t.org_id')} and t.id = any(${trailIds}::text[])
          and t.org_id = v.org_id and t.id = v.trail_id and (v.version is null or (
          t.xmin::text = v.version
          -- A scalar subquery, probed by key: an exists here is planned as a hash of every flow.
          and (select f.xmin::text from flows f where f.org_id = t.org_id and f.id = t.flow_id) = v.flow_version
          and not exists (select 1 from jsonb_array_elements_text(v.flow_names) n(name)
            where (${flowIdByName(sql.ref('t.org_id'), sql.ref('n.name'))}) is distinct from t.flow_id)
          and not exists (select 1 from jsonb_to_recordset(v.artifacts) x(id text, version text)
            left join artifacts a on a.org_id = t.org_id and a.trail_id = t.id and a.id = x.id
            where a.xmin::text is distinct from x.version)))
        returning t.org_id, t.id, t.xmin::text as version
      ), au as (
        update artifacts a set state = x.state,
          compliance = coalesce(x.compliance, v.compliance -> 'artifacts_statuses' -> x.status_key)
        from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
        cross join jsonb_to_recordset(v.artifacts)
          x(id text, state text, compliance jsonb, status_key text, version text)
        -- By key as well, as the trails above: joined only, it was planned as a scan of the
        -- organization's artifacts for each trail written while the table was small.
        where ${inOrgs('a.org_id')} and a.id = any(${artifactIds}::text[])
          and a.org_id = v.org_id and a.trail_id = v.trail_id and a.id = x.id
          and (x.version is null or a.xmin::text = x.version)
      ), mk as (
        -- As markEnvironmentsRunning: one mark per environment where a changed fingerprint runs.
        insert into reevaluation_marks (org_id, id, environment_id, marked_at, reason)
        select m.org_id, substr(gen_random_uuid()::text, 1, 32), m.environment_id, m.marked_at, 'provenance'
        from (select distinct v.org_id, l.environment_id, v.marked_at
          from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
          cross join jsonb_array_elements_text(v.marks) f(fingerprint)
          join runtime_live l on l.org_id = v.org_id and l.fingerprint = f.fingerprint) m
        returning 1
      ), fa as (
        insert into trail_facts (org_id, trail_id, last_id, facts)
        select v.org_id, v.trail_id, v.facts_last_id, v.facts from v
        join tr on tr.org_id = v.org_id and tr.id = v.trail_id
        where v.facts is not null
        on conflict (org_id, trail_id) do update set last_id = excluded.last_id, facts = excluded.facts
      ), ev as (
        insert into trail_events (org_id, trail_id, type, fingerprint, occurred_at, data)
        select e.org_id, e.trail_id, e.type, e.fingerprint, e.occurred_at, e.data
        from jsonb_to_recordset(${eventRecords}::jsonb) as e(ord int, org_id text,
          trail_id text, type text, fingerprint text, occurred_at timestamptz, data jsonb)
        join tr on tr.org_id = e.org_id and tr.id = e.trail_id
        order by e.ord
      ), ins as (
        insert into attestations (${ATTESTATION_INSERT.names})
        select ${ATTESTATION_INSERT.values}
        from jsonb_to_recordset(${rowRecords}::jsonb) as r(ord int, ${ATTESTATION_INSERT.record})
        join tr on tr.org_id = r.org_id and tr.id = r.trail_id
        order by r.ord
      )
      select org_id, id, version, (select count(*)::int from mk) as marks from tr`.execute(db);
    const stored = new Map(result.rows.map((r) => [`${r.org_id}:${r.id}`, r.version]));
    return Object.assign(stored, { marks: Number(result.rows[0]?.marks ?? 0) });
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
    if (ids.length === 0) {
      return [];
    }
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
    if ('fingerprint' in scope) {
      q = q.where('x.artifact_fingerprint', '=', scope.fingerprint);
    }
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
    if (span.from) {
      q = q.where('x.created_at', '>=', span.from);
    }
    if (span.to) {
      q = q.where('x.created_at', '<=', span.to);
    }
    // The total from the attestations alone (their trail and flow always exist): joined, it was
    // counted by hashing every trail of the organization against every attestation of the flow.
    // It still reads each of the flow's attestations in the span (an index-only scan at best).
    const counted = sql<{ n: string | number }>`
      select count(*) as n from attestations
      where org_id = ${orgId} and flow_id = ${flowId}
        ${span.from ? sql`and created_at >= ${span.from}` : sql``}
        ${span.to ? sql`and created_at <= ${span.to}` : sql``}`;
    const [count, rows] = await Promise.all([
      counted.execute(db),
      q.orderBy('x.seq', 'desc').limit(page.limit).offset(page.offset).execute(),
    ]);
    const total = Number(count.rows[0]?.n ?? 0);
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
    if (s.id) {
      q = q.where('x.id', '=', s.id);
    }
    if (s.name) {
      q = q.where('x.name', '=', s.name);
    }
    if (s.flowIds) {
      q = q.where('x.flow_id', 'in', s.flowIds.length > 0 ? s.flowIds : ['']);
    }
    if (s.trailName !== undefined) {
      q = q.where('t.name', '=', s.trailName);
    }
    if (s.types && s.types.length > 0) {
      q = q.where('x.type', 'in', s.types);
    }
    if (s.isCompliant !== undefined) {
      q = q.where('x.is_compliant', '=', s.isCompliant);
    }
    if (s.from) {
      q = q.where('x.created_at', '>=', s.from);
    }
    if (s.to) {
      q = q.where('x.created_at', '<=', s.to);
    }
    const test = s.nameMatches;
    if (!test) {
      if (s.afterSeq !== undefined) {
        q = q.where('x.seq', '<', s.afterSeq);
      }
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
        if (ok) {
          found.push(cursor);
        }
        if (found.length === limit) {
          break;
        }
      }
      if (found.length === limit || candidates.length < want) {
        break;
      }
      if (scanned >= maxScanned) {
        return { rows: await this.bySeqs(db, orgId, found), resumeAfter: cursor ?? null };
      }
    }
    return { rows: await this.bySeqs(db, orgId, found), resumeAfter: null };
  },

  /** Attestations by seq, newest first. */
  async bySeqs(db: Db, orgId: string, seqs: number[]): Promise<AttestationRowWithNames[]> {
    if (seqs.length === 0) {
      return [];
    }
    return withNames(db)
      .where('x.org_id', '=', orgId)
      .where('x.seq', 'in', seqs)
      .orderBy('x.seq', 'desc')
      .execute();
  },
};
