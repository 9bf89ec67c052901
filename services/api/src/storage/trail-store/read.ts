/**
 * Reads of the trail aggregate: the trail locked with its flow, the trails attestations name with
 * their row versions, and what a trail's evaluation reads (its artifacts, its attestations and its
 * facts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.js';
import { flowIdByName, type FlowRow } from '../repositories/flows.js';
import { withDates } from '../repositories/json-rows.js';
import type { TrailRow } from '../repositories/trails.js';
import type { AttestationTrailRead, EvaluationInputs } from './types.js';

type FactRow = Omit<EvaluationInputs['attestations'][number], 'seq'> & { seq?: number };

/** The columns `evaluationInputsColumns` selects. */
interface EvaluationInputsColumns {
  artifacts: EvaluationInputs['artifacts'];
  /**
   * [true, the trail's facts, the reports after the latest they include] while they stand, else
   * [false, every report].
   */
  attestations_source: [true, FactRow[], FactRow[]] | [false, FactRow[]];
}

/** What compliance reads of each report, as `evaluationInputsColumns` selects it. */
const FACT_COLUMNS = sql.raw(`id, seq, name, type, kind, is_compliant, artifact_fingerprint, target_artifacts,
  git_commit, payload ->> 'original_attestation_type' as original_type`);

/**
 * Select-list columns with a trail's evaluation inputs, for the trail with these org and trail
 * ids (values, or references to an outer query's columns): its artifacts, and its attestations:
 * the trail's facts (migration 0303) and the reports after the latest they include, while that
 * report is the trail's, else every report. Facts with the reports after them evaluate as the
 * whole history does (`essentialAttestations`), so a write need not store them each time
 * (`FACTS_WRITTEN_EVERY`). COALESCE reads the whole history only when no facts stand.
 */
function evaluationInputsColumns(orgId: RawBuilder<unknown>, trailId: RawBuilder<unknown>) {
  const reports = (after: RawBuilder<unknown> | null) => sql`
    (select coalesce(json_agg(x order by x.seq), '[]'::json) from (
      select ${FACT_COLUMNS} from attestations where org_id = ${orgId} and trail_id = ${trailId}
        ${after ? sql`and seq > ${after}` : sql``}) x)`;
  return sql`
    (select coalesce(json_agg(a order by a.seq), '[]'::json) from (
      select id, fingerprint, template_reference_name, git_commit, seq, state, compliance
      from artifacts where org_id = ${orgId} and trail_id = ${trailId}) a) as artifacts,
    coalesce(
      (select json_build_array(true, tf.facts, ${reports(sql.ref('la.seq'))}) from trail_facts tf
        join attestations la on la.org_id = tf.org_id and la.id = tf.last_id and la.trail_id = tf.trail_id
        where tf.org_id = ${orgId} and tf.trail_id = ${trailId}),
      json_build_array(false, ${reports(null)})
    ) as attestations_source`;
}

/**
 * The inputs from `evaluationInputsColumns`, and how many of the trail's reports its stored facts
 * leave out (all of them without facts). Facts and the reports after them are numbered in order
 * (`seq` 1, 2, ...), which is all an evaluation reads of `seq`.
 */
function fromEvaluationInputsColumns(row: EvaluationInputsColumns): {
  inputs: EvaluationInputs;
  factsBehind: number;
} {
  const source = row.attestations_source;
  if (!source[0]) {
    const all = source[1] as EvaluationInputs['attestations'];
    return { inputs: { artifacts: row.artifacts, attestations: all }, factsBehind: all.length };
  }
  const [, facts, after] = source;
  return {
    inputs: {
      artifacts: row.artifacts,
      attestations: [...facts, ...after].map((a, i) => ({ ...a, seq: i + 1 })),
    },
    factsBehind: after.length,
  };
}

/** A flow row read back with row_to_json. */
const flowFromJson = (f: FlowRow): FlowRow => withDates(f, ['created_at', 'last_modified_at']);

