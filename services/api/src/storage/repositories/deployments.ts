/**
 * Delivery insight as snapshots write it (tables/insight.ts, migration 0387_deployments):
 * deployments and the marks later snapshots put on them, the stretches environments spent
 * non-compliant, the lead times of artifact records per environment (and their read). The reads
 * over deployments are in delivery-reads.ts.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { ArtifactLeadTimesTable, DeploymentsTable } from '../tables/insight.js';
import { pushTo } from '../../group-by.js';
import { batches, chunks } from './runtime.js';

export type DeploymentRow = Selectable<DeploymentsTable>;
export type NewDeployment = Insertable<DeploymentsTable>;
export type NewLeadTime = Insertable<ArtifactLeadTimesTable>;

/** What a deployment's planning reads of an artifact record. */
export interface ArtifactFacts {
  id: string;
  flow_id: string;
  seq: string | number;
  git_commit: string | null;
  git_commit_info: Record<string, unknown> | null;
  commits_list: unknown[] | null;
  created_at: Date;
  repo_name: string | null;
}

/** Artifacts of a flow one deployment's commits are read from at most. */
const COMMIT_SCAN = 200;
/** Artifacts the deployments of one snapshot read their commits from at most. */
const COMMIT_BUDGET = 20_000;

export const deploymentsRepository = {
  /**
   * The fingerprints among these that ran in the environment before snapshot `index`: one
   * set-based statement per batch, joined on the fingerprint. Probing by a list (`in (...)`) let
   * the planner, whose statistics lag right after a large report, read every state of the
   * environment once per chunk: a rollout of 50,000 images spent over a minute here.
   */
  async ranBefore(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
    index: number,
  ): Promise<Set<string>> {
    const out = new Set<string>();
    for (const part of batches([...new Set(fingerprints)], (f) => f.length + 4)) {
      const { rows } = await sql<{ fingerprint: string }>`select x.fingerprint
        from unnest(${part}::text[]) as x(fingerprint)
        where exists (select 1 from runtime_states s
          where s.org_id = ${orgId} and s.environment_id = ${envId} and s.fingerprint = x.fingerprint
            and s.from_index < ${index})`.execute(db);
      for (const r of rows) {
        out.add(r.fingerprint);
      }
    }
    return out;
  },

  /** Commit, order and repository of artifact records. */
  async artifactFacts(db: Db, orgId: string, ids: readonly string[]): Promise<Map<string, ArtifactFacts>> {
    const out = new Map<string, ArtifactFacts>();
    for (const part of chunks([...new Set(ids)])) {
      const rows = await db
        .selectFrom('artifacts as a')
        .leftJoin('repos as r', (j) => j.onRef('r.org_id', '=', 'a.org_id').onRef('r.id', '=', 'a.repo_id'))
        .select([
          'a.id',
          'a.flow_id',
          'a.seq',
          'a.git_commit',
          'a.git_commit_info',
          'a.commits_list',
          'a.created_at',
          'r.name as repo_name',
        ])
        .where('a.org_id', '=', orgId)
        .where('a.id', 'in', part)
        .execute();
      for (const r of rows) {
        out.set(r.id, r);
      }
    }
    return out;
  },

  /**
   * For each range: the commits of its flow's artifacts reported after `afterSeq` up to `upToSeq`,
   * newest first, in one statement. Each range reads at most `COMMIT_SCAN` artifacts, and fewer
   * when one snapshot starts many deployments, so a snapshot reads at most `COMMIT_BUDGET` in all
   * (at least 10 a range).
   */
  async flowCommits(
    db: Db,
    orgId: string,
    ranges: ReadonlyArray<{
      key: string;
      flowId: string;
      afterSeq: string | number;
      upToSeq: string | number;
    }>,
  ): Promise<Map<string, Array<Record<string, unknown>>>> {
    const out = new Map<string, Array<Record<string, unknown>>>();
    if (ranges.length === 0) {
      return out;
    }
    const scan = Math.max(10, Math.min(COMMIT_SCAN, Math.floor(COMMIT_BUDGET / ranges.length)));
    for (const part of chunks(ranges)) {
      const rows = await sql<{ key: string; git_commit_info: Record<string, unknown> }>`
        select r.key, c.git_commit_info
        from unnest(${part.map((r) => r.key)}::text[], ${part.map((r) => r.flowId)}::text[],
          ${part.map((r) => String(r.afterSeq))}::bigint[], ${part.map((r) => String(r.upToSeq))}::bigint[])
          as r(key, flow_id, after_seq, up_to_seq)
        cross join lateral (
          select a.git_commit_info from artifacts a
          where a.org_id = ${orgId} and a.flow_id = r.flow_id and a.seq > r.after_seq and a.seq <= r.up_to_seq
            and a.git_commit_info is not null
          order by a.seq desc
          limit ${scan}
        ) c`.execute(db);
      for (const r of rows.rows) {
        pushTo(out, r.key, r.git_commit_info);
      }
    }
    return out;
  },

  /**
   * One set-based statement per parameter batch (arrays, `unnest`), as a report's runtime rows
   * are written: a rollout of 50,000 images wrote its deployments in 100 statements of 500 rows'
   * parameters each, 1.5 s of its time.
   */
  async insert(db: Db, rows: readonly NewDeployment[]): Promise<void> {
    const time = (v: Date | string | null | undefined) =>
      v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : v;
    const size = (r: NewDeployment) =>
      r.fingerprint.length + r.artifact_name.length + r.replaced.length + r.commits.length + 400;
    for (const part of batches(rows, size)) {
      const column = <T>(f: (r: NewDeployment) => T) => part.map(f);
      await sql`insert into deployments (org_id, id, environment_id, snapshot_index, started_at, fingerprint,
          artifact_name, artifact_id, flow_name, trail_name, git_commit, html_url, repo_name, replaced, rollback,
          commit_lead_time, build_lead_time, change_lead_time, commits, compliant, rolled_back_at, broke_compliance_at)
        select r.org_id, r.id, r.environment_id, r.snapshot_index, r.started_at, r.fingerprint, r.artifact_name,
          r.artifact_id, r.flow_name, r.trail_name, r.git_commit, r.html_url, r.repo_name, r.replaced::jsonb,
          r.rollback, r.commit_lead_time, r.build_lead_time, r.change_lead_time, r.commits::jsonb, r.compliant,
          r.rolled_back_at, r.broke_compliance_at
        from unnest(${column((r) => r.org_id)}::text[], ${column((r) => r.id)}::text[],
          ${column((r) => r.environment_id)}::text[], ${column((r) => r.snapshot_index)}::int[],
          ${column((r) => time(r.started_at))}::timestamptz[], ${column((r) => r.fingerprint)}::text[],
          ${column((r) => r.artifact_name)}::text[], ${column((r) => r.artifact_id ?? null)}::text[],
          ${column((r) => r.flow_name ?? null)}::text[], ${column((r) => r.trail_name ?? null)}::text[],
          ${column((r) => r.git_commit ?? null)}::text[], ${column((r) => r.html_url ?? null)}::text[],
          ${column((r) => r.repo_name ?? null)}::text[], ${column((r) => r.replaced)}::text[],
          ${column((r) => r.rollback)}::boolean[], ${column((r) => r.commit_lead_time ?? null)}::float8[],
          ${column((r) => r.build_lead_time ?? null)}::float8[], ${column((r) => r.change_lead_time ?? null)}::float8[],
          ${column((r) => r.commits)}::text[], ${column((r) => r.compliant ?? null)}::boolean[],
          ${column((r) => time(r.rolled_back_at))}::timestamptz[], ${column((r) => time(r.broke_compliance_at))}::timestamptz[])
          as r(org_id, id, environment_id, snapshot_index, started_at, fingerprint, artifact_name, artifact_id,
            flow_name, trail_name, git_commit, html_url, repo_name, replaced, rollback, commit_lead_time,
            build_lead_time, change_lead_time, commits, compliant, rolled_back_at, broke_compliance_at)`.execute(
        db,
      );
    }
  },

  /**
   * Sets, once, `column` on the latest deployment of each fingerprint in the environment up to
   * snapshot `upToIndex` (the snapshot marking it: later ones, recorded since, are not its).
   */
  async mark(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
    column: 'rolled_back_at' | 'broke_compliance_at',
    at: Date,
    upToIndex: number,
  ): Promise<void> {
    for (const part of chunks([...new Set(fingerprints)])) {
      const latest = db
        .selectFrom('deployments')
        .select('id')
        .distinctOn('fingerprint')
        .where('org_id', '=', orgId)
        .where('environment_id', '=', envId)
        .where('fingerprint', 'in', part)
        .where('snapshot_index', '<=', upToIndex)
        .orderBy('fingerprint')
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc');
      await db
        .updateTable('deployments')
        .set({ [column]: at })
        .where('org_id', '=', orgId)
        .where('id', 'in', latest)
        .where(column, 'is', null)
        .execute();
    }
  },

  /** Opens the environment's stretch of non-compliance at a snapshot (none is open). */
  async openIncident(db: Db, orgId: string, envId: string, index: number, at: Date): Promise<void> {
    await db
      .insertInto('compliance_incidents')
      .values({ org_id: orgId, environment_id: envId, started_index: index, started_at: at })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },

  /** Closes the environment's open stretch of non-compliance. */
  async closeIncident(db: Db, orgId: string, envId: string, index: number, at: Date): Promise<void> {
    await db
      .updateTable('compliance_incidents')
      .set({ restored_index: index, restored_at: at })
      .where('org_id', '=', orgId)
      .where('environment_id', '=', envId)
      .where('restored_at', 'is', null)
      .execute();
  },

  /** Lead times of artifact records in an environment; those known already stay as they are. */
  async insertLeadTimes(db: Db, rows: readonly NewLeadTime[]): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('artifact_lead_times')
        .values(part)
        .onConflict((oc) => oc.columns(['org_id', 'artifact_id', 'environment_id']).doNothing())
        .execute();
    }
  },

  /**
   * Lead times of artifact records reported after their fingerprint started running: measured to
   * the snapshot where that run started.
   */
  async insertLinkedLeadTimes(
    db: Db,
    orgId: string,
    envId: string,
    runs: ReadonlyArray<{ artifactId: string; runStart: number }>,
  ): Promise<void> {
    for (const part of chunks(runs)) {
      const ids = part.map((r) => r.artifactId);
      const starts = part.map((r) => r.runStart);
      await sql`
        insert into artifact_lead_times (org_id, artifact_id, environment_id, snapshot_index,
          first_ran_at, commit_lead_time, build_lead_time)
        select a.org_id, a.id, s.environment_id, s.index, s.created_at,
          case when jsonb_typeof(a.git_commit_info -> 'timestamp') = 'number'
            then extract(epoch from s.created_at) - (a.git_commit_info ->> 'timestamp')::double precision end,
          extract(epoch from s.created_at - a.created_at)
        from unnest(${ids}::text[], ${starts}::int[]) as r(artifact_id, run_start)
        join artifacts a on a.org_id = ${orgId} and a.id = r.artifact_id
        join runtime_snapshots s on s.org_id = ${orgId} and s.environment_id = ${envId} and s.index = r.run_start
        on conflict (org_id, artifact_id, environment_id) do nothing`.execute(db);
    }
  },

  /** Lead times per environment of these artifact records, with the environment's name. */
  async leadTimesOf(
    db: Db,
    orgId: string,
    artifactIds: readonly string[],
  ): Promise<
    Array<
      { artifact_id: string; environment_id: string; environment_name: string } & {
        commit_lead_time: number | null;
        build_lead_time: number;
      }
    >
  > {
    if (artifactIds.length === 0) {
      return [];
    }
    const out = [];
    for (const part of chunks([...new Set(artifactIds)])) {
      out.push(
        ...(await db
          .selectFrom('artifact_lead_times as l')
          .innerJoin('environments as e', (j) =>
            j.onRef('e.org_id', '=', 'l.org_id').onRef('e.id', '=', 'l.environment_id'),
          )
          .select([
            'l.artifact_id',
            'l.environment_id',
            'e.name as environment_name',
            'l.commit_lead_time',
            'l.build_lead_time',
          ])
          .where('l.org_id', '=', orgId)
          .where('l.artifact_id', 'in', part)
          .orderBy('e.name')
          .execute()),
      );
    }
    return out;
  },

  /** Deployments of these fingerprints in the environment still attributed to no artifact record. */
  async unattributed(
    db: Db,
    orgId: string,
    envId: string,
    fingerprints: readonly string[],
  ): Promise<
    Array<{ id: string; fingerprint: string; snapshot_index: number; started_at: Date; rollback: boolean }>
  > {
    const out = [];
    for (const part of chunks([...new Set(fingerprints)])) {
      out.push(
        ...(await db
          .selectFrom('deployments')
          .select(['id', 'fingerprint', 'snapshot_index', 'started_at', 'rollback'])
          .where('org_id', '=', orgId)
          .where('environment_id', '=', envId)
          .where('fingerprint', 'in', part)
          .where('artifact_id', 'is', null)
          .execute()),
      );
    }
    return out;
  },

  /** Attributes a deployment to the artifact record CI reported after it started. */
  async attribute(
    db: Db,
    orgId: string,
    id: string,
    patch: Pick<
      NewDeployment,
      | 'artifact_id'
      | 'flow_name'
      | 'trail_name'
      | 'git_commit'
      | 'html_url'
      | 'repo_name'
      | 'commit_lead_time'
      | 'build_lead_time'
      | 'change_lead_time'
      | 'commits'
    >,
  ): Promise<void> {
    await db.updateTable('deployments').set(patch).where('org_id', '=', orgId).where('id', '=', id).execute();
  },
};
