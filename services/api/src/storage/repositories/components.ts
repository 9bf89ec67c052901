/**
 * SBOM components indexed by package URL (tables/sbom.ts), and the exposure reads over them and
 * over the runtime's run history: which artifacts held a package, where they ran and when.
 */
import { sql } from 'kysely';
import type { Db } from '../database.js';

/** The matched parts of a package URL; `version` undefined matches every version. */
export interface PurlKey {
  type: string;
  namespace: string;
  name: string;
  version?: string | undefined;
}

export interface ComponentRow {
  purl: string;
  purl_type: string;
  purl_namespace: string;
  purl_name: string;
  purl_version: string;
}

/** An artifact an exposure query matched, with its flow and trail names. */
export interface ExposureArtifactRow {
  id: string;
  fingerprint: string;
  filename: string;
  git_commit: string | null;
  trail_id: string;
  trail_name: string;
  flow_name: string;
}

/** A matching component of one artifact, and the attestation that carried it. */
export interface ArtifactComponentRow extends ComponentRow {
  artifact_id: string;
  attestation_id: string;
  attestation_name: string;
}

/** An artifact holding matching components: `n` of them, after `before` rows of newer artifacts. */
export interface PagedArtifactRow extends ExposureArtifactRow {
  n: number;
  before: number;
}

/** One state of a fingerprint in an environment (`runtime_states`), as runs are rebuilt from it. */
export interface RunStateRow {
  environment_id: string;
  environment_name: string;
  fingerprint: string;
  run_start: number;
  from_index: number;
  to_index: number | null;
  exited: boolean;
}

export interface SnapshotPoint {
  environment_id: string;
  index: number;
  created_at: Date;
  compliant: boolean | null;
}

/** The purl filter, shared by the two purl reads. */
const purlMatch = (key: PurlKey) =>
  sql`c.purl_type = ${key.type} and c.purl_name = ${key.name} and c.purl_namespace = ${key.namespace}${
    key.version !== undefined ? sql` and c.purl_version = ${key.version}` : sql``
  }`;

/** Component rows one insert statement carries. */
export const INSERT_CHUNK = 2_000;

