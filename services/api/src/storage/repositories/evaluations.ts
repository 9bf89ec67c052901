/**
 * Server-side evaluations (migration 0388): the durable queue the evaluation workers claim from,
 * the reads that build an evaluation's input, and the organizations' feature switches.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { EvaluationRequest, EvaluationsTable } from '../tables/evaluations.js';
import { toJsonNotNull } from './json.js';
import type { TrailRow } from './trails.js';

export type EvaluationRow = Selectable<EvaluationsTable>;

/** One trail's rows an evaluation's input is built from. */
export interface TrailInputRows {
  trail_id: string;
  events: number;
  attestations: Array<{ name: string; type: string; is_compliant: boolean; payload: unknown }>;
  artifacts: Array<{ name: string; fingerprint: string; state: string }>;
}

/** Rows still to run: pending, or running under a claim that has lapsed. */
const claimable = (now: Date) =>
  sql<boolean>`(status = 'pending' or (status = 'running' and claimed_until <= ${now}))`;

export const evaluationsRepository = {
  async insert(
    db: Db,
    row: {
      org_id: string;
      id: string;
      request: EvaluationRequest;
      policy_digest: string;
      requested_by: string;
      requested_at: Date;
    },
  ): Promise<void> {
    await db
      .insertInto('evaluations')
      .values({ ...row, status: 'pending', request: toJsonNotNull(row.request) })
      .execute();
  },

  async find(db: Db, orgId: string, id: string): Promise<EvaluationRow | undefined> {
    return db
      .selectFrom('evaluations')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The flow's trails among `names`. */
  async trailsNamed(db: Db, orgId: string, flowId: string, names: readonly string[]): Promise<TrailRow[]> {
    return db
      .selectFrom('trails')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('flow_id', '=', flowId)
      .where('name', 'in', [...names])
      .execute();
  },

  /** How many of the organization's evaluations are still to finish. */
  async unfinished(db: Db, orgId: string): Promise<number> {
    const row = await db
      .selectFrom('evaluations')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('org_id', '=', orgId)
      .where('status', 'in', ['pending', 'running'])
      .executeTakeFirstOrThrow();
    return row.n;
  },

  /**
   * Claims, for `leaseMs`, the oldest claimable evaluation of each organization not in
   * `skipOrgs`, oldest first, at most `limit`: one organization's backlog never fills a round.
   * A row claimed by another worker meanwhile is not returned (the update checks it again).
   */
  async claim(
    db: Db,
    now: Date,
    leaseMs: number,
    limit: number,
    skipOrgs: readonly string[],
  ): Promise<EvaluationRow[]> {
    const skip = skipOrgs.length > 0 ? sql`and org_id not in (${sql.join([...skipOrgs])})` : sql``;
    const heads = await sql<{ org_id: string; id: string }>`
      select org_id, id from (
        select org_id, id, requested_at,
          row_number() over (partition by org_id order by requested_at, id) as rn
        from evaluations
        where status in ('pending', 'running') and ${claimable(now)} ${skip}
      ) c
      where rn = 1
      order by requested_at, id
      limit ${limit}`.execute(db);
    if (heads.rows.length === 0) {
      return [];
    }
    return db
      .updateTable('evaluations')
      .set((eb) => ({
        status: 'running',
        claimed_until: new Date(now.getTime() + leaseMs),
        attempts: eb('attempts', '+', 1),
      }))
      .where((eb) => eb.or(heads.rows.map((h) => eb.and([eb('org_id', '=', h.org_id), eb('id', '=', h.id)]))))
      .where(claimable(now))
      .returningAll()
      .execute();
  },

  /**
   * Records the outcome of a claimed evaluation; false when the claim was lost meanwhile (its
   * lease lapsed and another worker took the row).
   */
  async finish(
    db: Db,
    row: Pick<EvaluationRow, 'org_id' | 'id' | 'attempts'>,
    outcome: {
      status: 'completed' | 'failed';
      result: { allow: boolean; violations: string[] } | null;
      error: { kind: string; message: string } | null;
      input_digest: string | null;
      decision_attestation_id: string | null;
      finished_at: Date;
    },
  ): Promise<boolean> {
    const done = await db
      .updateTable('evaluations')
      .set({
        status: outcome.status,
        result: outcome.result ? JSON.stringify(outcome.result) : null,
        error: outcome.error ? JSON.stringify(outcome.error) : null,
        input_digest: outcome.input_digest,
        decision_attestation_id: outcome.decision_attestation_id,
        finished_at: outcome.finished_at,
        claimed_until: null,
      })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.id)
      .where('status', '=', 'running')
      .where('attempts', '=', row.attempts)
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  },

  /**
   * For each trail: how many trail events it has had, the latest report of each attestation
   * name (per artifact, at most `maxAttestations`) and its artifacts (at most `maxArtifacts`).
   */
  async trailInputs(
    db: Db,
    orgId: string,
    trailIds: readonly string[],
    limits: { maxAttestations: number; maxArtifacts: number },
  ): Promise<Map<string, TrailInputRows>> {
    const out = new Map<string, TrailInputRows>(
      trailIds.map((id) => [id, { trail_id: id, events: 0, attestations: [], artifacts: [] }]),
    );
    if (trailIds.length === 0) {
      return out;
    }
    const ids = sql.join([...trailIds]);
    const events = await sql<{ trail_id: string; n: number }>`
      select trail_id, count(*)::int as n from trail_events
      where org_id = ${orgId} and trail_id in (${ids})
      group by trail_id`.execute(db);
    for (const e of events.rows) {
      out.get(e.trail_id)!.events = e.n;
    }
    const attestations = await sql<{
      trail_id: string;
      name: string;
      type: string;
      is_compliant: boolean;
      payload: unknown;
    }>`
      select trail_id, name, type, is_compliant, payload from (
        select trail_id, name, type, is_compliant, payload, seq,
          row_number() over (partition by trail_id order by seq desc) as rn
        from (
          select distinct on (trail_id, name, coalesce(artifact_fingerprint, ''))
            trail_id, name, type, is_compliant, payload, seq
          from attestations
          where org_id = ${orgId} and trail_id in (${ids})
          order by trail_id, name, coalesce(artifact_fingerprint, ''), seq desc
        ) latest
      ) bounded
      where rn <= ${limits.maxAttestations}
      order by trail_id, seq`.execute(db);
    for (const a of attestations.rows) {
      out
        .get(a.trail_id)!
        .attestations.push({ name: a.name, type: a.type, is_compliant: a.is_compliant, payload: a.payload });
    }
    const artifacts = await sql<{ trail_id: string; name: string; fingerprint: string; state: string }>`
      select trail_id, name, fingerprint, state from (
        select trail_id, coalesce(template_reference_name, filename) as name, fingerprint, state, seq,
          row_number() over (partition by trail_id order by seq) as rn
        from artifacts
        where org_id = ${orgId} and trail_id in (${ids})
      ) a
      where rn <= ${limits.maxArtifacts}
      order by trail_id, seq`.execute(db);
    for (const a of artifacts.rows) {
      out.get(a.trail_id)!.artifacts.push({ name: a.name, fingerprint: a.fingerprint, state: a.state });
    }
    return out;
  },

  /** The organization's switch for `feature`; undefined when never set. */
  async feature(db: Db, orgId: string, feature: string): Promise<boolean | undefined> {
    const row = await db
      .selectFrom('org_features')
      .select('enabled')
      .where('org_id', '=', orgId)
      .where('feature', '=', feature)
      .executeTakeFirst();
    return row?.enabled;
  },

  async setFeature(db: Db, orgId: string, feature: string, enabled: boolean, now: Date): Promise<void> {
    await db
      .insertInto('org_features')
      .values({ org_id: orgId, feature, enabled, updated_at: now })
      .onConflict((oc) => oc.columns(['org_id', 'feature']).doUpdateSet({ enabled, updated_at: now }))
      .execute();
  },
};
