/**
 * Retention classes, legal holds, disposition records, and the statements the retention job
 * removes records with (usecases/retention/). Every removal selects a bounded batch first, in
 * a keyset order, skipping rows another transaction holds, so replicas running the job side by
 * side take different rows and an ingest transaction never waits long for one.
 */
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Selectable,
  type SqlBool,
} from 'kysely';
import type { HeldRange } from '../../domain/retention.js';
import type { Db } from '../database.js';
import { countRowsUpTo } from './queries.js';
import type { DispositionsTable, LegalHoldsTable, RetentionDocument } from '../tables/retention.js';

export type LegalHoldRow = Selectable<LegalHoldsTable>;
export type DispositionRow = Selectable<DispositionsTable>;

/** Where a keyset scan stopped: the time and id of the last row it gave. */
export interface Cursor {
  at: Date;
  id: string;
}

/** A trail whose period passed. */
export interface ExpiredTrail {
  id: string;
  name: string;
  created_at: Date;
}

/** `at` lies in none of `ranges` (a column compared with each range's ends). */
function outside<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  start: Expression<Date>,
  end: Expression<Date>,
  ranges: readonly HeldRange[],
): Expression<SqlBool> {
  // A record spanning [start, end] is held when it overlaps a range: start <= to and end >= from.
  return eb.and(
    ranges.map((r) => {
      const conds: Expression<SqlBool>[] = [];
      if (r.to) {
        conds.push(sql<SqlBool>`${start} > ${r.to}`);
      }
      if (r.from) {
        conds.push(sql<SqlBool>`${end} < ${r.from}`);
      }
      // A range open at both ends holds everything.
      return conds.length === 0 ? sql<SqlBool>`false` : eb.or(conds);
    }),
  );
}

