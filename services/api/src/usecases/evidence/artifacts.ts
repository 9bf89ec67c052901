/** Artifacts: report into a trail, and resolve by fingerprint prefix (presentation: artifact-present.ts). */
import type { CreateArtifact } from '../../../../shared/contract/artifacts.js';
import { artifactState } from '../../domain/compliance.js';
import { resolveFingerprintPrefix } from '../../domain/fingerprint-prefix.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Db } from '../../storage/database.js';
import { artifactsRepository, type ArtifactRowWithNames } from '../../storage/repositories/artifacts.js';
import type { FlowRow } from '../../storage/repositories/flows.js';
import { toJson } from '../../storage/repositories/json.js';
import { trailEventsRepository } from '../../storage/repositories/trail-events.js';
import { reevaluateTrail } from './evaluation.js';
import type { OrgScope } from '../scope/org-scope.js';
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
