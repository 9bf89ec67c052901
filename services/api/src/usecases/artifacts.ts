/** Artifacts: report into a trail, resolve by fingerprint prefix, present with evidence and history. */
import type { ArtifactRecord, CreateArtifact } from '../../../shared/contract/artifacts.js';
import type { ArtifactStatusRecord } from '../domain/compliance.js';
import { resolveFingerprintPrefix } from '../domain/fingerprint-prefix.js';
import { runtimePlaces } from '../domain/runtime-status.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import { epochSeconds, newId } from '../ids.js';
import type { Db } from '../storage/database.js';
import { artifactsRepository, type ArtifactRowWithNames } from '../storage/repositories/artifacts.js';
import {
  attestationsRepository,
  type AttestationRowWithNames,
} from '../storage/repositories/attestations.js';
import type { FlowRow } from '../storage/repositories/flows.js';
import { toJson } from '../storage/repositories/json.js';
import { trailEventsRepository, type TrailEventRow } from '../storage/repositories/trail-events.js';
import { reevaluateTrail } from './evaluation.js';
import { seg, type EvidenceContext } from './evidence-context.js';
import { evidenceDownloadUrl } from './attestation-present.js';
import { ensureFlow } from './flows.js';
import { captureRepo } from './repos.js';
import { ensureTrail } from './trails.js';

/** How many candidates an ambiguous prefix lists. */
const MAX_CANDIDATES = 10;

/** Reports an artifact to its trail (created when missing); returns whether it was new. */
export async function reportArtifact(
  ctx: EvidenceContext,
  flowName: string,
  input: CreateArtifact,
): Promise<{ created: boolean }> {
  const flow = await ensureFlow(ctx, flowName);
  // The deprecated `report artifact` names no trail: each artifact then gets its own, named by its commit.
  const trailName = input.trail_name ?? input.git_commit ?? input.fingerprint;
  const trail = await ensureTrail(ctx, flow, trailName);
  const repoId = await captureRepo(ctx.db, ctx.orgId, input.repo_info, ctx.now);
  const gitCommit =
    input.git_commit ??
    (input.git_commit_info?.sha1.match(/^[a-f0-9]{40}$/) ? input.git_commit_info.sha1 : null);
  const legacy = Array.isArray(input.template)
    ? input.template
    : input.template
      ? input.template.split(/[\s,]+/)
      : null;
  const fields = {
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
    last_modified_at: ctx.now,
  };
  const existing = await artifactsRepository.findInTrail(ctx.db, ctx.orgId, trail.id, input.fingerprint);
  let artifactId: string;
  if (existing) {
    artifactId = existing.id;
    await artifactsRepository.update(ctx.db, ctx.orgId, existing.id, fields);
  } else {
    artifactId = newId();
    await artifactsRepository.insert(ctx.db, {
      ...fields,
      org_id: ctx.orgId,
      id: artifactId,
      flow_id: flow.id,
      trail_id: trail.id,
      fingerprint: input.fingerprint,
      created_by: ctx.actor,
      created_at: ctx.now,
      state: 'INCOMPLETE',
      compliance: '{}',
    });
  }
  await trailEventsRepository.insert(ctx.db, [
    {
      org_id: ctx.orgId,
      trail_id: trail.id,
      type: 'artifact_creation_reported',
      fingerprint: input.fingerprint,
      occurred_at: ctx.now,
      data: JSON.stringify({
        artifact_fingerprint: input.fingerprint,
        artifact_name: input.filename,
        artifact_id: artifactId,
        template_reference_name: input.template_reference_name ?? null,
        git_commit: gitCommit,
        reported_by: ctx.actor,
      }),
    },
  ]);
  const { changedFingerprints, evaluation } = await reevaluateTrail(ctx.db, {
    orgId: ctx.orgId,
    flow,
    trail,
    now: ctx.now,
  });
  const status = evaluation.byArtifactId[artifactId]?.status ?? 'INCOMPLETE';
  await ctx.events.publish(ctx.db, [
    {
      type: 'artifact.reported',
      orgId: ctx.orgId,
      flowName: flow.name,
      trailName: trail.name,
      fingerprint: input.fingerprint,
      artifactName: input.filename,
      artifactId,
      gitCommit,
      commitUrl: input.commit_url ?? null,
      buildUrl: input.build_url ?? null,
      state: status === 'MISSING' ? 'INCOMPLETE' : status,
      at: ctx.now,
    },
    ...(changedFingerprints.length > 0 || !existing
      ? [
          {
            type: 'artifact.compliance-changed' as const,
            orgId: ctx.orgId,
            fingerprints: [...new Set([...changedFingerprints, ...(existing ? [] : [input.fingerprint])])],
            at: ctx.now,
          },
        ]
      : []),
  ]);
  return { created: !existing };
}

