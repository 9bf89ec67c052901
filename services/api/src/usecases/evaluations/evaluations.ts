/**
 * Server-side policy evaluations (reference/peers-2026-11b.md 1.1-1.2): a request is checked
 * (bundle, trails, the decision's destination) and queued; the evaluation workers
 * (evaluation-run.ts) run it off the request path. Reads answer with what a client polls for.
 */
import type {
  Evaluation,
  EvaluationDecisionTarget,
  EvaluationInput,
} from '../../../../shared/contract/evaluations.js';
import { bundleProblem, canonicalBundle, regoFiles } from '../../domain/policy-bundle.js';
import { BadRequestError, ForbiddenError, NotFoundError, TooManyRequestsError } from '../../errors.js';
import { newId } from '../../ids.js';
import { sha256 } from '../../sha256.js';
import { epochSeconds } from '../../time.js';
import { controlsRepository } from '../../storage/repositories/controls.js';
import { evaluationsRepository, type EvaluationRow } from '../../storage/repositories/evaluations.js';
import { flowsRepository, type FlowRow } from '../../storage/repositories/flows.js';
import { trailsRepository, type TrailRow } from '../../storage/repositories/trails.js';
import { trailStore } from '../../storage/trail-store/index.js';
import type { OrgScope } from '../scope/org-scope.js';

/** The feature switch of server-side evaluation (on unless an admin turns it off). */
export const SERVER_SIDE_EVALUATION = 'server-side-evaluation';
export const FEATURES: Record<string, { default: boolean }> = {
  [SERVER_SIDE_EVALUATION]: { default: true },
};

/** Bytes of params (as JSON): they are stored with the evaluation and cited by its decision. */
export const MAX_PARAMS_BYTES = 65_536;

/** Evaluations an organization may have waiting or running; more are refused with 429. */
export const MAX_UNFINISHED_PER_ORG = 100;

/** One trail an evaluation names, resolved. */
export interface ResolvedTrail {
  flow: FlowRow;
  trail: TrailRow;
}

/** The named trails, found by flow (or an old name of it) and trail name; missing ones listed. */
export async function resolveTrails(
  scope: OrgScope,
  refs: ReadonlyArray<{ flow: string; trail: string }>,
): Promise<{ found: ResolvedTrail[]; missing: string[] }> {
  const byFlow = new Map<string, string[]>();
  for (const r of refs) {
    const names = byFlow.get(r.flow) ?? [];
    names.push(r.trail);
    byFlow.set(r.flow, names);
  }
  const found = new Map<string, ResolvedTrail>();
  for (const [flowName, trailNames] of byFlow) {
    const flow = await flowsRepository.findByName(scope.db, scope.org.id, flowName);
    if (!flow) {
      continue;
    }
    const trails = await evaluationsRepository.trailsNamed(scope.db, scope.org.id, flow.id, trailNames);
    for (const trail of trails) {
      found.set(`${flowName}/${trail.name}`, { flow, trail });
    }
  }
  const missing: string[] = [];
  const resolved: ResolvedTrail[] = [];
  for (const r of refs) {
    const hit = found.get(`${r.flow}/${r.trail}`);
    if (hit) {
      resolved.push(hit);
    } else {
      missing.push(`${r.flow}/${r.trail}`);
    }
  }
  return { found: resolved, missing };
}

/** The 404 of trails that do not exist, as the CLI pins it. */
export function trailsMissing(scope: OrgScope, missing: readonly string[]): NotFoundError {
  return new NotFoundError(`These trails do not exist in org '${scope.org.name}': ${missing.join(', ')}`);
}

/** Whether the organization has `feature` on. */
export async function featureEnabled(scope: OrgScope, feature: string): Promise<boolean> {
  const set = await evaluationsRepository.feature(scope.db, scope.org.id, feature);
  return set ?? FEATURES[feature]?.default ?? false;
}

function knownFeature(feature: string): void {
  if (!Object.hasOwn(FEATURES, feature)) {
    throw new NotFoundError(
      `Feature '${feature}' does not exist; known features: ${Object.keys(FEATURES).join(', ')}`,
    );
  }
}

export async function readFeature(
  scope: OrgScope,
  feature: string,
): Promise<{ feature: string; enabled: boolean }> {
  knownFeature(feature);
  return { feature, enabled: await featureEnabled(scope, feature) };
}

/** Turns a feature on or off for the organization. */
export async function setFeature(
  scope: OrgScope,
  feature: string,
  enabled: boolean,
): Promise<{ feature: string; enabled: boolean }> {
  knownFeature(feature);
  await evaluationsRepository.setFeature(scope.db, scope.org.id, feature, enabled, scope.now);
  return { feature, enabled };
}

/**
 * Checks that a decision can be written where it is asked to be: before anything is queued, and
 * again before it is written.
 */
