/**
 * Exposure: the artifacts that held a package (by package URL, from indexed SBOMs), or have a
 * fingerprint or commit, and where and when each ran, with the environment's compliance over
 * each interval. Runs come from the runtime's state history, the same history the trail events
 * behind an artifact record's `running`/`exited` are written from.
 */
import type { ExposureResult } from '../../../../shared/contract/exposure.js';
import { exposureIntervals, runsOf, type RunState, type SnapshotFact } from '../../domain/exposure.js';
import { parsePurl } from '../../domain/sbom.js';
import { BadRequestError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import type { Db } from '../../storage/database.js';
import type { OrgScope } from '../scope/org-scope.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import {
  componentsRepository,
  type ArtifactComponentRow,
  type ExposureArtifactRow,
  type PurlKey,
} from '../../storage/repositories/components.js';

export type ExposureSelector = { purl: string } | { fingerprint: string } | { commit: string };

export interface ExposureRequest {
  selector: ExposureSelector;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Artifacts at most (fingerprint, commit). */
  limit: number;
  /** For a purl: the page (from 1) of matching (artifact, component) rows, `perPage` rows each. */
  page?: number;
  perPage?: number;
}

/** Rows a purl page holds by default. */
export const EXPOSURE_PER_PAGE = 100;

/** The snapshot index standing for "still running" in range reads. */
const OPEN_END = 2_147_483_647;

/** The package URL of a query, normalised as indexing normalises; 400 naming `purl` when malformed. */
export function purlKey(text: string): PurlKey & { purl: string } {
  try {
    const p = parsePurl(text);
    return {
      type: p.type,
      namespace: p.namespace,
      name: p.name,
      version: p.version === '' ? undefined : p.version,
      purl: p.purl,
    };
  } catch (err) {
    throw new BadRequestError(`Malformed package URL: ${(err as Error).message}`, {
      'query.purl': `not a package URL (pkg:type/namespace/name@version): ${(err as Error).message}`,
    });
  }
}

/** What an answer shows of one artifact. */
interface Shown {
  row: ExposureArtifactRow;
  components: ArtifactComponentRow[];
  total: number;
}

/**
 * Answers an exposure query in the caller's organization. A purl is answered in pages of
 * matching (artifact, component) rows, newest artifact first, then by purl and attestation: every
 * statement reads at most what its page needs, whatever the number of versions indexed.
 */
export async function exposure(scope: OrgScope, req: ExposureRequest): Promise<ExposureResult> {
  const { db } = scope;
  const orgId = scope.org.id;
  const { selector, from, to, limit } = req;
  if (from && to && from.getTime() > to.getTime()) {
    throw new BadRequestError('`from` is after `to`', { 'query.from': 'must not be after `to`' });
  }
  let shown: Shown[];
  let truncated: boolean;
  let pagination: ExposureResult['pagination'] = null;
  if ('purl' in selector) {
    const page = req.page ?? 1;
    const perPage = req.perPage ?? EXPOSURE_PER_PAGE;
    const found = await purlPage(db, orgId, purlKey(selector.purl), page, perPage);
    shown = found.shown;
    pagination = {
      total: found.total,
      page,
      per_page: perPage,
      page_count: Math.ceil(found.total / perPage),
    };
    truncated = page < pagination.page_count;
  } else {
    const rows = await artifactsRepository.bySha(
      db,
      orgId,
      'fingerprint' in selector ? [selector.fingerprint] : [],
      'commit' in selector ? [selector.commit] : [],
      limit + 1,
    );
    truncated = rows.length > limit;
    shown = rows.slice(0, limit).map((row) => ({ row, components: [], total: 0 }));
  }
  const places = await placesOf(db, orgId, [...new Set(shown.map((a) => a.row.fingerprint))], from, to);
  return {
    query: {
      purl: 'purl' in selector ? selector.purl : null,
      fingerprint: 'fingerprint' in selector ? selector.fingerprint : null,
      commit: 'commit' in selector ? selector.commit : null,
      from: from ? epochSeconds(from) : null,
      to: to ? epochSeconds(to) : null,
    },
    artifacts: shown.map(({ row: a, components, total }) => ({
      fingerprint: a.fingerprint,
      name: a.filename,
      flow: a.flow_name,
      trail: a.trail_name,
      commit: a.git_commit,
      components: components.map((c) => ({
        purl: c.purl,
        type: c.purl_type,
        namespace: c.purl_namespace === '' ? null : c.purl_namespace,
        name: c.purl_name,
        version: c.purl_version === '' ? null : c.purl_version,
        attestation_id: c.attestation_id,
        attestation_name: c.attestation_name,
      })),
      components_total: total,
      components_truncated: total > components.length,
      environments: places.get(a.fingerprint) ?? [],
    })),
    truncated,
    pagination,
  };
}