export const retentionRepository = {
  async settings(
    db: Db,
    orgId: string,
  ): Promise<{ settings: RetentionDocument; updated_at: Date; updated_by: string } | undefined> {
    return db
      .selectFrom('retention_settings')
      .select(['settings', 'updated_at', 'updated_by'])
      .where('org_id', '=', orgId)
      .executeTakeFirst();
  },

  async putSettings(db: Db, orgId: string, doc: RetentionDocument, by: string, at: Date): Promise<void> {
    const settings = JSON.stringify(doc);
    await db
      .insertInto('retention_settings')
      .values({ org_id: orgId, settings, updated_by: by, updated_at: at })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ settings, updated_by: by, updated_at: at }))
      .execute();
  },

  /** The organizations that set retention classes. */
  async orgsWithSettings(db: Db): Promise<Array<{ id: string; name: string }>> {
    return db
      .selectFrom('retention_settings as r')
      .innerJoin('orgs as o', 'o.id', 'r.org_id')
      .select(['o.id', 'o.name'])
      .orderBy('o.name')
      .execute();
  },

  async holds(db: Db, orgId: string): Promise<LegalHoldRow[]> {
    return db.selectFrom('legal_holds').selectAll().where('org_id', '=', orgId).orderBy('name').execute();
  },

  async countHolds(db: Db, orgId: string): Promise<number> {
    const { n } = await db
      .selectFrom('legal_holds')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return Number(n);
  },

  /** Inserts a hold; false, and nothing written, when the organization has one of that name. */
  async insertHold(db: Db, row: Insertable<LegalHoldsTable>): Promise<boolean> {
    const r = await db
      .insertInto('legal_holds')
      .values(row)
      .onConflict((oc) => oc.columns(['org_id', 'name']).doNothing())
      .returning('name')
      .executeTakeFirst();
    return r !== undefined;
  },

  async deleteHold(db: Db, orgId: string, name: string): Promise<boolean> {
    const r = await db
      .deleteFrom('legal_holds')
      .where('org_id', '=', orgId)
      .where('name', '=', name)
      .returning('name')
      .executeTakeFirst();
    return r !== undefined;
  },

  async insertDisposition(db: Db, row: Insertable<DispositionsTable>): Promise<void> {
    await db.insertInto('dispositions').values(row).execute();
  },

  /** Newest first; `limit` rows from `offset`. */
  async dispositions(
    db: Db,
    orgId: string,
    page: { offset: number; limit: number },
  ): Promise<DispositionRow[]> {
    return db
      .selectFrom('dispositions')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('removed_at', 'desc')
      .orderBy('id', 'desc')
      .offset(page.offset)
      .limit(page.limit)
      .execute();
  },

  /** The organization's disposition records, counted up to `cap + 1` (each run adds more). */
  async countDispositions(db: Db, orgId: string, cap: number): Promise<number> {
    return countRowsUpTo(db, db.selectFrom('dispositions').select('id').where('org_id', '=', orgId), cap);
  },

  /**
   * At most `limit` trails of the flow untouched since before `before` (created and last changed
   * before it), none a hold keeps, after `after` in (created_at, id) order; rows another
   * transaction holds are skipped, and those returned stay locked until the caller's commits.
   */
  async expiredTrails(
    db: Db,
    orgId: string,
    flowId: string,
    before: Date,
    held: readonly HeldRange[],
    after: Cursor | null,
    limit: number,
  ): Promise<ExpiredTrail[]> {
    return db
      .selectFrom('trails')
      .select(['id', 'name', 'created_at'])
      .where('org_id', '=', orgId)
      .where('flow_id', '=', flowId)
      .where('created_at', '<', before)
      .where('last_modified_at', '<', before)
      .where((eb) => outside(eb, eb.ref('created_at'), eb.ref('last_modified_at'), held))
      .$if(after !== null, (q) =>
        q.where((eb) =>
          eb.or([
            eb('created_at', '>', after!.at),
            eb.and([eb('created_at', '=', after!.at), eb('id', '>', after!.id)]),
          ]),
        ),
      )
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
  },

  /** The attestations of these trails and the evidence files they name. */
  async trailContents(
    db: Db,
    orgId: string,
    trailIds: readonly string[],
  ): Promise<{ attestations: Map<string, number>; digests: string[]; artifactIds: string[] }> {
    const ids = [...trailIds];
    const counts = await sql<{ trail_id: string; n: string }>`
      select trail_id, count(*) as n from attestations
      where org_id = ${orgId} and trail_id = any(${ids}::text[]) group by trail_id`.execute(db);
    const digests = await sql<{ d: string }>`
      select distinct evidence_sha256 as d from attestations
      where org_id = ${orgId} and trail_id = any(${ids}::text[]) and evidence_sha256 is not null
      order by d`.execute(db);
    const artifacts = await db
      .selectFrom('artifacts')
      .select('id')
      .where('org_id', '=', orgId)
      .where('trail_id', 'in', ids.length > 0 ? ids : [''])
      .execute();
    return {
      attestations: new Map(counts.rows.map((r) => [r.trail_id, Number(r.n)])),
      digests: digests.rows.map((r) => r.d),
      artifactIds: artifacts.map((r) => r.id),
    };
  },

  /**
   * Deletes the trails (their attestations, artifacts, events, facts and SBOM index go with them:
   * migrations 0305, 0350, 0383), and clears what insight derived from their artifact records: lead
   * times go, deployments keep their history and lose the link, signature verifications go.
   * Returns the trails deleted.
   */
  async deleteTrails(
    db: Db,
    orgId: string,
    trailIds: readonly string[],
    artifactIds: readonly string[],
  ): Promise<string[]> {
    const arts = [...artifactIds];
    if (arts.length > 0) {
      await sql`delete from artifact_lead_times where org_id = ${orgId} and artifact_id = any(${arts}::text[])`.execute(
        db,
      );
      await sql`update deployments set artifact_id = null, html_url = null
        where org_id = ${orgId} and artifact_id = any(${arts}::text[])`.execute(db);
    }
    // Verifications of signed evidence name attestations by id, with no cascade.
    await sql`delete from attestation_signatures s using attestations a
      where s.org_id = ${orgId} and a.org_id = ${orgId} and a.trail_id = any(${[...trailIds]}::text[])
        and s.attestation_id = a.id`.execute(db);
    const gone = await sql<{ id: string }>`
      delete from trails where org_id = ${orgId} and id = any(${[...trailIds]}::text[]) returning id`.execute(
      db,
    );
    return gone.rows.map((r) => r.id);
  },

  /** Evaluations whose decision attestation is gone keep their result and lose the link. */
  async unlinkRemovedDecisions(db: Db, orgId: string): Promise<void> {
    await sql`update evaluations e set decision_attestation_id = null
      where e.org_id = ${orgId} and e.decision_attestation_id is not null
        and not exists (select 1 from attestations a where a.org_id = e.org_id and a.id = e.decision_attestation_id)`.execute(
      db,
    );
  },

  /** Of these digests, those no attestation names outside `exceptTrails`. */
  async unnamed(
    db: Db,
    orgId: string,
    digests: readonly string[],
    exceptTrails: readonly string[],
  ): Promise<string[]> {
    if (digests.length === 0) {
      return [];
    }
    const r = await sql<{ d: string }>`
      select d from unnest(${[...digests]}::text[]) as x(d)
      where not exists (
        select 1 from attestations a
        where a.org_id = ${orgId} and a.evidence_sha256 = x.d and not (a.trail_id = any(${[...exceptTrails]}::text[])))
      order by d`.execute(db);
    return r.rows.map((x) => x.d);
  },

  /**
   * Attestations of the flow made before `before` that name an evidence file, in trails no hold
   * keeps, after `after` in (created_at, id) order: at most `limit`.
   */
  async expiredFileAttestations(
    db: Db,
    orgId: string,
    flowId: string,
    before: Date,
    held: readonly HeldRange[],
    after: Cursor | null,
    limit: number,
  ): Promise<Array<{ id: string; created_at: Date; evidence_sha256: string }>> {
    const rows = await db
      .selectFrom('attestations as a')
      .innerJoin('trails as t', (j) => j.onRef('t.org_id', '=', 'a.org_id').onRef('t.id', '=', 'a.trail_id'))
      .select(['a.id', 'a.created_at', 'a.evidence_sha256'])
      .where('a.org_id', '=', orgId)
      .where('a.flow_id', '=', flowId)
      .where('a.created_at', '<', before)
      .where('a.evidence_sha256', 'is not', null)
      .where((eb) => outside(eb, eb.ref('t.created_at'), eb.ref('t.last_modified_at'), held))
      .$if(after !== null, (q) =>
        q.where((eb) =>
          eb.or([
            eb('a.created_at', '>', after!.at),
            eb.and([eb('a.created_at', '=', after!.at), eb('a.id', '>', after!.id)]),
          ]),
        ),
      )
      .orderBy('a.created_at')
      .orderBy('a.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, created_at: r.created_at, evidence_sha256: r.evidence_sha256! }));
  },

  /**
   * Of these digests, those every attestation naming them has passed its file period: made before
   * its flow's cutoff (`cutoffs`: flow id -> time; a flow absent keeps its files), in a trail no
   * hold of its flow keeps (`held`: flow id -> ranges).
   */
  async filesPastPeriod(
    db: Db,
    orgId: string,
    digests: readonly string[],
    cutoffs: ReadonlyMap<string, Date>,
    held: ReadonlyMap<string, readonly HeldRange[]>,
  ): Promise<string[]> {
    if (digests.length === 0) {
      return [];
    }
    const flowIds = [...cutoffs.keys()];
    const times = flowIds.map((f) => cutoffs.get(f)!.toISOString());
    const heldFlows: string[] = [];
    const heldFrom: Array<string | null> = [];
    const heldTo: Array<string | null> = [];
    for (const [flow, ranges] of held) {
      for (const r of ranges) {
        heldFlows.push(flow);
        heldFrom.push(r.from?.toISOString() ?? null);
        heldTo.push(r.to?.toISOString() ?? null);
      }
    }
    const r = await sql<{ d: string }>`
      with c as (select * from unnest(${flowIds}::text[], ${times}::timestamptz[]) as c(flow_id, before)),
           h as (select * from unnest(${heldFlows}::text[], ${heldFrom}::timestamptz[], ${heldTo}::timestamptz[])
                 as h(flow_id, from_at, to_at))
      select d from unnest(${[...digests]}::text[]) as x(d)
      where not exists (
        select 1 from attestations a
        join trails t on t.org_id = a.org_id and t.id = a.trail_id
        left join c on c.flow_id = a.flow_id
        where a.org_id = ${orgId} and a.evidence_sha256 = x.d
          and (c.before is null or a.created_at >= c.before
               or exists (select 1 from h where h.flow_id = a.flow_id
                          and (h.to_at is null or t.created_at <= h.to_at)
                          and (h.from_at is null or t.last_modified_at >= h.from_at))))
      order by d`.execute(db);
    return r.rows.map((x) => x.d);
  },

  /**
   * At most `limit` snapshots of the environment taken before `before`, never its latest, none a
   * hold keeps, numbered above `after`; locked as `expiredTrails` locks.
   */
  async expiredSnapshots(
    db: Db,
    orgId: string,
    envId: string,
    before: Date,
    latest: number,
    held: readonly HeldRange[],
    after: number,
    limit: number,
  ): Promise<Array<{ index: number; created_at: Date }>> {
    return db
      .selectFrom('runtime_snapshots')
      .select(['index', 'created_at'])
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('created_at', '<', before)
      .where('index', '<', latest)
      .where('index', '>', after)
      .where((eb) => outside(eb, eb.ref('created_at'), eb.ref('created_at'), held))
      .orderBy('index')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
  },

  /**
   * Deletes the snapshots numbered `indexes` and what only they read: the fingerprint states no
   * remaining snapshot is made of (a state is read by snapshot k when it began at or before k and
   * ended after k, or exited at k), the deployments recorded at them and the stretches of
   * non-compliance that began and ended among them. Lead times stay: they belong to artifact
   * records, which remaining snapshots show. Every remaining snapshot reads as before.
   */
  async deleteSnapshots(db: Db, orgId: string, envId: string, indexes: readonly number[]): Promise<number[]> {
    const idx = [...indexes];
    // A kept snapshot whose successor goes keeps that successor's time.
    await sql`
      update runtime_snapshots k set superseded_at = n.created_at
      from runtime_snapshots n
      where k.org_id = ${orgId} and k.environment_id = ${envId} and k.superseded_at is null
        and n.org_id = k.org_id and n.environment_id = k.environment_id and n.index = k.index + 1
        and n.index = any(${idx}::int[]) and not (k.index = any(${idx}::int[]))`.execute(db);
    const gone = await sql<{ index: number }>`
      delete from runtime_snapshots
      where org_id = ${orgId} and environment_id = ${envId} and index = any(${idx}::int[])
      returning index`.execute(db);
    const removed = gone.rows.map((r) => Number(r.index)).sort((a, b) => a - b);
    if (removed.length === 0) {
      return removed;
    }
    const lo = removed[0]!;
    const hi = removed[removed.length - 1]!;
    await sql`
      delete from runtime_states s
      where s.org_id = ${orgId} and s.environment_id = ${envId}
        and s.to_index is not null and s.to_index >= ${lo} and s.from_index <= ${hi}
        and not exists (
          select 1 from runtime_snapshots k
          where k.org_id = s.org_id and k.environment_id = s.environment_id
            and k.index >= s.from_index
            and (k.index < s.to_index or (k.index = s.to_index and s.exited)))`.execute(db);
    await sql`delete from deployments
      where org_id = ${orgId} and environment_id = ${envId} and snapshot_index = any(${removed}::int[])`.execute(
      db,
    );
    await sql`
      delete from compliance_incidents i
      where i.org_id = ${orgId} and i.environment_id = ${envId}
        and i.restored_index is not null and i.started_index <= ${hi} and i.restored_index >= ${lo}
        and not exists (
          select 1 from runtime_snapshots k
          where k.org_id = i.org_id and k.environment_id = i.environment_id
            and k.index >= i.started_index and k.index <= i.restored_index)`.execute(db);
    return removed;
  },

  /** At most `limit` audit entries written before `before`, none a hold keeps, after `after` (id order). */
  async expiredAuditEntries(
    db: Db,
    orgId: string,
    before: Date,
    held: readonly HeldRange[],
    after: string | null,
    limit: number,
  ): Promise<Array<{ id: string; at: Date }>> {
    return db
      .selectFrom('audit_log')
      .select(['id', 'at'])
      .where('org_id', '=', orgId)
      .where('at', '<', before)
      .where((eb) => outside(eb, eb.ref('at'), eb.ref('at'), held))
      .$if(after !== null, (q) => q.where(sql<SqlBool>`id > ${after}::bigint`))
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
  },

  async deleteAuditEntries(db: Db, orgId: string, ids: readonly string[]): Promise<string[]> {
    const r = await sql<{ id: string }>`
      delete from audit_log where org_id = ${orgId} and id = any(${[...ids]}::bigint[]) returning id`.execute(
      db,
    );
    return r.rows.map((x) => String(x.id));
  },
};