export async function checkDecisionTarget(scope: OrgScope, target: EvaluationDecisionTarget): Promise<void> {
  const control = await controlsRepository.find(scope.db, scope.org.id, target.control);
  if (!control) {
    throw new NotFoundError(`Control '${target.control}' does not exist in org '${scope.org.name}'`);
  }
  if (control.archived) {
    throw new BadRequestError(`Control '${target.control}' has been archived in org '${scope.org.name}'`);
  }
  const flow = await flowsRepository.findByName(scope.db, scope.org.id, target.flow);
  if (flow?.archived) {
    throw new BadRequestError(
      `Flow named '${target.flow}' has been archived for organization '${scope.org.name}'`,
    );
  }
  const trail = flow ? await trailsRepository.find(scope.db, scope.org.id, flow.id, target.trail) : undefined;
  if (!flow || !trail) {
    throw trailsMissing(scope, [`${target.flow}/${target.trail}`]);
  }
  if (target.fingerprint) {
    const inputs = await trailStore.evaluationInputs(scope.db, scope.org.id, trail.id);
    if (!inputs.artifacts.some((a) => a.fingerprint === target.fingerprint)) {
      throw new NotFoundError(
        `Artifact with fingerprint ${target.fingerprint} does not exist in trail "${trail.name}" of flow "${flow.name}" belonging to organization "${scope.org.name}"`,
      );
    }
  }
}

/** The bundle's digest: SHA-256 of its canonical text, so the same files give the same digest. */
export function bundleDigest(files: Record<string, string>): string {
  return sha256(canonicalBundle(files));
}

/** Checks and queues an evaluation; answers it as created (pending). */
export async function createEvaluation(
  scope: OrgScope,
  input: EvaluationInput,
): Promise<{ id: string; status: 'pending'; requested_at: number; recorded_at: number }> {
  if (!(await featureEnabled(scope, SERVER_SIDE_EVALUATION))) {
    throw new ForbiddenError('Server-side evaluation is not enabled for this organization');
  }
  const files = input.policy.files;
  const problem = bundleProblem(files);
  if (problem) {
    throw new BadRequestError(problem.message, { [problem.field]: problem.message });
  }
  const paramsBytes = Buffer.byteLength(JSON.stringify(input.params));
  if (paramsBytes > MAX_PARAMS_BYTES) {
    const message = `params is ${paramsBytes} bytes of JSON, over the ${MAX_PARAMS_BYTES} byte limit`;
    throw new BadRequestError(message, { 'body.params': message });
  }
  const rego = regoFiles(files);
  if (rego.length > 0) {
    const message =
      `Policy files ${rego.join(', ')} are Rego: this server evaluates CEL policies, and Rego runs ` +
      'client-side (kosli evaluate trail without --server-side)';
    throw new BadRequestError(message, { 'body.policy.files': message });
  }
  // Duplicate pairs are stored once.
  const seen = new Set<string>();
  const trails = input.context.trails.filter((t) => {
    const key = `${t.flow}/${t.trail}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  const { missing } = await resolveTrails(scope, trails);
  if (missing.length > 0) {
    throw trailsMissing(scope, missing);
  }
  if (input.decision) {
    await checkDecisionTarget(scope, input.decision);
  }
  if ((await evaluationsRepository.unfinished(scope.db, scope.org.id)) >= MAX_UNFINISHED_PER_ORG) {
    throw new TooManyRequestsError(5);
  }
  const id = newId(scope.now.getTime());
  await evaluationsRepository.insert(scope.db, {
    org_id: scope.org.id,
    id,
    request: { trails, files, params: input.params, decision: input.decision ?? null },
    policy_digest: bundleDigest(files),
    requested_by: scope.actor,
    requested_at: scope.now,
  });
  scope.events.committed([{ type: 'evaluation.requested' }]);
  const at = epochSeconds(scope.now);
  return { id, status: 'pending', requested_at: at, recorded_at: at };
}

/** An evaluation as clients read it: absent fields left out, never null. */
export function presentEvaluation(row: EvaluationRow): Evaluation {
  const at = epochSeconds(row.requested_at);
  const status = row.status === 'running' ? 'pending' : row.status;
  return {
    id: row.id,
    status,
    requested_at: at,
    recorded_at: at,
    ...(status === 'completed' && row.result ? { result: row.result } : {}),
    ...(status === 'failed' && row.error ? { error: row.error } : {}),
    ...(row.decision_attestation_id ? { decision_attestation_id: row.decision_attestation_id } : {}),
    policy_digest: `sha256:${row.policy_digest}`,
  };
}

export async function readEvaluation(scope: OrgScope, id: string): Promise<Evaluation> {
  const row = await evaluationsRepository.find(scope.db, scope.org.id, id);
  if (!row) {
    throw new NotFoundError(`Evaluation '${id}' does not exist in org '${scope.org.name}'`);
  }
  return presentEvaluation(row);
}