export const trailReads = {
  /**
   * The flow (by name or an old name) and its trail, the trail locked, in one round trip;
   * undefined when either is missing (the caller then creates what is missing).
   */
  async lockWithFlow(
    db: Db,
    orgId: string,
    flowName: string,
    trailName: string,
  ): Promise<{ flow: FlowRow; trail: TrailRow } | undefined> {
    const result = await sql<TrailRow & { flow_json: FlowRow }>`
      with fl as (${flowIdByName(sql`${orgId}`, sql`${flowName}`)})
      select t.*, row_to_json(f) as flow_json
      from fl
      join trails t on t.org_id = ${orgId} and t.flow_id = fl.id and t.name = ${trailName}
      join flows f on f.org_id = ${orgId} and f.id = fl.id
      for update of t`.execute(db);
    const row = result.rows[0];
    if (!row) {
      return undefined;
    }
    const { flow_json, ...trail } = row;
    return {
      trail,
      flow: flowFromJson(flow_json),
    };
  },

  /**
   * Everything a trail's evaluation reads, in one round trip: its artifacts, and what compliance
   * needs of its attestations (`evaluationInputsColumns`), both in report order.
   */
  async evaluationInputs(db: Db, orgId: string, trailId: string): Promise<EvaluationInputs> {
    const result = await sql<EvaluationInputsColumns>`
      select ${evaluationInputsColumns(sql`${orgId}`, sql`${trailId}`)}`.execute(db);
    return fromEvaluationInputsColumns(result.rows[0]!).inputs;
  },

  /**
   * For each (org, flow, trail): the flow (by name or an old name), its trail, the versions (xmin)
   * of both rows and of its artifacts' rows, and what the trail's evaluation reads (as `evaluationInputs`),
   * all from one snapshot in one round trip, locking nothing; undefined where the flow or the
   * trail is missing. A write conditioned on the versions (`trailStore.write`)
   * then succeeds only if no other write to the flow or the trail committed meanwhile: every write
   * to a trail's evidence also rewrites the trail row (its evaluation), which gives the row a new
   * version.
   */
  async readTrailsForAttestations(
    db: Db,
    keys: ReadonlyArray<{ orgId: string; flowName: string; trailName: string }>,
  ): Promise<Array<AttestationTrailRead | undefined>> {
    const result = await sql<
      TrailRow & {
        key_index: number;
        flow_json: FlowRow;
        version: string;
        flow_version: string;
        artifact_versions: Record<string, string>;
      } & EvaluationInputsColumns
    >`
      select k.key_index::int as key_index, t.*, row_to_json(f) as flow_json, f.xmin::text as flow_version,
        (select coalesce(json_object_agg(a.id, a.xmin::text), '{}'::json) from artifacts a
          where a.org_id = t.org_id and a.trail_id = t.id) as artifact_versions,
        ${evaluationInputsColumns(sql.ref('t.org_id'), sql.ref('t.id'))}
      from unnest(${keys.map((k) => k.orgId)}::text[], ${keys.map((k) => k.flowName)}::text[],
        ${keys.map((k) => k.trailName)}::text[]) with ordinality as k(org_id, flow_name, trail_name, key_index)
      -- Lookups per key (lateral), so even a plan made while the tables were empty uses their keys.
      cross join lateral (${flowIdByName(sql.ref('k.org_id'), sql.ref('k.flow_name'))}) fl
      cross join lateral (
        select *, xmin::text as version from trails
        where org_id = k.org_id and flow_id = fl.id and name = k.trail_name
      ) t
      join flows f on f.org_id = k.org_id and f.id = fl.id`.execute(db);
    const reads: Array<AttestationTrailRead | undefined> = keys.map(() => undefined);
    for (const row of result.rows) {
      const {
        key_index,
        flow_json,
        version,
        flow_version,
        artifact_versions,
        artifacts,
        attestations_source,
        ...trail
      } = row;
      reads[key_index - 1] = {
        trail,
        flow: flowFromJson(flow_json),
        version,
        flowVersion: flow_version,
        artifactVersions: artifact_versions,
        ...fromEvaluationInputsColumns({ artifacts, attestations_source }),
      };
    }
    return reads;
  },
};
