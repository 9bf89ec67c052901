/** Artifacts: report into a trail, resolve by fingerprint prefix, present with evidence and history. */
import type { ArtifactRecord, CreateArtifact } from '../../../../shared/contract/artifacts.js';
import { artifactState, type ArtifactStatusRecord } from '../../domain/compliance.js';
import { resolveFingerprintPrefix } from '../../domain/fingerprint-prefix.js';
import { runtimePlaces } from '../../domain/runtime-status.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import type { Db } from '../../storage/database.js';
import {
  artifactsRepository,
  type ArtifactRowWithNames,
  type EvidenceAttestation,
} from '../../storage/repositories/artifacts.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import type { FlowRow } from '../../storage/repositories/flows.js';
import { toJson } from '../../storage/repositories/json.js';
import {
  trailEventsRepository,
  type ArtifactHistoryRows,
  type HistoryEventRow,
} from '../../storage/repositories/trail-events.js';
import { reevaluateTrail } from './evaluation.js';
import type { OrgScope } from '../scope/org-scope.js';
import { attestationDownloadUrl } from './attestation-present.js';
import { artifactUrls, type LinkBase } from '../scope/links.js';
import { ensureFlow } from './flows.js';
import { captureRepo } from './repos.js';
import { ensureTrail } from './trails.js';

/** How many candidates an ambiguous prefix lists. */
const MAX_CANDIDATES = 10;

/** Records an artifact in its trail (created when missing); returns whether it was new. */
export async function recordArtifact(
  scope: OrgScope,
  flowName: string,
  input: CreateArtifact,
): Promise<{ created: boolean }> {
  const flow = await ensureFlow(scope, flowName);
  // The deprecated `report artifact` names no trail: each artifact then gets its own, named by its commit.
  const trailName = input.trail_name ?? input.git_commit ?? input.fingerprint;
  const trail = await ensureTrail(scope, flow, trailName);
  const repoId = await captureRepo(scope.db, scope.org.id, input.repo_info, scope.now);
  const fields = artifactFields(scope, input, repoId);
  const existing = await artifactsRepository.findInTrail(scope.db, scope.org.id, trail.id, input.fingerprint);
  let artifactId: string;
  if (existing) {
    artifactId = existing.id;
    await artifactsRepository.update(scope.db, scope.org.id, existing.id, fields);
  } else {
    artifactId = newId();
    await artifactsRepository.insert(scope.db, {
      ...fields,
      org_id: scope.org.id,
      id: artifactId,
      flow_id: flow.id,
      trail_id: trail.id,
      fingerprint: input.fingerprint,
      created_by: scope.actor,
      created_at: scope.now,
      state: 'INCOMPLETE',
      compliance: '{}',
    });
  }
  await trailEventsRepository.insert(scope.db, [
    creationEvent(scope, trail.id, artifactId, input, fields.git_commit),
  ]);
  const { changedFingerprints, evaluation } = await reevaluateTrail(scope.db, {
    orgId: scope.org.id,
    flow,
    trail,
    now: scope.now,
  });
  const changed = [...new Set([...changedFingerprints, ...(existing ? [] : [input.fingerprint])])];
  await scope.events.publish(scope.db, [
    {
      type: 'artifact.reported',
      orgId: scope.org.id,
      flowName: flow.name,
      trailName: trail.name,
      fingerprint: input.fingerprint,
      artifactName: input.filename,
      artifactId,
      gitCommit: fields.git_commit,
      commitUrl: input.commit_url ?? null,
      buildUrl: input.build_url ?? null,
      state: artifactState(evaluation.byArtifactId[artifactId]?.status),
      at: scope.now,
    },
    ...(changed.length > 0
      ? [
          {
            type: 'artifact.compliance-changed' as const,
            orgId: scope.org.id,
            fingerprints: changed,
            at: scope.now,
          },
        ]
      : []),
  ]);
  return { created: !existing };
}

