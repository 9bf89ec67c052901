/**
 * Reads over delivery insight (tables/insight.ts): pages of deployments (keyset on start time and
 * id), the four keys aggregated per bucket and for the whole range in one statement each, and a
 * repository's builds, deployments and running artifacts.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.js';
import { countRowsUpTo } from './queries.js';
import type { DeploymentsTable } from '../tables/insight.js';

export type DeploymentRow = Selectable<DeploymentsTable>;

export interface DeploymentFilter {
  environmentId?: string | undefined;
  repo?: string | undefined;
  flow?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Only deployments that failed within `windowSeconds` of landing. */
  failedWithin?: number | undefined;
}

export interface DeploymentCursor {
  startedAt: Date;
  id: string;
}

export type Bucket = 'day' | 'week';

export interface DeploymentAggregate {
  /** Start of the bucket; null for the whole range. */
  bucket: Date | null;
  deployments: number;
  failures: number;
  with_lead_time: number;
  lead_p50: number | null;
  lead_p90: number | null;
}

export interface RestoreAggregate {
  bucket: Date | null;
  restores: number;
  restore_p50: number | null;
  restore_p90: number | null;
}

const failedWithin = (seconds: number) =>
  sql<boolean>`(rolled_back_at <= started_at + make_interval(secs => ${seconds})
    or broke_compliance_at <= started_at + make_interval(secs => ${seconds}))`;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The deployments (`d`) of the organization that match the filter. */
function deploymentsOf(db: Db, orgId: string, f: DeploymentFilter) {
  let q = db.selectFrom('deployments as d').where('d.org_id', '=', orgId);
  if (f.environmentId !== undefined) {
    q = q.where('d.environment_id', '=', f.environmentId);
  }
  if (f.repo !== undefined) {
    q = q.where('d.repo_name', '=', f.repo);
  }
  if (f.flow !== undefined) {
    q = q.where('d.flow_name', '=', f.flow);
  }
  if (f.from !== undefined) {
    q = q.where('d.started_at', '>=', f.from);
  }
  if (f.to !== undefined) {
    q = q.where('d.started_at', '<', f.to);
  }
  if (f.failedWithin !== undefined) {
    q = q.where(failedWithin(f.failedWithin));
  }
  return q;
}