/** One page of a purl's matching (artifact, component) rows, grouped by artifact, and the rows in all. */
async function purlPage(
  db: Db,
  orgId: string,
  key: PurlKey,
  page: number,
  perPage: number,
): Promise<{ shown: Shown[]; total: number }> {
  const offset = (page - 1) * perPage;
  const end = offset + perPage;
  const { artifacts, total } = await componentsRepository.purlPageArtifacts(db, orgId, key, offset, perPage);
  const slices = artifacts.map((a) => {
    const skip = Math.max(0, offset - a.before);
    return {
      artifactId: a.id,
      trailId: a.trail_id,
      fingerprint: a.fingerprint,
      skip,
      take: Math.min(a.n, end - a.before) - skip,
    };
  });
  const rows = await componentsRepository.purlPageComponents(db, orgId, key, slices);
  const byArtifact = new Map<string, ArtifactComponentRow[]>();
  for (const c of rows) {
    let list = byArtifact.get(c.artifact_id);
    if (!list) {
      list = [];
      byArtifact.set(c.artifact_id, list);
    }
    list.push(c);
  }
  return {
    shown: artifacts.map((a) => ({ row: a, components: byArtifact.get(a.id) ?? [], total: a.n })),
    total,
  };
}

type Places = ExposureResult['artifacts'][number]['environments'];

/** Per fingerprint: the environments it ran in during the window, with its intervals there. */
async function placesOf(
  db: Db,
  orgId: string,
  fingerprints: readonly string[],
  from: Date | undefined,
  to: Date | undefined,
): Promise<Map<string, Places>> {
  const states = await componentsRepository.runStates(db, orgId, fingerprints);
  // Runs per (environment, fingerprint); and per environment the snapshot range they cover.
  const groups = new Map<
    string,
    { envId: string; envName: string; fingerprint: string; states: RunState[] }
  >();
  const ranges = new Map<string, { environmentId: string; lo: number; hi: number; points: number[] }>();
  for (const s of states) {
    const k = `${s.environment_id}\u0000${s.fingerprint}`;
    let g = groups.get(k);
    if (!g) {
      g = { envId: s.environment_id, envName: s.environment_name, fingerprint: s.fingerprint, states: [] };
      groups.set(k, g);
    }
    g.states.push({ runStart: s.run_start, fromIndex: s.from_index, toIndex: s.to_index });
    const r = ranges.get(s.environment_id) ?? {
      environmentId: s.environment_id,
      lo: s.run_start,
      hi: 0,
      points: [],
    };
    r.lo = Math.min(r.lo, s.run_start);
    r.hi = Math.max(r.hi, s.to_index ?? OPEN_END);
    r.points.push(s.run_start, ...(s.to_index === null ? [] : [s.to_index]));
    ranges.set(s.environment_id, r);
  }
  const points = await componentsRepository.snapshots(db, orgId, [...ranges.values()], from, to);
  const snapshotsByEnv = new Map<string, SnapshotFact[]>();
  for (const p of points) {
    const list = snapshotsByEnv.get(p.environment_id) ?? [];
    list.push({ index: p.index, at: new Date(p.created_at).getTime(), compliant: p.compliant });
    snapshotsByEnv.set(p.environment_id, list);
  }
  const window = { from: from?.getTime(), to: to?.getTime() };
  const out = new Map<string, Places>();
  for (const g of groups.values()) {
    const intervals = exposureIntervals(runsOf(g.states), snapshotsByEnv.get(g.envId) ?? [], window);
    if (intervals.length === 0) {
      continue;
    }
    const list = out.get(g.fingerprint) ?? [];
    list.push({
      environment_name: g.envName,
      intervals: intervals.map((i) => ({
        from: i.from / 1000,
        to: i.to === null ? null : i.to / 1000,
        from_snapshot: i.fromSnapshot,
        to_snapshot: i.toSnapshot,
        compliant: i.compliant,
      })),
    });
    out.set(g.fingerprint, list);
  }
  for (const list of out.values()) {
    list.sort((a, b) => a.environment_name.localeCompare(b.environment_name));
  }
  return out;
}