/** The trail event of an artifact's creation (or repeated report). */
function creationEvent(
  scope: OrgScope,
  trailId: string,
  artifactId: string,
  input: CreateArtifact,
  gitCommit: string | null,
) {
  return {
    org_id: scope.org.id,
    trail_id: trailId,
    type: 'artifact_creation_reported',
    fingerprint: input.fingerprint,
    occurred_at: scope.now,
    data: JSON.stringify({
      artifact_fingerprint: input.fingerprint,
      artifact_name: input.filename,
      artifact_id: artifactId,
      template_reference_name: input.template_reference_name ?? null,
      git_commit: gitCommit,
      reported_by: scope.actor,
    }),
  };
}

/** The artifact's columns an input sets, on insert and update alike. */
function artifactFields(scope: OrgScope, input: CreateArtifact, repoId: string | null) {
  const gitCommit =
    input.git_commit ??
    (input.git_commit_info?.sha1.match(/^[a-f0-9]{40}$/) ? input.git_commit_info.sha1 : null);
  const legacy = Array.isArray(input.template)
    ? input.template
    : input.template
      ? input.template.split(/[\s,]+/)
      : null;
  return {
    filename: input.filename,
    template_reference_name: input.template_reference_name ?? null,
    description: input.description ?? null,
    git_commit: gitCommit,
    git_commit_info: toJson(input.git_commit_info),
    repo_info: toJson(input.repo_info),
    repo_id: repoId,
    build_url: input.build_url,
    commit_url: input.commit_url,
    repo_url: input.repo_url ?? null,
    commits_list: toJson(input.commits_list),
    external_urls: toJson(input.external_urls),
    annotations: toJson(input.annotations),
    user_data: toJson(input.user_data),
    legacy_template: toJson(legacy),
    last_modified_at: scope.now,
  };
}

/** Resolves a 5-64 hex prefix to one fingerprint in the flow (or anywhere); 400 when ambiguous. */
export async function resolvePrefix(
  db: Db,
  orgId: string,
  prefix: string,
  flowId: string | null,
): Promise<string | null> {
  if (prefix.length === 64) {
    return prefix;
  }
  const matches = await artifactsRepository.fingerprintsByPrefix(
    db,
    orgId,
    prefix,
    flowId,
    MAX_CANDIDATES + 1,
  );
  const r = resolveFingerprintPrefix(prefix, matches);
  if (r.kind === 'one') {
    return r.fingerprint;
  }
  if (r.kind === 'none') {
    return null;
  }
  throw new BadRequestError(
    `Fingerprint prefix '${prefix}' is ambiguous: it matches ${r.candidates.slice(0, MAX_CANDIDATES).join(', ')}${r.candidates.length > MAX_CANDIDATES ? ', ...' : ''}`,
    { 'path.fingerprint': 'matches more than one artifact; give more characters' },
  );
}

/** The artifact in the flow by fingerprint or prefix (its latest trail unless one is named); 404 otherwise. */
export async function findArtifact(
  scope: OrgScope,
  flow: FlowRow,
  fingerprintOrPrefix: string,
  trailName?: string,
): Promise<ArtifactRowWithNames> {
  const fingerprint = await resolvePrefix(scope.db, scope.org.id, fingerprintOrPrefix, flow.id);
  const row = fingerprint
    ? await artifactsRepository.findInFlow(scope.db, scope.org.id, flow.id, fingerprint, trailName)
    : undefined;
  if (!row) {
    throw new NotFoundError(
      trailName === undefined
        ? `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in flow '${flow.name}' belonging to organization '${scope.org.name}'`
        : `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in trail '${trailName}' of flow '${flow.name}' belonging to organization '${scope.org.name}'`,
    );
  }
  return row;
}

/** The console page and API resource of an artifact row. */
export function artifactRowUrls(
  base: LinkBase,
  a: { flow_name: string; fingerprint: string; id: string },
): { html_url: string; api_url: string } {
  return artifactUrls(base, { flow: a.flow_name, fingerprint: a.fingerprint, id: a.id });
}

