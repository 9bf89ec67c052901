/** Reading attestations: the cursor search, a flow's pages, one name's history, evidence files. */
import { logIndexes } from '../log/log.js';
import type { Attestation } from '../../../../shared/contract/attestations.js';
import { compileUserPattern, UserPatternError } from '../../domain/user-pattern.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import {
  attestationsRepository,
  type AttestationRow,
  type AttestationRowWithNames,
} from '../../storage/repositories/attestations.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { trailsRepository } from '../../storage/repositories/trails.js';
import { findArtifact } from './artifacts.js';
import { presentAttestation } from './attestation-present.js';
import { resolveFlow } from './flows.js';
import { apiUrl } from '../scope/links.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { StoredEvidence } from '../scope/services.js';
import { trailNotFound } from './trails.js';

/** `GET /attestations/{org}` as parsed: filters, a cursor and a page size. */
export interface AttestationQuery {
  attestation_id?: string | undefined;
  name?: string | undefined;
  name_regex?: string | undefined;
  flow: string[];
  trail?: string | undefined;
  type: string[];
  is_compliant?: boolean | undefined;
  from_timestamp?: number | undefined;
  to_timestamp?: number | undefined;
  after?: number | undefined;
  per_page: number;
}

const epochDate = (s: number | undefined) => (s !== undefined ? new Date(s * 1000) : undefined);

/** One cursor page of the attestations matching the query, newest first, with its `next` link. */
export async function findAttestations(scope: OrgScope, q: AttestationQuery) {
  const flowIds = q.flow.length > 0 ? await flowIdsNamed(scope, q.flow) : undefined;
  const search = {
    id: q.attestation_id,
    name: q.name,
    nameMatches: q.name_regex !== undefined ? namePattern(q.name_regex).test : undefined,
    flowIds,
    trailName: q.trail,
    types: q.type,
    isCompliant: q.is_compliant,
    from: epochDate(q.from_timestamp),
    to: epochDate(q.to_timestamp),
    afterSeq: q.after,
  };
  const { rows, resumeAfter } = await attestationsRepository.search(
    scope.db,
    scope.org.id,
    search,
    q.per_page,
  );
  const last = rows[rows.length - 1];
  const cursor = rows.length === q.per_page && last ? Number(last.seq) : resumeAfter;
  const next = cursor !== null ? { next: { href: apiUrl(scope, 'attestations', nextQuery(q, cursor)) } } : {};
  // One trail's pages say how many there are in all: a count over that trail's attestations alone.
  const counted = q.trail !== undefined && q.name_regex === undefined;
  return {
    data: await presentAttestations(scope, rows),
    _links: next,
    ...(counted ? { total_count: await attestationsRepository.count(scope.db, scope.org.id, search) } : {}),
  };
}

/** A flow's attestations in a time span, newest first, one page (spec endpoint 12). */
export async function listFlowAttestations(
  scope: OrgScope,
  flowName: string,
  q: {
    page: number;
    per_page: number;
    from_timestamp?: number | undefined;
    to_timestamp?: number | undefined;
  },
) {
  const flow = await resolveFlow(scope, flowName);
  const { rows, total } = await attestationsRepository.listForFlow(
    scope.db,
    scope.org.id,
    flow.id,
    { from: epochDate(q.from_timestamp), to: epochDate(q.to_timestamp) },
    { limit: q.per_page, offset: (q.page - 1) * q.per_page },
  );
  const at = (page: number) =>
    apiUrl(
      scope,
      'attestations',
      flow.name,
      new URLSearchParams({ page: String(page), per_page: String(q.per_page) }),
    );
  const pages = Math.ceil(total / q.per_page);
  return {
    data: await presentAttestations(scope, rows),
    self: at(q.page),
    next: q.page < pages ? at(q.page + 1) : undefined,
    total,
  };
}

/** Every attestation of one name on a trail (trail level), newest first. */
export async function trailAttestationsNamed(
  scope: OrgScope,
  where: { flow: string; trail: string },
  name: string,
): Promise<Attestation[]> {
  const flow = await resolveFlow(scope, where.flow);
  const trail = await trailsRepository.find(scope.db, scope.org.id, flow.id, where.trail);
  if (!trail) {
    throw trailNotFound(where.trail, flow.name, scope.org.name);
  }
  const rows = await attestationsRepository.byName(scope.db, scope.org.id, trail.id, name, {
    trailLevel: true,
  });
  return await presentAttestations(scope, rows);
}

/** Every attestation of one name on an artifact (its latest trail), newest first. */
export async function artifactAttestationsNamed(
  scope: OrgScope,
  where: { flow: string; fingerprint: string },
  name: string,
): Promise<Attestation[]> {
  const flow = await resolveFlow(scope, where.flow);
  const artifact = await findArtifact(scope, flow, where.fingerprint);
  const rows = await attestationsRepository.byName(scope.db, scope.org.id, artifact.trail_id, name, {
    fingerprint: artifact.fingerprint,
  });
  return await presentAttestations(scope, rows);
}

/** An attestation's evidence file (streamed) and the row that names it; 404 when either is missing. */
export async function attestationEvidence(
  scope: OrgScope,
  where: { flow: string; trail: string; id: string },
): Promise<{ attestation: AttestationRow; file: StoredEvidence }> {
  const { store } = scope.services;
  const flow = await resolveFlow(scope, where.flow);
  const [att] = await attestationsRepository.findByIds(scope.db, scope.org.id, [where.id]);
  if (!att || att.flow_id !== flow.id || att.trail_name !== where.trail) {
    throw new NotFoundError(`Attestation '${where.id}' does not exist in trail '${where.trail}'`);
  }
  const file = att.evidence_sha256 ? await store.get(scope.db, scope.org.id, att.evidence_sha256) : undefined;
  if (!file) {
    throw new NotFoundError(`Attestation '${att.id}' has no evidence file`);
  }
  return { attestation: att, file };
}

/** The ids of the flows these names (current or old) name; names of no flow match nothing. */
async function flowIdsNamed(scope: OrgScope, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const flow = await flowsRepository.findByName(scope.db, scope.org.id, name);
    if (flow) {
      ids.push(flow.id);
    }
  }
  return ids;
}

/** Compiles `name_regex` with RE2 semantics; a pattern RE2 cannot run is a 400 naming the field. */
function namePattern(source: string) {
  try {
    return compileUserPattern(source);
  } catch (err) {
    if (!(err instanceof UserPatternError)) {
      throw err;
    }
    throw new BadRequestError(`Invalid name_regex '${source}': ${err.message}`, {
      'query.name_regex': 'is not a valid regular expression',
    });
  }
}

/** The query of the next page: the same filters, after the cursor. */
function nextQuery(query: AttestationQuery, after: number): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (k === 'after' || v === undefined) {
      continue;
    }
    for (const item of Array.isArray(v) ? v : [v]) {
      params.append(k, String(item));
    }
  }
  params.set('after', String(after));
  return params;
}

/** Attestations as reads answer them, each with its `log_index`. */
async function presentAttestations(scope: OrgScope, rows: AttestationRowWithNames[]): Promise<Attestation[]> {
  const logIndex = await logIndexes(
    scope.db,
    scope.org.id,
    'attestation',
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({ ...presentAttestation(scope, r), log_index: logIndex(r.id) }));
}
