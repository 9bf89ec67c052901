/**
 * Asserts in environment and policy scope (semantics.md section 6, reference/cli-requests.md
 * `assert artifact --environment E | --policy P...`): the fingerprint is evaluated with its real
 * provenance against the latest version of each policy, exactly as snapshots evaluate what runs.
 * Environment scope takes the policies attached to the environment and honours its allowlist;
 * policy scope takes the named policies.
 */
import type { z } from 'zod';
import type { AssertResult } from '../../../../shared/contract/search.js';
import { evaluateArtifactAgainstPolicies, type PolicyVersion } from '../../domain/policy-evaluation.js';
import type { ParsedPolicy } from '../../domain/policy.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { allowlistsRepository } from '../../storage/repositories/allowlists.js';
import { policiesRepository } from '../../storage/repositories/policies.js';
import { epochSeconds } from '../../time.js';
import { resolvePrefix } from '../evidence/artifacts.js';
import { getEnvironment } from './environments.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { ProvenancePort } from '../scope/provenance.js';
import { attachedPolicies } from './report-ingest.js';
import { assertFlowId, assertFlows } from '../evidence/search.js';

export type AssertScope =
  { kind: 'environment'; environment: string } | { kind: 'policy'; policies: readonly string[] };

/** The latest version of each named policy; 404 naming the first that does not exist. */
async function namedPolicies(ctx: OrgScope, names: readonly string[]): Promise<PolicyVersion[]> {
  const unique = [...new Set(names)];
  const rows = await policiesRepository.findByNames(ctx.db, ctx.org.id, unique);
  const byName = new Map(rows.filter((r) => !r.archived).map((r) => [r.name, r]));
  const missing = unique.find((n) => !byName.has(n));
  if (missing !== undefined) {
    throw new NotFoundError(`Policy '${missing}' does not exist in organization '${ctx.org.name}'`);
  }
  const versions = await policiesRepository.versions(
    ctx.db,
    ctx.org.id,
    rows.map((r) => r.id),
  );
  const latest = new Map<string, (typeof versions)[number]>();
  for (const v of versions) {
    const seen = latest.get(v.policy_id);
    if (!seen || v.version > seen.version) {
      latest.set(v.policy_id, v);
    }
  }
  return unique.flatMap((name) => {
    const row = byName.get(name)!;
    const v = latest.get(row.id);
    return v ? [{ id: row.id, name: row.name, version: v.version, policy: v.parsed as ParsedPolicy }] : [];
  });
}

/** `GET /asserts/{org}/fingerprint/{fp}?environment_name=E` or `?policy_name=P&policy_name=Q`. */
export async function assertWithPolicies(
  ctx: OrgScope,
  provenance: ProvenancePort,
  fingerprintOrPrefix: string,
  flowName: string | undefined,
  scope: AssertScope,
): Promise<z.infer<typeof AssertResult>> {
  const flowId = await assertFlowId(ctx, flowName);
  // A full fingerprint needs no evidence: an artifact nobody reported fails provenance rules.
  const fingerprint = await resolvePrefix(ctx.db, ctx.org.id, fingerprintOrPrefix, flowId);
  if (!fingerprint) {
    throw new NotFoundError(
      `Artifact with fingerprint '${fingerprintOrPrefix}' does not exist in organization '${ctx.org.name}'`,
    );
  }

  let policies: PolicyVersion[];
  let allowListing: z.infer<typeof AssertResult>['allow_listing'] = null;
  let environment: string | null = null;
  if (scope.kind === 'environment') {
    const env = await getEnvironment(ctx, scope.environment);
    environment = env.name;
    policies = await attachedPolicies(ctx.db, ctx.org.id, env.id);
    if (policies.length === 0) {
      throw new BadRequestError(
        `Environment '${env.name}' has no policies attached: there is nothing to assert against. Attach one with 'kosli attach-policy', or assert with --policy`,
        { 'query.environment_name': 'has no policies attached' },
      );
    }
    const entry = await allowlistsRepository.find(ctx.db, ctx.org.id, env.id, fingerprint);
    if (entry) {
      allowListing = {
        allowlist_id: entry.id,
        allowed_by_user_id: entry.created_by,
        timestamp: epochSeconds(entry.created_at),
        description: entry.description,
      };
    }
  } else {
    policies = await namedPolicies(ctx, scope.policies);
  }

  const [flows, found] = await Promise.all([
    assertFlows(ctx, fingerprint, flowId),
    provenance.find(ctx.db, ctx.org.id, [fingerprint]),
  ]);
  const records = (found.get(fingerprint) ?? []).filter(
    (r) => flowName === undefined || flows.some((f) => f.flow === r.flowName),
  );
  const artifact = { name: records[0]?.artifactName ?? fingerprint, fingerprint };
  const verdict = evaluateArtifactAgainstPolicies(artifact, records, policies, allowListing !== null);
  return {
    fingerprint,
    compliant: verdict.compliant === true,
    scope: scope.kind,
    environment,
    policy_evaluations: verdict.decisions,
    allow_listing: allowListing,
    flows,
    flow: flows[0]?.flow ?? null,
    trail: flows[0]?.trail ?? null,
    html_url: flows[0]?.html_url ?? '',
  };
}