/** A line of history from a trail event of the artifact. */
export function historyLine(e: HistoryEventRow): { event: string; timestamp: number } | null {
  const d = e.data;
  const ts = epochSeconds(e.occurred_at);
  switch (e.type) {
    case 'artifact_creation_reported':
      return {
        event: `Reported to trail by ${typeof d.reported_by === 'string' ? d.reported_by : 'unknown'}`,
        timestamp: ts,
      };
    case 'artifact_attestation_reported':
    case 'trail_attestation_for_artifact_reported':
      return {
        event: `Attestation '${String(d.template_reference_name)}' (${String(d.attestation_type)}) reported: ${d.is_compliant ? 'compliant' : 'non-compliant'}`,
        timestamp: ts,
      };
    case 'artifact_started_running':
      return {
        event: `Started running in ${String(d.environment_name)}#${String(d.snapshot_index)}`,
        timestamp: ts,
      };
    case 'artifact_stopped_running':
      return {
        event: `Exited from ${String(d.environment_name)}#${String(d.snapshot_index)}`,
        timestamp: ts,
      };
    default:
      return null;
  }
}

type Runtime = Pick<ArtifactRecord, 'running' | 'exited' | 'history' | 'history_total'>;

const NO_HISTORY: ArtifactHistoryRows = { events: [], places: [], total: 0 };

/** Running, exited and history of one artifact from its history rows. */
export function runtimeFromHistory(h: ArtifactHistoryRows): Runtime {
  const places = runtimePlaces(
    h.places.map((e) => ({
      type: e.type,
      environmentName: typeof e.data.environment_name === 'string' ? e.data.environment_name : '',
      snapshotIndex: Number(e.data.snapshot_index ?? 0),
      seq: Number(e.seq),
    })),
  );
  return {
    ...places,
    history: h.events.map(historyLine).filter((l): l is { event: string; timestamp: number } => l !== null),
    history_total: h.total,
  };
}

/** Running, exited and history of artifacts, from their trails' event logs (one query for all). */
export async function runtimeOf(
  db: Db,
  orgId: string,
  artifacts: ReadonlyArray<{ trail_id: string; fingerprint: string }>,
): Promise<Map<string, Runtime>> {
  const histories = await trailEventsRepository.forArtifacts(
    db,
    orgId,
    artifacts.map((a) => ({ trailId: a.trail_id, fingerprint: a.fingerprint })),
  );
  const byArtifact = new Map(histories.map((h) => [`${h.trail_id}:${h.fingerprint}`, h.history]));
  const out = new Map<string, Runtime>();
  for (const a of artifacts) {
    const key = `${a.trail_id}:${a.fingerprint}`;
    out.set(key, runtimeFromHistory(byArtifact.get(key) ?? NO_HISTORY));
  }
  return out;
}

const asString = (d: Date) => String(epochSeconds(d));

/** The artifact records of these rows: evidence, running, exited, history (batched queries). */
export async function presentArtifacts(
  scope: OrgScope,
  rows: readonly ArtifactRowWithNames[],
): Promise<ArtifactRecord[]> {
  const effectiveIds = new Set<string>();
  for (const r of rows) {
    for (const s of (r.compliance as Partial<ArtifactStatusRecord>).attestations_statuses ?? []) {
      if (s.attestation_id) {
        effectiveIds.add(s.attestation_id);
      }
    }
  }
  const [attestations, runtime] = await Promise.all([
    attestationsRepository.findByIds(scope.db, scope.org.id, [...effectiveIds]),
    runtimeOf(scope.db, scope.org.id, rows),
  ]);
  const byId = new Map(attestations.map((a) => [a.id, a]));
  return rows.map((row) =>
    presentArtifact(
      scope,
      row,
      byId,
      runtime.get(`${row.trail_id}:${row.fingerprint}`) ?? runtimeFromHistory(NO_HISTORY),
    ),
  );
}

