/**
 * Running one claimed evaluation (reference/peers-2026-11b.md 1.2): the input is read from the
 * named trails at one instant, the bundle's entry expression is evaluated by the policy engine
 * (off the event loop, bounded in time and memory), and the outcome is recorded; with a decision
 * asked for, a completed evaluation first writes it as a decision attestation through the same
 * path as `kosli attest decision`. A failed evaluation never writes a decision.
 */
import { canonicalJson, policyEntry, POLICY_ENTRY } from '../../domain/policy-bundle.js';
import { ApiError } from '../../errors.js';
import { sha256 } from '../../sha256.js';
import { epochSeconds } from '../../time.js';
import { evaluationsRepository, type EvaluationRow } from '../../storage/repositories/evaluations.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import type { EvaluationRequest } from '../../storage/tables/evaluations.js';
import { recordAttestation } from '../evidence/attestations.js';
import { scopeFor, type AppScope, type OrgScope } from '../scope/org-scope.js';
import { checkDecisionTarget, resolveTrails, type ResolvedTrail } from './evaluations.js';

/** What the engine gives for one evaluation (workers/cel-evaluator.ts). */
export type EngineOutcome =
  | { outcome: 'completed'; allow: boolean; violations: string[] }
  | { outcome: 'failed'; kind: string; message: string };

/** The policy engine, as the runner sees it. */
export interface PolicyEngine {
  evaluate(
    org: string,
    job: { entry: string; source: string; input: unknown; params: unknown },
  ): Promise<EngineOutcome>;
}

/** What one trail's input holds at most, and the input as a whole. */
export const INPUT_LIMITS = { maxAttestations: 1_000, maxArtifacts: 1_000, maxBytes: 16 * 1024 * 1024 };
/** Claims of one evaluation before it is given up (a worker died with it each time). */
export const MAX_ATTEMPTS = 3;

type Failure = { kind: string; message: string };

/** How a run ended: allowed, denied, failed with its kind, or its claim lost to another worker. */
export type RunOutcome = 'allowed' | 'denied' | `failed:${string}` | 'claim_lost';

/** The input the policy sees: `input.trails`, and `input.trail` when one trail is named. */
async function buildInput(scope: OrgScope, trails: ResolvedTrail[]): Promise<Record<string, unknown>> {
  const rows = await evaluationsRepository.trailInputs(
    scope.db,
    scope.org.id,
    trails.map((t) => t.trail.id),
    INPUT_LIMITS,
  );
  const documents = trails.map(({ flow, trail }) => {
    const r = rows.get(trail.id)!;
    // The template in force: the trail's own, else its flow's; its digest names it.
    const template = trail.template_yaml ?? flow.template_yaml;
    return {
      moment_number: r.events,
      created_at: epochSeconds(trail.created_at),
      template_id: template === null ? null : sha256(template),
      compliance_status: trail.compliance_state,
      flow_name: flow.name,
      trail_name: trail.name,
      attestations: r.attestations.map((a) => ({
        name: a.name,
        type: a.type,
        is_compliant: a.is_compliant,
        data: attestationData(a.payload),
      })),
      artifacts: r.artifacts.map((a) => ({
        name: a.name,
        fingerprint: a.fingerprint,
        compliance_status: a.state,
      })),
    };
  });
  return documents.length === 1 ? { trails: documents, trail: documents[0] } : { trails: documents };
}

/** What an attestation reported: a system or custom type's data, or its type's results. */
function attestationData(payload: unknown): unknown {
  if (payload && typeof payload === 'object' && 'attestation_data' in payload) {
    return payload.attestation_data;
  }
  return payload ?? {};
}

/**
 * Runs one claimed evaluation and records its outcome; returns how it ended. Errors other than a refusal of the
 * decision (a database outage) propagate: the claim then lapses and the evaluation runs again.
 */
