/** Attestations: append-only; every one is kept. */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { AttestationsTable } from '../tables/evidence.js';

export type AttestationRow = Selectable<AttestationsTable>;
export type AttestationRowWithNames = AttestationRow & {
  trail_name: string;
  flow_name: string;
  /** The verification of its signed evidence (attestation_signatures); null: none. */
  signature_verified: boolean | null;
  signature_kind: string | null;
  signature_identity: string | null;
  signature_issuer: string | null;
  signature_reason: string | null;
};

const withNames = (db: Db) =>
  db
    .selectFrom('attestations as x')
    .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'x.org_id').onRef('t.id', '=', 'x.trail_id'))
    .innerJoin('flows as f', (j) => j.onRef('f.org_id', '=', 'x.org_id').onRef('f.id', '=', 'x.flow_id'))
    .leftJoin('attestation_signatures as sg', (j) =>
      j.onRef('sg.org_id', '=', 'x.org_id').onRef('sg.attestation_id', '=', 'x.id'),
    )
    .selectAll('x')
    .select([
      't.name as trail_name',
      'f.name as flow_name',
      'sg.verified as signature_verified',
      'sg.kind as signature_kind',
      'sg.identity as signature_identity',
      'sg.issuer as signature_issuer',
      'sg.reason as signature_reason',
    ]);

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

/** The attestations matching a search's filters (its cursor and name pattern aside). */
function filtered(db: Db, orgId: string, s: AttestationSearch) {
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
  return q;
}

export const attestationsRepository = {
  async insert(db: Db, row: Insertable<AttestationsTable>): Promise<AttestationRow> {
    return db.insertInto('attestations').values(row).returningAll().executeTakeFirstOrThrow();
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
  /** How many attestations match `s` in all (its cursor and name pattern aside), for a trail's pages. */
  async count(db: Db, orgId: string, s: AttestationSearch): Promise<number> {
    const row = await filtered(db, orgId, s)
      .clearSelect()
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  },

  async search(
    db: Db,
    orgId: string,
    s: AttestationSearch,
    limit: number,
    maxScanned = 10_000,
  ): Promise<{ rows: AttestationRowWithNames[]; resumeAfter: number | null }> {
    let q = filtered(db, orgId, s);
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