/**
 * The artifact record for endpoint 1 in one query (flow by its current name, artifact, its
 * evidence and its events); undefined when any part is missing, so the caller can explain which.
 */
export async function readArtifactRecord(
  scope: OrgScope,
  flowName: string,
  fingerprint: string,
  trailName: string | undefined,
): Promise<ArtifactRecord | undefined> {
  const found = await artifactsRepository.readWithEvidence(
    scope.db,
    scope.org.id,
    flowName,
    fingerprint,
    trailName,
  );
  if (!found) {
    return undefined;
  }
  return presentArtifact(
    scope,
    found.artifact,
    new Map(found.attestations.map((a) => [a.id, a])),
    runtimeFromHistory(found.history),
  );
}

function presentArtifact(
  scope: OrgScope,
  row: ArtifactRowWithNames,
  attestationsById: ReadonlyMap<string, EvidenceAttestation>,
  runtime: Runtime,
): ArtifactRecord {
  const status = row.compliance as Partial<ArtifactStatusRecord>;
  const evidence: ArtifactRecord['evidence'] = {};
  for (const s of status.attestations_statuses ?? []) {
    const a = s.attestation_id ? attestationsById.get(s.attestation_id) : undefined;
    if (a) {
      evidence[s.attestation_name] = presentEvidence(scope, a);
    }
  }
  return {
    id: row.id,
    trail_name: row.trail_name,
    template_reference_name: row.template_reference_name,
    fingerprint: row.fingerprint,
    filename: row.filename,
    git_commit: row.git_commit,
    git_commit_info: (row.git_commit_info as ArtifactRecord['git_commit_info']) ?? null,
    repo_info: (row.repo_info as ArtifactRecord['repo_info']) ?? null,
    commit_url: row.commit_url,
    build_url: row.build_url,
    repo_url: row.repo_url,
    ...artifactRowUrls(scope, row),
    created_at: asString(row.created_at),
    last_modified_at: asString(row.last_modified_at),
    user_data: row.user_data ?? {},
    external_urls: row.external_urls,
    annotations: row.annotations,
    state: row.state,
    evidence,
    template: row.legacy_template,
    flow_name: row.flow_name,
    state_info: stateInfo(status),
    running: runtime.running,
    exited: runtime.exited,
    history: runtime.history,
    history_total: runtime.history_total,
    commit_lead_times: {},
    build_lead_times: {},
  };
}

function stateInfo(status: Partial<ArtifactStatusRecord>): string | null {
  const slots = status.attestations_statuses ?? [];
  const missing = slots.filter((s) => s.status === 'MISSING').map((s) => s.attestation_name);
  const failing = slots.filter((s) => s.is_compliant === false).map((s) => s.attestation_name);
  const parts = [
    ...(failing.length > 0 ? [`non-compliant: ${failing.join(', ')}`] : []),
    ...(missing.length > 0 ? [`missing: ${missing.join(', ')}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : null;
}

function presentEvidence(scope: OrgScope, a: EvidenceAttestation): ArtifactRecord['evidence'][string] {
  const p = a.payload;
  return {
    evidence_type: a.kind === 'override' ? `override:${a.type}` : a.type,
    is_compliant: a.is_compliant,
    created_at: String(epochSeconds(a.created_at)),
    has_audit_package: true,
    build_url: a.origin_url || null,
    evidence_archive_fingerprint: a.evidence_sha256,
    description: a.description || null,
    evidence_url: a.evidence_sha256 ? attestationDownloadUrl(scope, a) : null,
    evidence_fingerprint: a.evidence_sha256,
    commit_sha: a.git_commit,
    git_provider: typeof p.git_provider === 'string' ? p.git_provider : null,
    user_data: a.user_data ?? {},
    snyk_results: p.snyk_results ?? null,
    junit_results: p.junit_results ?? null,
    jira_results: p.jira_results ?? null,
    pull_requests: Array.isArray(p.pull_requests) ? p.pull_requests : null,
    attestation_id: a.id,
  };
}