export async function runEvaluation(
  app: AppScope,
  clock: () => Date,
  engine: PolicyEngine,
  row: EvaluationRow,
): Promise<RunOutcome> {
  const request = row.request;
  const finish = async (
    outcome: { result: { allow: boolean; violations: string[] } } | { error: Failure },
    extra: { input_digest?: string; decision_attestation_id?: string } = {},
  ): Promise<RunOutcome> => {
    const recorded = await evaluationsRepository.finish(app.db, row, {
      status: 'result' in outcome ? 'completed' : 'failed',
      result: 'result' in outcome ? outcome.result : null,
      error: 'error' in outcome ? outcome.error : null,
      input_digest: extra.input_digest ?? null,
      decision_attestation_id: extra.decision_attestation_id ?? null,
      finished_at: clock(),
    });
    if (!recorded) {
      return 'claim_lost';
    }
    if ('error' in outcome) {
      return `failed:${outcome.error.kind}`;
    }
    return outcome.result.allow ? 'allowed' : 'denied';
  };
  const org = await orgsRepository.findById(app.db, row.org_id);
  if (!org) {
    return finish({ error: { kind: 'evaluate', message: 'the organization no longer exists' } });
  }
  const scope = scopeFor(app, { id: org.id, name: org.name }, clock(), row.requested_by);
  if (row.attempts > MAX_ATTEMPTS) {
    return finish({
      error: { kind: 'evaluate', message: `the evaluation did not finish in ${MAX_ATTEMPTS} attempts` },
    });
  }
  const entry = policyEntry(request.files);
  if (entry === null) {
    return finish({
      error: {
        kind: 'no_policy',
        message: `the bundle holds ${Object.keys(request.files).length} files and none is ${POLICY_ENTRY}, the entry of a bundle of several files`,
      },
    });
  }
  const read = await readInput(scope, request);
  if ('error' in read) {
    return finish(read);
  }
  const inputDigest = `sha256:${sha256(read.text)}`;
  const outcome = await engine.evaluate(org.id, {
    entry,
    source: request.files[entry]!,
    input: read.input,
    params: request.params,
  });
  if (outcome.outcome === 'failed') {
    return finish({ error: { kind: outcome.kind, message: outcome.message } }, { input_digest: inputDigest });
  }
  const result = { allow: outcome.allow, violations: outcome.violations };
  if (!request.decision) {
    return finish({ result }, { input_digest: inputDigest });
  }
  let decisionId: string;
  try {
    decisionId = await writeDecision(scope, row, request.decision, result, inputDigest);
  } catch (err) {
    if (!(err instanceof ApiError)) {
      throw err;
    }
    // The destination changed since the request was checked (archived, deleted): say so.
    return finish(
      { error: { kind: 'decision', message: `the decision could not be written: ${err.message}` } },
      { input_digest: inputDigest },
    );
  }
  return finish({ result }, { input_digest: inputDigest, decision_attestation_id: decisionId });
}

/** The input, read at one instant, and its canonical text; or why it cannot be given. */
async function readInput(
  scope: OrgScope,
  request: EvaluationRequest,
): Promise<{ input: Record<string, unknown>; text: string } | { error: Failure }> {
  return scope.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const at = { ...scope, db: trx };
      const { found, missing } = await resolveTrails(at, request.trails);
      if (missing.length > 0) {
        return {
          error: { kind: 'input_shape', message: `these trails no longer exist: ${missing.join(', ')}` },
        };
      }
      const input = await buildInput(at, found);
      const text = canonicalJson(input);
      if (text.length > INPUT_LIMITS.maxBytes) {
        return {
          error: {
            kind: 'input_shape',
            message: `the input is ${text.length} characters, over the limit of ${INPUT_LIMITS.maxBytes}`,
          },
        };
      }
      return { input, text };
    });
}

/** Writes the decision attestation; returns its id. */
async function writeDecision(
  scope: OrgScope,
  row: EvaluationRow,
  target: NonNullable<EvaluationRequest['decision']>,
  result: { allow: boolean; violations: string[] },
  inputDigest: string,
): Promise<string> {
  // Where it goes may have changed since the request was checked (an archived flow, say).
  await checkDecisionTarget(scope, target);
  const verdict = result.allow ? 'allowed' : 'denied';
  return recordAttestation(
    scope,
    { flowName: target.flow, trailName: target.trail },
    {
      kind: 'system',
      data: {
        attestation_name: target.name,
        artifact_fingerprint: target.fingerprint ?? null,
        type_name: 'decision',
        control: target.control,
        description: `Server-side evaluation ${row.id}: ${verdict}`,
        attestation_data: {
          is_compliant: result.allow,
          evaluation_id: row.id,
          policy_digest: `sha256:${row.policy_digest}`,
          params: row.request.params,
          input_digest: inputDigest,
          violations: result.violations,
        },
      },
    },
    null,
  );
}
