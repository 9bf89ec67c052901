/**
 * Reading artifacts for the artifact routes: by fingerprint (spec endpoint 1), listed by flow or
 * repo, by commit, and a flow's latest commit. Presentation is usecases/evidence/artifacts.ts.
 */
import type { ArtifactRecord } from '../../../../shared/contract/artifacts.js';
import { NotFoundError } from '../../errors.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import { flowsRepository } from '../../storage/repositories/flows.js';
import { reposRepository } from '../../storage/repositories/repos.js';
import { trailEventsRepository } from '../../storage/repositories/trail-events.js';
import { historyLine, presentArtifacts, readArtifactRecord } from './artifact-present.js';
import { findArtifact } from './artifacts.js';
import { flowNotFound, resolveFlow } from './flows.js';
import type { OrgScope } from '../scope/org-scope.js';

/** Endpoint 1 without the cache: a full fingerprint in one query; prefixes, ids and errors after. */
export async function readArtifactByFingerprint(
  scope: OrgScope,
  params: { flow: string; fingerprint: string },
  query: {
    trail?: string | undefined;
    attestation_id?: string | undefined;
    artifact_id?: string | undefined;
  },
): Promise<ArtifactRecord> {
  if (params.fingerprint.length === 64 && !query.attestation_id && !query.artifact_id) {
    const record = await readArtifactRecord(scope, params.flow, params.fingerprint, query.trail);
    if (record) {
      return record;
    }
  }
  const flow = await resolveFlow(scope, params.flow);
  let trailName = query.trail;
  if (query.attestation_id) {
    const [att] = await attestationsRepository.findByIds(scope.db, scope.org.id, [query.attestation_id]);
    if (!att || att.flow_id !== flow.id) {
      throw new NotFoundError(`Attestation '${query.attestation_id}' does not exist in flow '${flow.name}'`);
    }
    trailName = att.trail_name;
  }
  if (query.artifact_id) {
    const artifact = await artifactsRepository.findById(scope.db, scope.org.id, query.artifact_id);
    if (!artifact || artifact.flow_id !== flow.id || !artifact.fingerprint.startsWith(params.fingerprint)) {
      throw new NotFoundError(
        `Artifact '${query.artifact_id}' with fingerprint '${params.fingerprint}' does not exist in flow '${flow.name}'`,
      );
    }
    trailName = artifact.trail_name;
  }
  const row = await findArtifact(scope, flow, params.fingerprint, trailName);
  const [record] = await presentArtifacts(scope, [row]);
  return record!;
}

/** Artifacts of a flow, of a repo, or both, newest first; 404 for an unknown flow or repo. */
export async function listArtifacts(
  scope: OrgScope,
  filter: { flowName?: string | undefined; repoName?: string | undefined },
  page: { limit: number; offset: number },
): Promise<ArtifactRecord[]> {
  let flowId: string | undefined;
  let repoIds: string[] | undefined;
  if (filter.flowName !== undefined) {
    const flow = await flowsRepository.findByName(scope.db, scope.org.id, filter.flowName);
    if (!flow) {
      throw flowNotFound(filter.flowName, scope.org.name);
    }
    flowId = flow.id;
  }
  if (filter.repoName !== undefined) {
    repoIds = (await reposRepository.findByName(scope.db, scope.org.id, filter.repoName)).map((r) => r.id);
    if (repoIds.length === 0) {
      throw new NotFoundError(`Repo '${filter.repoName}' not found`);
    }
  }
  const rows = [];
  for (const repoId of repoIds ?? [undefined]) {
    rows.push(...(await artifactsRepository.list(scope.db, scope.org.id, { flowId, repoId }, page)));
  }
  return presentArtifacts(scope, rows);
}

/** The artifacts of a flow built from a commit (in one trail when named). */
export async function artifactsByCommit(
  scope: OrgScope,
  flowName: string,
  commitSha: string,
  trailName: string | undefined,
): Promise<ArtifactRecord[]> {
  const flow = await resolveFlow(scope, flowName);
  const rows = await artifactsRepository.byCommit(scope.db, scope.org.id, flow.id, commitSha, trailName);
  return presentArtifacts(scope, rows);
}

/** The latest commit reported in the flow (on a branch when given); null without such a flow. */
export async function latestArtifactCommit(
  scope: OrgScope,
  flowName: string,
  branch: string | undefined,
): Promise<string | null> {
  const flow = await flowsRepository.findByName(scope.db, scope.org.id, flowName);
  return flow ? artifactsRepository.latestCommit(scope.db, scope.org.id, flow.id, branch) : null;
}

/**
 * A page of an artifact's whole history, oldest first (its answer carries only the first and
 * the most recent lines), with its lines in all; the artifact found as endpoint 1 finds it.
 */
export async function artifactHistoryPage(
  scope: OrgScope,
  params: { flow: string; fingerprint: string },
  trailName: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ data: Array<{ event: string; timestamp: number }>; total: number }> {
  const flow = await resolveFlow(scope, params.flow);
  const row = await findArtifact(scope, flow, params.fingerprint, trailName);
  const { events, total } = await trailEventsRepository.historyPage(
    scope.db,
    scope.org.id,
    { trailId: row.trail_id, fingerprint: row.fingerprint },
    page,
  );
  return {
    data: events.map(historyLine).filter((l): l is { event: string; timestamp: number } => l !== null),
    total,
  };
}