export const componentsRepository = {
  /**
   * Stores an attestation's components, `INSERT_CHUNK` rows a statement: each statement is short
   * (on the embedded database it runs on the event loop) and its parameter small. `fingerprint`
   * null binds them to every artifact of the trail.
   */
  async insert(
    db: Db,
    at: { orgId: string; attestationId: string; trailId: string; fingerprint: string | null },
    components: ReadonlyArray<{
      type: string;
      namespace: string;
      name: string;
      version: string;
      purl: string;
    }>,
  ): Promise<void> {
    for (let from = 0; from < components.length; from += INSERT_CHUNK) {
      const records = components.slice(from, from + INSERT_CHUNK).map((c, i) => ({
        o: from + i + 1,
        t: c.type,
        s: c.namespace,
        n: c.name,
        v: c.version,
        p: c.purl,
      }));
      // The components and their counts per package (migration 0383) in one statement.
      await sql`with r as (
          select * from jsonb_to_recordset(${JSON.stringify(records)}::jsonb)
            as r(o int, t text, s text, n text, v text, p text)
        ), c as (
          insert into sbom_components (org_id, attestation_id, ord, trail_id, fingerprint,
            purl_type, purl_namespace, purl_name, purl_version, purl)
          select ${at.orgId}, ${at.attestationId}, r.o, ${at.trailId}, ${at.fingerprint}, r.t, r.s, r.n, r.v, r.p
          from r
        )
        insert into sbom_packages as k (org_id, purl_type, purl_name, purl_namespace, attestation_id,
          trail_id, fingerprint, components)
        select ${at.orgId}, r.t, r.n, r.s, ${at.attestationId}, ${at.trailId}, ${at.fingerprint}, count(*)::int
        from r group by r.t, r.n, r.s
        on conflict (org_id, purl_type, purl_name, purl_namespace, attestation_id)
          do update set components = k.components + excluded.components`.execute(db);
    }
  },

  /**
   * The artifacts whose matching (artifact, component) rows fall in `[offset, offset + count)`,
   * newest first, each with its number of matching rows `n` and the rows before it `before`;
   * and the rows in all. Counts are taken per (trail, fingerprint) key, never by joining the
   * components to every artifact of a trail; for a package without a version, from its counts
   * per attestation (`sbom_packages`), so a page reads a row per attestation holding it, not
   * one per matching version.
   */
  async purlPageArtifacts(
    db: Db,
    orgId: string,
    key: PurlKey,
    offset: number,
    count: number,
  ): Promise<{ artifacts: PagedArtifactRow[]; total: number }> {
    const counted =
      key.version === undefined
        ? sql`select p.trail_id, p.fingerprint, sum(p.components)::int as n from sbom_packages p
            where p.org_id = ${orgId} and p.purl_type = ${key.type} and p.purl_name = ${key.name}
              and p.purl_namespace = ${key.namespace}
            group by p.trail_id, p.fingerprint`
        : sql`select c.trail_id, c.fingerprint, count(*)::int as n from sbom_components c
            where c.org_id = ${orgId} and ${purlMatch(key)}
            group by c.trail_id, c.fingerprint`;
    const keyed = sql`k as (${counted}), per as (
        select a.id, a.fingerprint, a.filename, a.git_commit, a.trail_id, a.flow_id, a.created_at, a.seq,
          coalesce(d.n, 0) + coalesce(l.n, 0) as n
        from artifacts a
        left join k d on d.trail_id = a.trail_id and d.fingerprint = a.fingerprint
        left join k l on l.trail_id = a.trail_id and l.fingerprint is null
        where a.org_id = ${orgId} and a.trail_id in (select k.trail_id from k)
      ), w as (
        select per.*, sum(per.n) over (order by per.created_at desc, per.seq desc, per.id
          rows unbounded preceding)::int - per.n as before, sum(per.n) over ()::int as total
        from per where per.n > 0
      )`;
    const rows = await sql<PagedArtifactRow & { total: number }>`
      with ${keyed}
      select w.id, w.fingerprint, w.filename, w.git_commit, w.trail_id, t.name as trail_name,
        f.name as flow_name, w.n, w.before, w.total
      from w
      join trails t on t.org_id = ${orgId} and t.id = w.trail_id
      join flows f on f.org_id = ${orgId} and f.id = w.flow_id
      where w.before + w.n > ${offset} and w.before < ${offset + count}
      order by w.before`.execute(db);
    if (rows.rows.length > 0) {
      return { artifacts: rows.rows, total: rows.rows[0]!.total };
    }
    const total = await sql<{ total: number | null }>`
      with ${keyed} select max(w.total) as total from w`.execute(db);
    return { artifacts: [], total: total.rows[0]?.total ?? 0 };
  },

  /**
   * The matching components of each artifact from position `skip`, at most `take`: ordered by
   * purl, then attestation; each artifact's rows cut in SQL (`offset`/`limit` in a lateral),
   * read in that order from the trail's index (migration 0383), never sorted.
   */
  async purlPageComponents(
    db: Db,
    orgId: string,
    key: PurlKey,
    slices: ReadonlyArray<{
      artifactId: string;
      trailId: string;
      fingerprint: string;
      skip: number;
      take: number;
    }>,
  ): Promise<ArtifactComponentRow[]> {
    if (slices.length === 0) {
      return [];
    }
    const records = slices.map((r, i) => ({
      i,
      id: r.artifactId,
      t: r.trailId,
      f: r.fingerprint,
      s: r.skip,
      n: r.take,
    }));
    const rows = await sql<ArtifactComponentRow>`
      select r.id as artifact_id, m.attestation_id, x.name as attestation_name, m.purl, m.purl_type,
        m.purl_namespace, m.purl_name, m.purl_version
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as r(i int, id text, t text, f text, s int, n int)
      cross join lateral (
        select c.attestation_id, c.purl, c.purl_type, c.purl_namespace, c.purl_name, c.purl_version
        from sbom_components c
        where c.org_id = ${orgId} and c.trail_id = r.t and (c.fingerprint = r.f or c.fingerprint is null)
          and ${purlMatch(key)}
        order by c.purl, c.attestation_id
        offset r.s limit r.n
      ) m
      join attestations x on x.org_id = ${orgId} and x.id = m.attestation_id
      order by r.i, m.purl, m.attestation_id`.execute(db);
    return rows.rows;
  },

  /**
   * Every state of these fingerprints in every environment of the organization, in order: the
   * runs (started at `run_start`, ended at the `to_index` of the state that `exited`).
   */
  async runStates(db: Db, orgId: string, fingerprints: readonly string[]): Promise<RunStateRow[]> {
    if (fingerprints.length === 0) {
      return [];
    }
    const rows = await sql<RunStateRow>`
      select s.environment_id, e.name as environment_name, s.fingerprint, s.run_start, s.from_index,
        s.to_index, s.exited
      from runtime_states s
      join environments e on e.org_id = s.org_id and e.id = s.environment_id
      where s.org_id = ${orgId} and s.fingerprint = any(${[...fingerprints]}::text[])
      order by e.name, s.fingerprint, s.from_index`.execute(db);
    return rows.rows;
  },

  /**
   * The snapshots of each environment that intervals over [lo, hi] need, with their times and
   * compliance: the first one read, those named in `points` (where runs start and end), those
   * where the environment's compliance changed, and those in effect at `since` and `until`.
   * Snapshots before the one in effect at `since`, or after the one in effect at `until`, are
   * not read. Thousands of snapshots between changes stay in the database.
   */
  async snapshots(
    db: Db,
    orgId: string,
    ranges: ReadonlyArray<{ environmentId: string; lo: number; hi: number; points: readonly number[] }>,
    since: Date | undefined,
    until: Date | undefined,
  ): Promise<SnapshotPoint[]> {
    if (ranges.length === 0) {
      return [];
    }
    const records = ranges.map((r) => ({ e: r.environmentId, lo: r.lo, hi: r.hi, p: r.points }));
    const inEffect = (at: Date) => sql<number>`(select p.index from runtime_snapshots p
      where p.org_id = ${orgId} and p.environment_id = r.e and p.created_at <= ${at}
      order by p.created_at desc, p.index desc limit 1)`;
    const rows = await sql<SnapshotPoint>`
      with r as (
        select r.e, r.p, ${since ? inEffect(since) : sql`null::int`} as since_index,
          ${until ? inEffect(until) : sql`null::int`} as until_index, r.lo, r.hi
        from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as r(e text, lo int, hi int, p jsonb)
      ), b as (
        select r.e, r.p, r.since_index, r.until_index, greatest(r.lo, coalesce(r.since_index, r.lo)) as lo,
          ${until ? sql`least(r.hi, coalesce(r.until_index, -1))` : sql`r.hi`} as hi
        from r
      )
      select b.e as environment_id, x.index, x.created_at, x.compliant
      from b
      cross join lateral (
        -- Per environment, in primary key order: the window needs no sort.
        select s.index, s.created_at, s.compliant, lag(s.compliant) over w as previous,
          row_number() over w as n
        from runtime_snapshots s
        where s.org_id = ${orgId} and s.environment_id = b.e and s.index between b.lo and b.hi
        window w as (order by s.index)
      ) x
      where x.n = 1 or x.compliant is distinct from x.previous
      union
      select b.e, s.index, s.created_at, s.compliant
      from b
      cross join lateral (
        select jsonb_array_elements_text(b.p)::int as index
        union all select b.since_index union all select b.until_index
      ) p
      cross join lateral (
        select s.index, s.created_at, s.compliant from runtime_snapshots s
        where s.org_id = ${orgId} and s.environment_id = b.e and s.index = p.index
        offset 0
      ) s
      where p.index between b.lo and b.hi
      order by environment_id, index`.execute(db);
    return rows.rows;
  },
};