/** Resolves a 5-64 hex prefix to one fingerprint in the flow (or anywhere); 400 when ambiguous. */
export async function resolvePrefix(
  db: Db,
  orgId: string,
  prefix: string,
  flowId: string | null,
): Promise<string | null> {
  if (prefix.length === 64) return prefix;
  const matches = await artifactsRepository.fingerprintsByPrefix(
    db,
    orgId,
    prefix,
    flowId,
    MAX_CANDIDATES + 1,
  );
  const r = resolveFingerprintPrefix(prefix, matches);
  if (r.kind === 'one') return r.fingerprint;
  if (r.kind === 'none') return null;
  throw new BadRequestError(
    `Fingerprint prefix '${prefix}' is ambiguous: it matches ${r.candidates.slice(0, MAX_CANDIDATES).join(', ')}${r.candidates.length > MAX_CANDIDATES ? ', ...' : ''}`,
    { 'path.fingerprint': 'matches more than one artifact; give more characters' },
  );
}

/** The artifact in the flow by fingerprint or prefix (its latest trail unless one is named); 404 otherwise. */
export async function findArtifact(
  ctx: EvidenceContext,
  flow: FlowRow,
  fingerprintOrPrefix: string,
  trailName?: string,
): Promise<ArtifactRowWithNames> {
  const fingerprint = await resolvePrefix(ctx.db, ctx.orgId, fingerprintOrPrefix, flow.id);
  const row = fingerprint
    ? await artifactsRepository.findInFlow(ctx.db, ctx.orgId, flow.id, fingerprint, trailName)
    : undefined;
  if (!row) {
    throw new NotFoundError(
      trailName === undefined
        ? `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in flow '${flow.name}' belonging to organization '${ctx.orgName}'`
        : `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in trail '${trailName}' of flow '${flow.name}' belonging to organization '${ctx.orgName}'`,
    );
  }
  return row;
}

/** Artifact pages. */
export function artifactUrls(
  ctx: Pick<EvidenceContext, 'publicUrl' | 'orgName'>,
  a: { flow_name: string; fingerprint: string; id: string },
) {
  return {
    html_url: `${ctx.publicUrl}/${seg(ctx.orgName)}/flows/${seg(a.flow_name)}/artifacts/${a.fingerprint}?artifact_id=${a.id}`,
    api_url: `${ctx.publicUrl}/api/v2/artifacts/${seg(ctx.orgName)}/${seg(a.flow_name)}/fingerprint/${a.fingerprint}`,
  };
}

