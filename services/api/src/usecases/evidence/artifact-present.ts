/** Artifacts as the API and console show them: links, evidence, history and where they run. */
import { logIndexes } from '../log/log.js';
import type { ArtifactRecord } from '../../../../shared/contract/artifacts.js';
import type { ArtifactStatusRecord } from '../../domain/compliance.js';
import { runtimePlaces } from '../../domain/runtime-status.js';
import { epochSeconds } from '../../time.js';
import type { Db } from '../../storage/database.js';
import {
  artifactsRepository,
  type ArtifactRowWithNames,
  type EvidenceAttestation,
} from '../../storage/repositories/artifacts.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import { deploymentsRepository } from '../../storage/repositories/deployments.js';
import {
  trailEventsRepository,
  type ArtifactHistoryRows,
  type HistoryEventRow,
} from '../../storage/repositories/trail-events.js';
import type { OrgScope } from '../scope/org-scope.js';
import { attestationDownloadUrl } from './attestation-present.js';
import { artifactUrls, type LinkBase } from '../scope/links.js';

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
type LeadTimes = Pick<ArtifactRecord, 'commit_lead_times' | 'build_lead_times'>;

/**
 * Per artifact record: seconds from its commit (`commit_lead_times`) and from its creation
 * (`build_lead_times`) to the first moment it ran in each environment, as recorded then.
 */
async function leadTimesOf(
  db: Db,
  orgId: string,
  artifactIds: readonly string[],
): Promise<Map<string, LeadTimes>> {
  const out = new Map<string, LeadTimes>();
  for (const r of await deploymentsRepository.leadTimesOf(db, orgId, artifactIds)) {
    let l = out.get(r.artifact_id);
    if (!l) {
      l = { commit_lead_times: {}, build_lead_times: {} };
      out.set(r.artifact_id, l);
    }
    if (r.commit_lead_time !== null) {
      l.commit_lead_times[r.environment_name] = r.commit_lead_time;
    }
    l.build_lead_times[r.environment_name] = r.build_lead_time;
  }
  return out;
}

const NO_LEAD_TIMES = (): LeadTimes => ({ commit_lead_times: {}, build_lead_times: {} });

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
  const [attestations, runtime, leadTimes, logIndex] = await Promise.all([
    attestationsRepository.findByIds(scope.db, scope.org.id, [...effectiveIds]),
    runtimeOf(scope.db, scope.org.id, rows),
    leadTimesOf(
      scope.db,
      scope.org.id,
      rows.map((r) => r.id),
    ),
    logIndexes(
      scope.db,
      scope.org.id,
      'artifact',
      rows.map((r) => r.id),
    ),
  ]);
  const byId = new Map(attestations.map((a) => [a.id, a]));
  return rows.map((row) => ({
    ...presentArtifact(
      scope,
      row,
      byId,
      runtime.get(`${row.trail_id}:${row.fingerprint}`) ?? runtimeFromHistory(NO_HISTORY),
      leadTimes.get(row.id) ?? NO_LEAD_TIMES(),
    ),
    log_index: logIndex(row.id),
  }));
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
  const [leadTimes, logIndex] = await Promise.all([
    leadTimesOf(scope.db, scope.org.id, [found.artifact.id]),
    logIndexes(scope.db, scope.org.id, 'artifact', [found.artifact.id]),
  ]);
  return {
    ...presentArtifact(
      scope,
      found.artifact,
      new Map(found.attestations.map((a) => [a.id, a])),
      runtimeFromHistory(found.history),
      leadTimes.get(found.artifact.id) ?? NO_LEAD_TIMES(),
    ),
    log_index: logIndex(found.artifact.id),
  };
}

function presentArtifact(
  scope: OrgScope,
  row: ArtifactRowWithNames,
  attestationsById: ReadonlyMap<string, EvidenceAttestation>,
  runtime: Runtime,
  leadTimes: LeadTimes,
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
    commit_lead_times: leadTimes.commit_lead_times,
    build_lead_times: leadTimes.build_lead_times,
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
