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

/** Artifacts a component row binds to: the one it names, or every artifact of its trail. */
const boundArtifacts = sql`join artifacts a on a.org_id = c.org_id and a.trail_id = c.trail_id
  and (c.fingerprint is null or a.fingerprint = c.fingerprint)`;

export const componentsRepository = {
  /**
   * Stores an attestation's components in one statement (a document of thousands of purls is one
   * round trip). `fingerprint` null binds them to every artifact of the trail.
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
    if (components.length === 0) return;
    const records = components.map((c, i) => ({
      o: i + 1,
      t: c.type,
      s: c.namespace,
      n: c.name,
      v: c.version,
      p: c.purl,
    }));
    await sql`insert into sbom_components (org_id, attestation_id, ord, trail_id, fingerprint,
        purl_type, purl_namespace, purl_name, purl_version, purl)
      select ${at.orgId}, ${at.attestationId}, r.o, ${at.trailId}, ${at.fingerprint}, r.t, r.s, r.n, r.v, r.p
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as r(o int, t text, s text, n text, v text, p text)`.execute(
      db,
    );
  },

  /** Artifacts holding a component matching `key`, newest first, at most `limit`. */
  async artifactsWithPurl(
    db: Db,
    orgId: string,
    key: PurlKey,
    limit: number,
  ): Promise<ExposureArtifactRow[]> {
    const rows = await sql<ExposureArtifactRow>`
      select a.id, a.fingerprint, a.filename, a.git_commit, a.trail_id, t.name as trail_name, f.name as flow_name
      from artifacts a
      join trails t on t.org_id = a.org_id and t.id = a.trail_id
      join flows f on f.org_id = a.org_id and f.id = a.flow_id
      where a.org_id = ${orgId} and a.id in (
        select a.id from sbom_components c ${boundArtifacts}
        where c.org_id = ${orgId} and ${purlMatch(key)})
      order by a.created_at desc, a.seq desc
      limit ${limit}`.execute(db);
    return rows.rows;
  },

  /** The components matching `key` of these artifacts, with the attestations that carried them. */
  async componentsOf(
    db: Db,
    orgId: string,
    key: PurlKey,
    artifactIds: readonly string[],
  ): Promise<ArtifactComponentRow[]> {
    if (artifactIds.length === 0) return [];
    const rows = await sql<ArtifactComponentRow>`
      select a.id as artifact_id, c.attestation_id, x.name as attestation_name, c.purl, c.purl_type,
        c.purl_namespace, c.purl_name, c.purl_version
      from sbom_components c ${boundArtifacts}
      join attestations x on x.org_id = c.org_id and x.id = c.attestation_id
      where c.org_id = ${orgId} and ${purlMatch(key)} and a.id = any(${[...artifactIds]}::text[])
      order by a.id, c.purl, x.seq`.execute(db);
    return rows.rows;
  },

  /**
   * Every state of these fingerprints in every environment of the organization, in order: the
   * runs (started at `run_start`, ended at the `to_index` of the state that `exited`).
   */
  async runStates(db: Db, orgId: string, fingerprints: readonly string[]): Promise<RunStateRow[]> {
    if (fingerprints.length === 0) return [];
    const rows = await sql<RunStateRow>`
      select s.environment_id, e.name as environment_name, s.fingerprint, s.run_start, s.from_index,
        s.to_index, s.exited
      from environments e
      join runtime_states s on s.org_id = e.org_id and s.environment_id = e.id
        and s.fingerprint = any(${[...fingerprints]}::text[])
      where e.org_id = ${orgId}
      order by e.name, s.fingerprint, s.from_index`.execute(db);
    return rows.rows;
  },

  /**
   * Snapshots of each environment with an index in [lo, hi]: their times and compliance. `since`
   * and `until` drop those no interval clipped to them can touch (before the one in effect at
   * `since`, after `until`).
   */
  async snapshots(
    db: Db,
    orgId: string,
    ranges: ReadonlyArray<{ environmentId: string; lo: number; hi: number }>,
    since: Date | undefined,
    until: Date | undefined,
  ): Promise<SnapshotPoint[]> {
    if (ranges.length === 0) return [];
    const records = ranges.map((r) => ({ e: r.environmentId, lo: r.lo, hi: r.hi }));
    const rows = await sql<SnapshotPoint>`
      select s.environment_id, s.index, s.created_at, s.compliant
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as r(e text, lo int, hi int)
      join runtime_snapshots s on s.org_id = ${orgId} and s.environment_id = r.e
        and s.index between greatest(r.lo, ${
          since
            ? sql`coalesce((select max(p.index) from runtime_snapshots p where p.org_id = ${orgId}
                and p.environment_id = r.e and p.created_at <= ${since}), r.lo)`
            : sql`r.lo`
        }) and r.hi
      ${until ? sql`where s.created_at <= ${until}` : sql``}
      order by s.environment_id, s.index`.execute(db);
    return rows.rows;
  },
};