/** A line of history from a trail event of the artifact. */
export function historyLine(e: TrailEventRow): { event: string; timestamp: number } | null {
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

type Runtime = {
  running: ArtifactRecord['running'];
  exited: ArtifactRecord['exited'];
  history: ArtifactRecord['history'];
};

/** Running, exited and history of one artifact from its events in its trail's log. */
export function runtimeFromEvents(events: readonly TrailEventRow[]): Runtime {
  const places = runtimePlaces(
    events.map((e) => ({
      type: e.type,
      environmentName: typeof e.data.environment_name === 'string' ? e.data.environment_name : '',
      snapshotIndex: Number(e.data.snapshot_index ?? 0),
      seq: Number(e.seq),
    })),
  );
  return {
    ...places,
    history: events.map(historyLine).filter((h): h is { event: string; timestamp: number } => h !== null),
  };
}

/** Running, exited and history of artifacts, from their trails' event logs (one query for all). */
export async function runtimeOf(
  db: Db,
  orgId: string,
  artifacts: ReadonlyArray<{ trail_id: string; fingerprint: string }>,
): Promise<Map<string, Runtime>> {
  const events = await trailEventsRepository.forArtifacts(
    db,
    orgId,
    artifacts.map((a) => ({ trailId: a.trail_id, fingerprint: a.fingerprint })),
  );
  const out = new Map<string, Runtime>();
  for (const a of artifacts) {
    out.set(
      `${a.trail_id}:${a.fingerprint}`,
      runtimeFromEvents(events.filter((e) => e.trail_id === a.trail_id && e.fingerprint === a.fingerprint)),
    );
  }
  return out;
}

const asString = (d: Date) => String(epochSeconds(d));

/** The artifact records of these rows: evidence, running, exited, history (batched queries). */
export async function presentArtifacts(
  ctx: EvidenceContext,
  rows: readonly ArtifactRowWithNames[],
): Promise<ArtifactRecord[]> {
  const effectiveIds = new Set<string>();
  for (const r of rows) {
    for (const s of (r.compliance as Partial<ArtifactStatusRecord>).attestations_statuses ?? []) {
      if (s.attestation_id) effectiveIds.add(s.attestation_id);
    }
  }
  const [attestations, runtime] = await Promise.all([
    attestationsRepository.findByIds(ctx.db, ctx.orgId, [...effectiveIds]),
    runtimeOf(ctx.db, ctx.orgId, rows),
  ]);
  const byId = new Map(attestations.map((a) => [a.id, a]));
  return rows.map((row) =>
    presentArtifact(
      ctx,
      row,
      byId,
      runtime.get(`${row.trail_id}:${row.fingerprint}`) ?? runtimeFromEvents([]),
    ),
  );
}

/**
 * The artifact record for endpoint 1 in one query (flow by its current name, artifact, its
 * evidence and its events); undefined when any part is missing, so the caller can explain which.
 */
export async function readArtifactRecord(
  ctx: EvidenceContext,
  flowName: string,
  fingerprint: string,
  trailName: string | undefined,
): Promise<ArtifactRecord | undefined> {
  const found = await artifactsRepository.readWithEvidence(
    ctx.db,
    ctx.orgId,
    flowName,
    fingerprint,
    trailName,
  );
  if (!found) return undefined;
  return presentArtifact(
    ctx,
    found.artifact,
    new Map(found.attestations.map((a) => [a.id, a])),
    runtimeFromEvents(found.events),
  );
}

function presentArtifact(
  ctx: EvidenceContext,
  row: ArtifactRowWithNames,
  attestationsById: ReadonlyMap<string, AttestationRowWithNames>,
  runtime: Runtime,
): ArtifactRecord {
  const status = row.compliance as Partial<ArtifactStatusRecord>;
  const evidence: ArtifactRecord['evidence'] = {};
  for (const s of status.attestations_statuses ?? []) {
    const a = s.attestation_id ? attestationsById.get(s.attestation_id) : undefined;
    if (a) evidence[s.attestation_name] = presentEvidence(ctx, a);
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
    ...artifactUrls(ctx, row),
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

function presentEvidence(
  ctx: EvidenceContext,
  a: AttestationRowWithNames,
): ArtifactRecord['evidence'][string] {
  const p = a.payload;
  return {
    evidence_type: a.kind === 'override' ? `override:${a.type}` : a.type,
    is_compliant: a.is_compliant,
    created_at: String(epochSeconds(a.created_at)),
    has_audit_package: true,
    build_url: a.origin_url || null,
    evidence_archive_fingerprint: a.evidence_sha256,
    description: a.description || null,
    evidence_url: a.evidence_sha256 ? evidenceDownloadUrl(ctx, a) : null,
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