export const deliveryReads = {
  /** A page of deployments, newest first, after the cursor; `limit` rows at most. */
  async page(
    db: Db,
    orgId: string,
    f: DeploymentFilter,
    cursor: DeploymentCursor | null,
    limit: number,
  ): Promise<Array<DeploymentRow & { environment_name: string }>> {
    let q = deploymentsOf(db, orgId, f)
      .innerJoin('environments as e', (j) =>
        j.onRef('e.org_id', '=', 'd.org_id').onRef('e.id', '=', 'd.environment_id'),
      )
      .selectAll('d')
      .select('e.name as environment_name');
    if (cursor) {
      q = q.where((eb) =>
        eb.or([
          eb('d.started_at', '<', cursor.startedAt),
          eb.and([eb('d.started_at', '=', cursor.startedAt), eb('d.id', '<', cursor.id)]),
        ]),
      );
    }
    return q.orderBy('d.started_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
  },

  /**
   * The deployments of the filter, or with `through` those up to and including the cursor's (the
   * rows before the page that starts after it), counted up to `cap + 1`: past the cap the count
   * stops, so a filter matching millions costs what ten thousand index entries do.
   */
  async count(
    db: Db,
    orgId: string,
    f: DeploymentFilter,
    cap: number,
    through?: DeploymentCursor,
  ): Promise<number> {
    let q = deploymentsOf(db, orgId, f).select('d.id');
    if (through) {
      q = q.where((eb) =>
        eb.or([
          eb('d.started_at', '>', through.startedAt),
          eb.and([eb('d.started_at', '=', through.startedAt), eb('d.id', '>=', through.id)]),
        ]),
      );
    }
    return countRowsUpTo(db, q, cap);
  },

  /**
   * Deployment frequency, change failures and change lead time (p50, p90) per bucket and for the
   * whole range (the row whose bucket is null), in one pass over the range.
   */
  async aggregate(
    db: Db,
    orgId: string,
    f: DeploymentFilter & { from: Date; to: Date },
    bucket: Bucket,
    windowSeconds: number,
  ): Promise<DeploymentAggregate[]> {
    const rows = await sql<Record<string, unknown>>`
      select date_trunc(${bucket}, started_at at time zone 'UTC') at time zone 'UTC' as bucket,
        count(*)::int as deployments,
        count(*) filter (where ${failedWithin(windowSeconds)})::int as failures,
        count(change_lead_time)::int as with_lead_time,
        percentile_cont(0.5) within group (order by change_lead_time) as lead_p50,
        percentile_cont(0.9) within group (order by change_lead_time) as lead_p90
      from deployments
      where org_id = ${orgId} and started_at >= ${f.from} and started_at < ${f.to}
        ${f.environmentId !== undefined ? sql`and environment_id = ${f.environmentId}` : sql``}
        ${f.repo !== undefined ? sql`and repo_name = ${f.repo}` : sql``}
      group by grouping sets ((1), ())`.execute(db);
    return rows.rows.map((r) => ({
      bucket: r.bucket === null ? null : new Date(r.bucket as string | Date),
      deployments: Number(r.deployments),
      failures: Number(r.failures),
      with_lead_time: Number(r.with_lead_time),
      lead_p50: num(r.lead_p50),
      lead_p90: num(r.lead_p90),
    }));
  },

  /** Restores (non-compliant to compliant again) per bucket of their restore time, and in all. */
  async restores(
    db: Db,
    orgId: string,
    f: { environmentId?: string | undefined; from: Date; to: Date },
    bucket: Bucket,
  ): Promise<RestoreAggregate[]> {
    const rows = await sql<Record<string, unknown>>`
      select date_trunc(${bucket}, restored_at at time zone 'UTC') at time zone 'UTC' as bucket,
        count(*)::int as restores,
        percentile_cont(0.5) within group (order by extract(epoch from restored_at - started_at)) as restore_p50,
        percentile_cont(0.9) within group (order by extract(epoch from restored_at - started_at)) as restore_p90
      from compliance_incidents
      where org_id = ${orgId} and restored_at >= ${f.from} and restored_at < ${f.to}
        ${f.environmentId !== undefined ? sql`and environment_id = ${f.environmentId}` : sql``}
      group by grouping sets ((1), ())`.execute(db);
    return rows.rows.map((r) => ({
      bucket: r.bucket === null ? null : new Date(r.bucket as string | Date),
      restores: Number(r.restores),
      restore_p50: num(r.restore_p50),
      restore_p90: num(r.restore_p90),
    }));
  },

  /** Artifacts built from these repositories per bucket of their creation. */
  async builds(
    db: Db,
    orgId: string,
    repoIds: readonly string[],
    range: { from: Date; to: Date },
    bucket: Bucket,
  ): Promise<Array<{ bucket: Date; builds: number }>> {
    if (repoIds.length === 0) {
      return [];
    }
    const rows = await sql<{ bucket: Date | string; builds: number }>`
      select date_trunc(${bucket}, created_at at time zone 'UTC') at time zone 'UTC' as bucket, count(*)::int as builds
      from artifacts
      where org_id = ${orgId} and repo_id = any(${[...repoIds]}::text[])
        and created_at >= ${range.from} and created_at < ${range.to}
      group by 1`.execute(db);
    return rows.rows.map((r) => ({ bucket: new Date(r.bucket), builds: Number(r.builds) }));
  },

  /** Per environment: a repository's deployments in the range and their change lead time (p50, p90). */
  async perEnvironment(
    db: Db,
    orgId: string,
    repo: string,
    range: { from: Date; to: Date },
  ): Promise<
    Array<{ environment_id: string; deployments: number; lead_p50: number | null; lead_p90: number | null }>
  > {
    const rows = await sql<Record<string, unknown>>`
      select environment_id, count(*)::int as deployments,
        percentile_cont(0.5) within group (order by change_lead_time) as lead_p50,
        percentile_cont(0.9) within group (order by change_lead_time) as lead_p90
      from deployments
      where org_id = ${orgId} and repo_name = ${repo} and started_at >= ${range.from} and started_at < ${range.to}
      group by environment_id`.execute(db);
    return rows.rows.map((r) => ({
      environment_id: String(r.environment_id),
      deployments: Number(r.deployments),
      lead_p50: num(r.lead_p50),
      lead_p90: num(r.lead_p90),
    }));
  },

  /** What runs now, in every environment, that was built from these repositories (one artifact record each, the latest). */
  async runningFrom(
    db: Db,
    orgId: string,
    repoIds: readonly string[],
    limit: number,
  ): Promise<
    Array<{
      environment_id: string;
      name: string;
      fingerprint: string;
      flow_name: string;
      trail_name: string;
      artifact_id: string;
      git_commit: string | null;
      git_commit_info: Record<string, unknown> | null;
    }>
  > {
    if (repoIds.length === 0) {
      return [];
    }
    const rows = await sql<{
      environment_id: string;
      name: string;
      fingerprint: string;
      flow_name: string;
      trail_name: string;
      artifact_id: string;
      git_commit: string | null;
      git_commit_info: Record<string, unknown> | null;
    }>`
      select distinct on (l.environment_id, l.fingerprint)
        l.environment_id, l.name, l.fingerprint, f.name as flow_name, t.name as trail_name,
        a.id as artifact_id, a.git_commit, a.git_commit_info
      from runtime_states l
      join artifacts a on a.org_id = l.org_id and a.fingerprint = l.fingerprint
      join flows f on f.org_id = a.org_id and f.id = a.flow_id
      join trails t on t.org_id = a.org_id and t.id = a.trail_id
      where l.org_id = ${orgId} and l.to_index is null and a.repo_id = any(${[...repoIds]}::text[])
      order by l.environment_id, l.fingerprint, a.seq desc
      limit ${limit}`.execute(db);
    return rows.rows;
  },

  /**
   * Per environment: how many artifacts built from these repositories run there now (what
   * `runningFrom` lists, uncapped: one count per environment).
   */
  async runningCounts(
    db: Db,
    orgId: string,
    repoIds: readonly string[],
  ): Promise<Array<{ environment_id: string; running: number }>> {
    if (repoIds.length === 0) {
      return [];
    }
    const rows = await sql<{ environment_id: string; running: number | string }>`
      select l.environment_id, count(distinct l.fingerprint) as running
      from runtime_states l
      where l.org_id = ${orgId} and l.to_index is null and exists (
        select 1 from artifacts a
        where a.org_id = l.org_id and a.fingerprint = l.fingerprint
          and a.repo_id = any(${[...repoIds]}::text[]))
      group by l.environment_id`.execute(db);
    return rows.rows.map((r) => ({ environment_id: r.environment_id, running: Number(r.running) }));
  },
  /** Per environment: the deployments that started at or after `since` (one index range each). */
  async deploymentCounts(
    db: Db,
    orgId: string,
    envIds: readonly string[],
    since: Date,
  ): Promise<Map<string, number>> {
    if (envIds.length === 0) {
      return new Map();
    }
    const rows = await sql<{ environment_id: string; n: number }>`
      select environment_id, count(*)::int as n from deployments
      where org_id = ${orgId} and environment_id = any(${[...envIds]}::text[]) and started_at >= ${since}
      group by environment_id`.execute(db);
    return new Map(rows.rows.map((r) => [r.environment_id, Number(r.n)]));
  },

  /**
   * Per environment: how many artifacts run now, and the first `named` of them by name with their
   * compliance and the link of their first flow (what the latest snapshot shows of them).
   */
  async runningNow(
    db: Db,
    orgId: string,
    envIds: readonly string[],
    named: number,
  ): Promise<
    Map<
      string,
      {
        count: number;
        first: Array<{
          name: string;
          fingerprint: string;
          compliant: boolean | null;
          html_url: string | null;
        }>;
      }
    >
  > {
    const out = new Map<
      string,
      {
        count: number;
        first: Array<{
          name: string;
          fingerprint: string;
          compliant: boolean | null;
          html_url: string | null;
        }>;
      }
    >();
    if (envIds.length === 0) {
      return out;
    }
    const rows = await sql<{
      env_id: string;
      n: number;
      name: string | null;
      fingerprint: string | null;
      compliant: boolean | null;
      html_url: string | null;
    }>`
      select e.env_id, c.n, r.name, r.fingerprint, r.compliant, r.html_url
      from unnest(${[...envIds]}::text[]) as e(env_id)
      cross join lateral (
        select count(*)::int as n from runtime_states s
        where s.org_id = ${orgId} and s.environment_id = e.env_id and s.to_index is null
      ) c
      left join lateral (
        select s.name, s.fingerprint, v.compliant, v.provenance -> 0 ->> 'html_url' as html_url
        from runtime_states s
        join runtime_verdicts v on v.org_id = s.org_id and v.hash = s.verdict_hash
        where s.org_id = ${orgId} and s.environment_id = e.env_id and s.to_index is null
        order by s.name, s.fingerprint
        limit ${named}
      ) r on true
      order by e.env_id, r.name, r.fingerprint`.execute(db);
    for (const r of rows.rows) {
      let env = out.get(r.env_id);
      if (!env) {
        env = { count: Number(r.n), first: [] };
        out.set(r.env_id, env);
      }
      if (r.fingerprint !== null) {
        env.first.push({
          name: r.name!,
          fingerprint: r.fingerprint,
          compliant: r.compliant,
          html_url: r.html_url,
        });
      }
    }
    return out;
  },
};
