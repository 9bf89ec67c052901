/** Attestations: append-only; every report is kept. */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationsTable, TrailEventsTable } from '../tables/evidence.js';

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

  /** Inserts an attestation and its trail event in one statement. */
  async insertWithEvent(
    db: Db,
    row: Insertable<AttestationsTable>,
    event: Insertable<TrailEventsTable>,
  ): Promise<AttestationRow> {
    return db
      .with('ev', (qb) => qb.insertInto('trail_events').values(event).returning('seq'))
      .insertInto('attestations')
      .values(row)
      .returningAll()
      .executeTakeFirstOrThrow();
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
