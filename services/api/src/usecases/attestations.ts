/**
 * Recording attestations of every kind, and overrides (semantics.md section 4): decide the
 * attestation's own compliance by its type, bind it to the trail or an artifact, store it and
 * its evidence file, re-evaluate the trail and publish what happened, all in one transaction.
 */
import type { z } from 'zod';
import type {
  ATTESTATION_INPUTS,
  AttestationKind,
  OverrideInput,
} from '../../../shared/contract/attestations.js';
import {
  customCompliant,
  junitCompliant,
  pullRequestCompliant,
  qualityGateCompliant,
  scanCompliant,
  ticketsCompliant,
} from '../domain/attestation-compliance.js';
import { ApiError, BadRequestError, NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { Db } from '../storage/database.js';
import { artifactsRepository, type EvaluationInputs } from '../storage/repositories/artifacts.js';
import type { FlowRow } from '../storage/repositories/flows.js';
import { attestationsRepository } from '../storage/repositories/attestations.js';
import { attestationTypesRepository } from '../storage/repositories/attestation-types.js';
import { componentsRepository } from '../storage/repositories/components.js';
import { controlsRepository } from '../storage/repositories/controls.js';
import { toJson } from '../storage/repositories/json.js';
import { trailsRepository, type TrailRow } from '../storage/repositories/trails.js';
import type { CustomEvaluator } from './custom-evaluator.js';
import { evaluateInputs, storeArtifactStates, type EvaluationWrites } from './evaluation.js';
import type { DomainEvent } from './domain-events.js';
import { inTransaction, type EvidenceContext } from './evidence-context.js';
import { contentTypeFor, type EvidenceStore } from './evidence-store.js';
import { ensureFlow } from './flows.js';
import { captureRepo } from './repos.js';
import { reportBatcher } from './report-batcher.js';
import { readSbom, sbomSourceOf } from './sbom-evidence.js';
import { ensureTrail } from './trails.js';

type KindInput = {
  [K in AttestationKind]: { kind: K; data: z.infer<(typeof ATTESTATION_INPUTS)[K]> };
}[AttestationKind];
type Input = KindInput | { kind: 'override'; data: OverrideInput };
type Common = Input['data'];

/** An uploaded evidence file. */
export interface EvidenceUpload {
  filename: string;
  data: Buffer;
  sha256: string;
  mimetype: string | undefined;
}

export interface AttestationServices {
  evaluator: CustomEvaluator;
  store: EvidenceStore;
}

interface Decided {
  type: string;
  isCompliant: boolean;
  payload: Record<string, unknown>;
}

/** Decides an attestation's own compliance (and its stored payload) by its type. */
async function decide(ctx: EvidenceContext, input: Input, services: AttestationServices): Promise<Decided> {
  switch (input.kind) {
    case 'generic':
      return { type: 'generic', isCompliant: input.data.is_compliant, payload: {} };
    case 'junit':
      return {
        type: 'junit',
        isCompliant: junitCompliant(input.data.junit_results),
        payload: { junit_results: input.data.junit_results },
      };
    case 'snyk':
      return {
        type: 'snyk',
        isCompliant: scanCompliant(input.data.snyk_results.results),
        payload: { snyk_results: input.data.snyk_results },
      };
    case 'jira':
      return {
        type: 'jira',
        isCompliant: ticketsCompliant(input.data.jira_results),
        payload: { jira_results: input.data.jira_results },
      };
    case 'pull_request':
      return {
        type: 'pull_request',
        isCompliant: pullRequestCompliant(input.data.pull_requests),
        payload: { git_provider: input.data.git_provider, pull_requests: input.data.pull_requests },
      };
    case 'sonar':
      return {
        type: 'sonar',
        isCompliant: qualityGateCompliant(input.data.sonar_results),
        payload: { sonar_results: input.data.sonar_results },
      };
    case 'custom':
      return decideCustom(ctx, input.data, services);
    case 'system': {
      const control = await controlsRepository.find(ctx.db, ctx.orgId, input.data.control);
      if (!control) {
        throw new NotFoundError(
          `Control with identifier '${input.data.control}' does not exist in organization '${ctx.orgName}'`,
        );
      }
      const [latest] = await controlsRepository.latestVersions(ctx.db, ctx.orgId, [control.id]);
      return {
        type: 'decision',
        isCompliant: input.data.attestation_data.is_compliant,
        payload: {
          type_name: 'decision',
          control: control.identifier,
          control_version: latest?.version ?? null,
          attestation_data: input.data.attestation_data,
        },
      };
    }
    case 'override':
      return {
        type: 'override',
        isCompliant: input.data.new_compliance_status,
        payload: {
          reason: input.data.reason,
          new_compliance_status: input.data.new_compliance_status,
          original_attestation_type: input.data.original_attestation_type,
        },
      };
  }
}

async function decideCustom(
  ctx: EvidenceContext,
  data: z.infer<(typeof ATTESTATION_INPUTS)['custom']>,
  services: AttestationServices,
): Promise<Decided> {
  const typeName = data.type_name.replace(/^custom:/, '');
  const type = await attestationTypesRepository.findByName(ctx.db, ctx.orgId, typeName);
  if (!type) {
    throw new ValidationError({
      'data_json.type_name': `no custom attestation type named '${typeName}' in organization '${ctx.orgName}'`,
    });
  }
  if (type.archived) {
    throw new ValidationError({
      'data_json.type_name': `the custom attestation type '${typeName}' is archived`,
    });
  }
  const versions = await attestationTypesRepository.versions(ctx.db, ctx.orgId, [type.id]);
  const version = versions[versions.length - 1]!;
  const definition = {
    schema: version.type_schema,
    rules: version.evaluator?.content_type === 'jq' ? (version.evaluator.rules ?? []) : [],
    summary: version.summary ?? [],
  };
  let schemaErrors: string[];
  let ruleResults: Array<{ rule: string; result: unknown; error: string | null }>;
  let summary: Array<{ name: string; value: unknown; error: string | null }>;
  try {
    ({ schemaErrors, ruleResults, summary } = await services.evaluator.evaluate(
      definition,
      data.attestation_data,
      ctx.orgId,
    ));
  } catch (err) {
    // A full queue is the caller's to retry (429), not a verdict on the data.
    if (err instanceof ApiError) throw err;
    // An evaluation that overruns its bounds is a property of the rules and data: a failed check.
    schemaErrors = [];
    ruleResults = [{ rule: '(evaluation)', result: null, error: (err as Error).message }];
    summary = [];
  }
  return {
    type: `custom:${type.name}`,
    isCompliant: customCompliant(schemaErrors, ruleResults),
    payload: {
      type_name: type.name,
      attestation_data: data.attestation_data,
      evaluation: {
        type_version: version.version,
        schema_errors: schemaErrors,
        rule_results: ruleResults,
        summary,
      },
    },
  };
}

/** How many times a report is tried without a lock before it takes the trail's lock. */
const UNLOCKED_ATTEMPTS = 2;

/**
 * Records one attestation (or override) on a trail; creates the flow and trail when missing;
 * returns the new attestation's id. The common case (flow and trail exist, no evidence file or
 * repo, no artifact changes state, no subscriber has anything to do) takes two statements,
 * shared with the reports that arrive alongside (report-batcher.ts): one read, then one write
 * that succeeds only if nothing else was written to the trail meanwhile.
 * Everything else, and a report that keeps meeting concurrent writes, runs in a transaction
 * holding the trail's lock. Both store the same rows.
 */
export async function recordAttestation(
  ctx: EvidenceContext,
  where: { flowName: string; trailName: string },
  input: Input,
  evidence: EvidenceUpload | null,
  services: AttestationServices,
): Promise<string> {
  const data: Common = input.data;
  const targets = data.target_artifacts && data.target_artifacts.length > 0 ? data.target_artifacts : null;
  if (targets && !data.artifact_fingerprint && !data.git_commit_info) {
    throw new BadRequestError(
      `Attestation '${data.attestation_name}' for artifact '${targets.join(',')}' requires at least one of: artifact_fingerprint or git_commit_info.`,
      { 'data_json.git_commit_info': 'required when target_artifacts is given without artifact_fingerprint' },
    );
  }
  const decided = await decide(ctx, input, services);
  const id = newId();
  // An SBOM (CycloneDX, SPDX) is indexed in the attestation's own transaction, under the trail's
  // lock like every attestation with evidence, so an acknowledged attestation is already exposed.
  const sbomSource = sbomSourceOf(
    input.kind === 'custom' ? input.data.attestation_data : undefined,
    evidence,
  );

  const batcher = !evidence && !data.repo_info && !sbomSource ? reportBatcher(ctx.db) : undefined;
  if (batcher) {
    for (let attempt = 0; attempt < UNLOCKED_ATTEMPTS; attempt++) {
      const outcome = await batcher.submit({
        orgId: ctx.orgId,
        flowName: where.flowName,
        trailName: where.trailName,
        plan: (read) => {
          const report = planReport(ctx, read.flow, read.trail, read.inputs, {
            id,
            input,
            decided,
            targets,
            repoId: null,
          });
          // Publishing would run no subscriber (`idle`), so there is nothing more to do.
          if (report.writes.artifacts.length > 0 || !ctx.events.idle(report.events)) return undefined;
          return report.rows;
        },
      });
      if (outcome === 'stored') return id;
      if (outcome !== 'conflict') break;
    }
  }

  // Read before the lock is taken: parsing a large document holds nobody up.
  const sbom = sbomSource ? await readSbom(sbomSource) : undefined;
  const recorded = sbom ? { ...decided, payload: { ...decided.payload, sbom_index: sbom.index } } : decided;

  return ctx.db.transaction().execute(async (trx: Db) => {
    const tctx = inTransaction(ctx, trx);
    const found = await trailsRepository.lockWithFlow(trx, ctx.orgId, where.flowName, where.trailName);
    const flow = found?.flow ?? (await ensureFlow(tctx, where.flowName));
    const trail = found?.trail ?? (await ensureTrail(tctx, flow, where.trailName));
    // Read after the lock: every earlier write to the trail has committed.
    const inputs = await artifactsRepository.evaluationInputs(trx, ctx.orgId, trail.id);
    // Checked (404) before anything is written.
    reportTarget(ctx, flow, trail, inputs, data, targets);
    if (evidence)
      await services.store.put(trx, ctx.orgId, { sha256: evidence.sha256, content: evidence.data }, ctx.now);
    const repoId = await captureRepo(trx, ctx.orgId, data.repo_info, ctx.now);
    const report = planReport(ctx, flow, trail, inputs, {
      id,
      input,
      decided: recorded,
      targets,
      repoId,
      evidence,
    });
    await attestationsRepository.insertReport(trx, { ...report.rows, ifUnchanged: null });
    if (sbom) {
      const at = { orgId: ctx.orgId, attestationId: id, trailId: trail.id };
      await componentsRepository.insert(
        trx,
        { ...at, fingerprint: data.artifact_fingerprint ?? null },
        sbom.components,
      );
    }
    await storeArtifactStates(trx, ctx.orgId, report.writes);
    await ctx.events.publish(trx, report.events);
    return id;
  });
}

/** The artifact a report names (404 when its fingerprint is not in the trail), else its first target. */
function reportTarget(
  ctx: EvidenceContext,
  flow: FlowRow,
  trail: TrailRow,
  inputs: EvaluationInputs,
  data: Common,
  targets: string[] | null,
): string | null {
  if (!data.artifact_fingerprint) return targets?.[0] ?? null;
  const artifact = inputs.artifacts.find((a) => a.fingerprint === data.artifact_fingerprint);
  if (!artifact) {
    throw new NotFoundError(
      `Artifact with fingerprint ${data.artifact_fingerprint} does not exist in trail "${trail.name}" of flow "${flow.name}" belonging to organization "${ctx.orgName}"`,
    );
  }
  return artifact.template_reference_name;
}

/**
 * The rows a report stores (the attestation, its trail event, the trail's new evaluation), the
 * artifact states it changes and the events it publishes, from the trail as it stands.
 */
function planReport(
  ctx: EvidenceContext,
  flow: FlowRow,
  trail: TrailRow,
  inputs: EvaluationInputs,
  r: {
    id: string;
    input: Input;
    decided: Decided;
    targets: string[] | null;
    repoId: string | null;
    evidence?: EvidenceUpload | null;
  },
): {
  rows: Omit<Parameters<typeof attestationsRepository.insertReport>[1], 'ifUnchanged'>;
  writes: EvaluationWrites;
  events: DomainEvent[];
} {
  const { id, input, decided, targets, evidence } = r;
  const data: Common = input.data;
  const target = reportTarget(ctx, flow, trail, inputs, data, targets);
  const sha1 = data.git_commit_info?.sha1 ?? null;
  const eventType = data.artifact_fingerprint
    ? 'artifact_attestation_reported'
    : targets
      ? 'trail_attestation_for_artifact_reported'
      : 'trail_attestation_reported';
  const payload = JSON.stringify(decided.payload);
  const originalType = (decided.payload as { original_attestation_type?: string }).original_attestation_type;
  const writes = evaluateInputs({
    flow,
    trail,
    inputs,
    added: {
      id,
      name: data.attestation_name,
      type: decided.type,
      kind: input.kind,
      is_compliant: decided.isCompliant,
      artifact_fingerprint: data.artifact_fingerprint ?? null,
      target_artifacts: targets,
      git_commit: sha1,
      // As `payload ->> 'original_attestation_type'` reads it back.
      original_type: originalType ?? null,
    },
    now: ctx.now,
  });
  return {
    rows: {
      row: {
        org_id: ctx.orgId,
        id,
        flow_id: flow.id,
        trail_id: trail.id,
        name: data.attestation_name,
        type: decided.type,
        kind: input.kind,
        is_compliant: decided.isCompliant,
        artifact_fingerprint: data.artifact_fingerprint ?? null,
        target_artifacts: toJson(targets),
        git_commit: sha1,
        payload,
        description: data.description ?? '',
        origin_url: data.origin_url ?? '',
        user_data: toJson(data.user_data ?? {}),
        annotations: toJson(data.annotations),
        external_urls: toJson(data.external_urls),
        git_commit_info: toJson(data.git_commit_info),
        repo_info: toJson(data.repo_info),
        repo_id: r.repoId,
        evidence_sha256: evidence?.sha256 ?? null,
        evidence_filename: evidence?.filename ?? null,
        evidence_size: evidence?.data.length ?? null,
        evidence_content_type: evidence ? contentTypeFor(evidence.filename, evidence.mimetype) : null,
        created_by: ctx.actor,
        created_at: ctx.now,
      },
      event: {
        org_id: ctx.orgId,
        trail_id: trail.id,
        type: eventType,
        fingerprint: data.artifact_fingerprint ?? null,
        occurred_at: ctx.now,
        data: JSON.stringify({
          attestation_id: id,
          attestation_type: decided.type,
          is_compliant: decided.isCompliant,
          template_reference_name: data.attestation_name,
          ...(target ? { target_artifact: target } : {}),
          ...(data.artifact_fingerprint ? { artifact_fingerprint: data.artifact_fingerprint } : {}),
          ...(data.git_commit_info
            ? { git_commit_info: { sha1: data.git_commit_info.sha1, url: data.git_commit_info.url ?? null } }
            : {}),
        }),
      },
      trail: writes.trail,
      facts: writes.facts,
    },
    writes,
    events: [
      {
        type: 'attestation.reported',
        orgId: ctx.orgId,
        flowName: flow.name,
        trailName: trail.name,
        attestationId: id,
        attestationName: data.attestation_name,
        attestationType: decided.type,
        isCompliant: decided.isCompliant,
        fingerprint: data.artifact_fingerprint ?? null,
        at: ctx.now,
      },
      ...(writes.changedFingerprints.length > 0
        ? [
            {
              type: 'artifact.compliance-changed' as const,
              orgId: ctx.orgId,
              fingerprints: writes.changedFingerprints,
              at: ctx.now,
            },
          ]
        : []),
    ],
  };
}
