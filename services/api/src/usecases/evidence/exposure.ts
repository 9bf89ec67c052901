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
  limit: number;
}

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

/** Answers an exposure query in the caller's organization. */
export async function exposure(db: Db, orgId: string, req: ExposureRequest): Promise<ExposureResult> {
  const { selector, from, to, limit } = req;
  if (from && to && from.getTime() > to.getTime()) {
    throw new BadRequestError('`from` is after `to`', { 'query.from': 'must not be after `to`' });
  }
  let rows: ExposureArtifactRow[];
  let components: ArtifactComponentRow[] = [];
  if ('purl' in selector) {
    const key = purlKey(selector.purl);
    ({ artifacts: rows, components } = await componentsRepository.artifactsWithPurl(
      db,
      orgId,
      key,
      limit + 1,
    ));
  } else {
    rows = await artifactsRepository.bySha(
      db,
      orgId,
      'fingerprint' in selector ? [selector.fingerprint] : [],
      'commit' in selector ? [selector.commit] : [],
      limit + 1,
    );
  }
  const truncated = rows.length > limit;
  const artifacts = rows.slice(0, limit);
  const places = await placesOf(db, orgId, [...new Set(artifacts.map((a) => a.fingerprint))], from, to);
  const componentsByArtifact = new Map<string, ArtifactComponentRow[]>();
  for (const c of components) {
    componentsByArtifact.set(c.artifact_id, [...(componentsByArtifact.get(c.artifact_id) ?? []), c]);
  }
  return {
    query: {
      purl: 'purl' in selector ? selector.purl : null,
      fingerprint: 'fingerprint' in selector ? selector.fingerprint : null,
      commit: 'commit' in selector ? selector.commit : null,
      from: from ? epochSeconds(from) : null,
      to: to ? epochSeconds(to) : null,
    },
    artifacts: artifacts.map((a) => ({
      fingerprint: a.fingerprint,
      name: a.filename,
      flow: a.flow_name,
      trail: a.trail_name,
      commit: a.git_commit,
      components: (componentsByArtifact.get(a.id) ?? []).map((c) => ({
        purl: c.purl,
        type: c.purl_type,
        namespace: c.purl_namespace === '' ? null : c.purl_namespace,
        name: c.purl_name,
        version: c.purl_version === '' ? null : c.purl_version,
        attestation_id: c.attestation_id,
        attestation_name: c.attestation_name,
      })),
      environments: places.get(a.fingerprint) ?? [],
    })),
    truncated,
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
