/**
 * An attestation's own verdict by its type (semantics.md section 4): what it reports decides
 * whether it is compliant, and what of it is stored as its payload.
 */
import type { z } from 'zod';
import type {
  ATTESTATION_INPUTS,
  AttestationKind,
  OverrideInput,
} from '../../../../shared/contract/attestations.js';
import {
  customCompliant,
  junitCompliant,
  pullRequestCompliant,
  qualityGateCompliant,
  scanCompliant,
  ticketsCompliant,
} from '../../domain/attestation-compliance.js';
import { ApiError, NotFoundError, ValidationError } from '../../errors.js';
import { attestationTypesRepository } from '../../storage/repositories/attestation-types.js';
import { controlsRepository } from '../../storage/repositories/controls.js';
import type { CustomEvaluator } from '../../workers/custom-evaluator.js';
import type { OrgScope } from '../scope/org-scope.js';
import { cachedView, type ViewCache } from '../scope/view-cache.js';

type KindInput = {
  [K in AttestationKind]: { kind: K; data: z.infer<(typeof ATTESTATION_INPUTS)[K]> };
}[AttestationKind];

type SystemDecisionInput = Extract<z.infer<(typeof ATTESTATION_INPUTS)['system']>, { type_name: 'decision' }>;

/** What a server-side evaluation's decision cites of it (usecases/evaluations). */
export interface EvaluationCitation {
  evaluation_id: string;
  /** `sha256:<hex>` of the policy bundle's canonical text. */
  policy_digest: string;
  params: Record<string, unknown>;
  /** `sha256:<hex>` of the canonical input the policy saw. */
  input_digest: string;
  violations: string[];
}

/**
 * A decision written by a server-side evaluation: the same system attestation as `kosli attest
 * decision`, whose data also cites the evaluation. Never parsed from a request: a client cannot
 * send a citation.
 */
export type EvaluationDecisionInput = {
  kind: 'system';
  data: Omit<SystemDecisionInput, 'attestation_data'> & {
    attestation_data: { is_compliant: boolean } & EvaluationCitation;
  };
};

export type AttestationInput =
  KindInput | EvaluationDecisionInput | { kind: 'override'; data: OverrideInput };
export type AttestationData = AttestationInput['data'];

export interface Decided {
  type: string;
  isCompliant: boolean;
  payload: Record<string, unknown>;
}

/** Decides an attestation's own compliance (and its stored payload) by its type. */
export async function decide(
  scope: OrgScope,
  input: AttestationInput,
  services: { evaluator: CustomEvaluator; catalog: ViewCache },
): Promise<Decided> {
  switch (input.kind) {
    case 'generic':
      return { type: 'generic', isCompliant: input.data.is_compliant, payload: {} };
    case 'junit':
      return results('junit', junitCompliant(input.data.junit_results), input.data.junit_results);
    case 'snyk':
      return results('snyk', scanCompliant(input.data.snyk_results.results), input.data.snyk_results);
    case 'jira':
      return results('jira', ticketsCompliant(input.data.jira_results), input.data.jira_results);
    case 'pull_request':
      return {
        type: 'pull_request',
        isCompliant: pullRequestCompliant(input.data.pull_requests),
        payload: { git_provider: input.data.git_provider, pull_requests: input.data.pull_requests },
      };
    case 'sonar':
      return results('sonar', qualityGateCompliant(input.data.sonar_results), input.data.sonar_results);
    case 'custom':
      return decideCustom(scope, input.data, services);
    case 'system':
      return decideSystem(scope, input.data);
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

/** A type whose verdict comes from its `{type}_results`, stored as given. */
function results(type: string, isCompliant: boolean, value: unknown): Decided {
  return { type, isCompliant, payload: { [`${type}_results`]: value } };
}

async function decideSystem(
  scope: OrgScope,
  data: z.infer<(typeof ATTESTATION_INPUTS)['system']> | EvaluationDecisionInput['data'],
): Promise<Decided> {
  if (data.type_name === 'sbom') {
    // Evidence, not a verdict: an SBOM attested is compliant; policies judge what it holds.
    return {
      type: 'sbom',
      isCompliant: true,
      payload: { type_name: 'sbom', attestation_data: data.attestation_data },
    };
  }
  const control = await controlsRepository.find(scope.db, scope.org.id, data.control);
  if (!control) {
    throw new NotFoundError(
      `Control with identifier '${data.control}' does not exist in organization '${scope.org.name}'`,
    );
  }
  const [latest] = await controlsRepository.latestVersions(scope.db, scope.org.id, [control.id]);
  return {
    type: 'decision',
    isCompliant: data.attestation_data.is_compliant,
    payload: {
      type_name: 'decision',
      control: control.identifier,
      control_version: latest?.version ?? null,
      attestation_data: data.attestation_data,
    },
  };
}

/**
 * A custom type and its latest version, as last read: any change to the organization's types
 * (here or on another replica) moves its catalog epoch (migration 0371).
 */
async function customType(scope: OrgScope, catalog: ViewCache, typeName: string) {
  return cachedView(catalog, scope.org.id, `custom-type\u0000${typeName}`, async () => {
    const type = await attestationTypesRepository.findByName(scope.db, scope.org.id, typeName);
    if (!type) {
      return undefined;
    }
    const versions = await attestationTypesRepository.versions(scope.db, scope.org.id, [type.id]);
    return { type, version: versions[versions.length - 1]! };
  });
}

async function decideCustom(
  scope: OrgScope,
  data: z.infer<(typeof ATTESTATION_INPUTS)['custom']>,
  services: { evaluator: CustomEvaluator; catalog: ViewCache },
): Promise<Decided> {
  const typeName = data.type_name.replace(/^custom:/, '');
  const found = await customType(scope, services.catalog, typeName);
  if (!found) {
    throw new ValidationError({
      'data_json.type_name': `no custom attestation type named '${typeName}' in organization '${scope.org.name}'`,
    });
  }
  const { type, version } = found;
  if (type.archived) {
    throw new ValidationError({
      'data_json.type_name': `the custom attestation type '${typeName}' is archived`,
    });
  }
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
      scope.org.id,
    ));
  } catch (err) {
    // A full queue is the caller's to retry (429), not a verdict on the data.
    if (err instanceof ApiError) {
      throw err;
    }
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
