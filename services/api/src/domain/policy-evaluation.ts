/**
 * Artifact and environment compliance (semantics.md section 6). Each rule of a policy is
 * satisfied if any (flow, trail) context of the fingerprint satisfies it, waived where an
 * exception holds; an artifact passes a policy iff no applicable rule fails. It is compliant in
 * an environment iff it is allow-listed there or passes every attached policy (latest version);
 * unknown (null) when no policy is attached. The environment is compliant iff every running
 * artifact is; unknown without policies.
 */
import { evaluateExpression } from './policy-expression-evaluate.js';
import { parseExpression, type Expr, type ExpressionContext } from './policy-expression.js';
import type {
  AttestationRule,
  BooleanRule,
  Condition,
  ParsedPolicy,
  SignatureRule,
  Signer,
} from './policy.js';
import { tryCompileUserPattern, type UserPattern } from './user-pattern.js';

/**
 * What evaluation reads of a provenance record. The port's `ProvenanceRecord`
 * (usecases/scope/provenance.ts) has this shape, so real records are passed as they are.
 */
export interface ProvenanceLike {
  fingerprint: string;
  flowName: string;
  flowTags: Record<string, string>;
  trailName: string;
  artifactCompliance: 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';
  trailCompliance: 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';
  attestations: ReadonlyArray<{
    name: string;
    type: string;
    isCompliant: boolean | null;
    control?: string | null;
  }>;
  /** The verified signatures on attestations naming the fingerprint (read when a policy may need them). */
  signatures?: ReadonlyArray<VerifiedSignature>;
}

/** A verified signature on an attestation of the artifact: who signed it. */
export interface VerifiedSignature {
  kind: string;
  identity: string | null;
  issuer: string | null;
}

/** A policy version as evaluation needs it. */
export interface PolicyVersion {
  id: string;
  name: string;
  version: number;
  policy: ParsedPolicy;
}

export type ResolutionType =
  | 'rule_satisfied'
  | 'rule_not_applicable'
  | 'missing_attestation'
  | 'non_compliant_attestation'
  | 'non_compliant_in_trail'
  | 'no_provenance'
  | 'missing_signature';

export interface RuleResolution {
  type: ResolutionType;
  context: {
    flow_name: string | null;
    trail_name: string | null;
    artifact_status: string | null;
    for_control?: string;
    /** For a missing signature: the verified signatures the artifact does carry, none by an allowed signer. */
    signatures_found?: string[];
  };
}

export interface RuleEvaluation {
  rule: {
    type: 'provenance' | 'trail-compliance' | 'attestation' | 'signature';
    definition: Record<string, unknown>;
  };
  satisfied: boolean | null;
  ignored: boolean;
  resolutions: RuleResolution[];
}

/** One policy's decision on an artifact (a type, not an interface: it is stored as a JSON object). */
export type PolicyDecision = {
  policy_name: string;
  policy_version: number;
  status: 'COMPLIANT' | 'NON-COMPLIANT';
  rule_evaluations: RuleEvaluation[];
};

/** The verdict on one running fingerprint in one environment. */
export interface ArtifactVerdict {
  compliant: boolean | null;
  allowlisted: boolean;
  decisions: PolicyDecision[];
  /** One line per failed rule, e.g. `policy 'prod' v2: attestation 'snyk' (snyk): missing_attestation in flow 'api'`. */
  reasons: string[];
}

const parsed = new Map<string, Expr>();
function compiled(condition: Condition): Expr {
  let expr = parsed.get(condition.text);
  if (!expr) {
    // Stored policies were validated when saved, so this parse succeeds; a pattern saved before
    // patterns ran with RE2 and that RE2 cannot run never matches instead of failing the report.
    expr = parseExpression(condition.text, { lenientPatterns: true });
    if (parsed.size > 5000) {
      parsed.clear();
    }
    parsed.set(condition.text, expr);
  }
  return expr;
}

function contextOf(
  artifact: { name: string; fingerprint: string },
  record: ProvenanceLike | null,
): ExpressionContext {
  return {
    artifact,
    flow: record ? { name: record.flowName, tags: record.flowTags } : null,
  };
}

function holds(condition: Condition, ctx: ExpressionContext): boolean {
  return evaluateExpression(compiled(condition), ctx);
}

function booleanDefinition(rule: BooleanRule): Record<string, unknown> {
  return { required: rule.required, exceptions: rule.exceptions.map((e) => ({ if: { text: e.text } })) };
}

function attestationDefinition(rule: AttestationRule): Record<string, unknown> {
  return {
    if: rule.if ? { text: rule.if.text } : null,
    name: rule.name,
    type: rule.type,
    must_be_compliant: rule.mustBeCompliant,
    ...(rule.forControl ? { for_control: rule.forControl } : {}),
  };
}

function resolution(
  type: ResolutionType,
  record: ProvenanceLike | null,
  status: string | null,
  forControl?: string | null,
): RuleResolution {
  return {
    type,
    context: {
      flow_name: record?.flowName ?? null,
      trail_name: record?.trailName ?? null,
      artifact_status: status,
      ...(forControl ? { for_control: forControl } : {}),
    },
  };
}

/** Verdict from per-context resolutions: satisfied if any applicable context is; ignored if none applies. */
function verdict(resolutions: RuleResolution[]): { satisfied: boolean | null; ignored: boolean } {
  const applicable = resolutions.filter((r) => r.type !== 'rule_not_applicable');
  if (applicable.length === 0) {
    return { satisfied: null, ignored: true };
  }
  return { satisfied: applicable.some((r) => r.type === 'rule_satisfied'), ignored: false };
}

function evaluateBooleanRule(
  kind: 'provenance' | 'trail-compliance',
  rule: BooleanRule,
  artifact: { name: string; fingerprint: string },
  records: readonly ProvenanceLike[],
): RuleEvaluation {
  const definition = booleanDefinition(rule);
  const status = (r: ProvenanceLike | null) =>
    kind === 'trail-compliance' && r ? r.artifactCompliance : null;
  const contexts: Array<ProvenanceLike | null> = records.length > 0 ? [...records] : [null];
  // Per artifact: its flow records (one per flow) times the attestations of each record's trail.
  const resolutions = contexts.map((record): RuleResolution => {
    if (!rule.required) {
      return resolution('rule_not_applicable', record, status(record));
    }
    const ctx = contextOf(artifact, record);
    if (rule.exceptions.some((e) => holds(e, ctx))) {
      return resolution('rule_not_applicable', record, status(record));
    }
    if (!record) {
      return resolution('no_provenance', null, null);
    }
    if (kind === 'provenance') {
      return resolution('rule_satisfied', record, null);
    }
    return record.trailCompliance === 'COMPLIANT'
      ? resolution('rule_satisfied', record, record.artifactCompliance)
      : resolution('non_compliant_in_trail', record, record.artifactCompliance);
  });
  return { rule: { type: kind, definition }, ...verdict(resolutions), resolutions };
}

function matchesAttestation(rule: AttestationRule, a: ProvenanceLike['attestations'][number]): boolean {
  if (rule.name !== '*' && a.name !== rule.name) {
    return false;
  }
  if (rule.type !== '*' && a.type !== rule.type) {
    return false;
  }
  if (rule.forControl && (a.control ?? null) !== rule.forControl) {
    return false;
  }
  return true;
}

function evaluateAttestationRule(
  rule: AttestationRule,
  artifact: { name: string; fingerprint: string },
  records: readonly ProvenanceLike[],
): RuleEvaluation {
  const contexts: Array<ProvenanceLike | null> = records.length > 0 ? [...records] : [null];
  const resolutions = contexts.map((record): RuleResolution => {
    if (rule.if && !holds(rule.if, contextOf(artifact, record))) {
      return resolution('rule_not_applicable', record, null, rule.forControl);
    }
    const candidates = record ? record.attestations.filter((a) => matchesAttestation(rule, a)) : [];
    if (candidates.length === 0) {
      return resolution('missing_attestation', record, null, rule.forControl);
    }
    if (rule.mustBeCompliant && !candidates.some((a) => a.isCompliant === true)) {
      return resolution('non_compliant_attestation', record, null, rule.forControl);
    }
    return resolution('rule_satisfied', record, null, rule.forControl);
  });
  return {
    rule: { type: 'attestation', definition: attestationDefinition(rule) },
    ...verdict(resolutions),
    resolutions,
  };
}

const patterns = new Map<string, UserPattern | null>();
function pattern(source: string): UserPattern | null {
  if (!patterns.has(source)) {
    if (patterns.size > 5000) {
      patterns.clear();
    }
    // Validated when the policy was saved; one RE2 cannot run never matches.
    patterns.set(source, tryCompileUserPattern(source));
  }
  return patterns.get(source) ?? null;
}

function signedBy(signer: Signer, s: VerifiedSignature): boolean {
  if ('key' in signer) {
    return s.issuer === null && s.identity === signer.key;
  }
  return (
    s.issuer === signer.issuer && s.identity !== null && (pattern(signer.identity)?.test(s.identity) ?? false)
  );
}

function describeSignature(s: VerifiedSignature): string {
  return s.issuer === null ? `key '${s.identity ?? ''}'` : `'${s.identity ?? ''}' (${s.issuer})`;
}

/**
 * The signature rule: some attestation of the artifact carries signed evidence that verified,
 * by one of the listed signers. Signatures belong to the fingerprint, so every context sees the
 * same ones; exceptions are judged per context, as for the boolean rules.
 */
function evaluateSignatureRule(
  rule: SignatureRule,
  artifact: { name: string; fingerprint: string },
  records: readonly ProvenanceLike[],
): RuleEvaluation {
  const definition = {
    signers: rule.signers,
    exceptions: rule.exceptions.map((e) => ({ if: { text: e.text } })),
  };
  const signatures = records.flatMap((r) => r.signatures ?? []);
  const satisfied = signatures.some((s) => rule.signers.some((signer) => signedBy(signer, s)));
  const found = [...new Set(signatures.map(describeSignature))].slice(0, 10);
  const contexts: Array<ProvenanceLike | null> = records.length > 0 ? [...records] : [null];
  const resolutions = contexts.map((record): RuleResolution => {
    if (rule.exceptions.some((e) => holds(e, contextOf(artifact, record)))) {
      return resolution('rule_not_applicable', record, null);
    }
    if (satisfied) {
      return resolution('rule_satisfied', record, null);
    }
    const missing = resolution('missing_signature', record, null);
    return { ...missing, context: { ...missing.context, signatures_found: found } };
  });
  return { rule: { type: 'signature', definition }, ...verdict(resolutions), resolutions };
}

/** Evaluates one fingerprint against one policy version, rule by rule (section 6). */
export function evaluatePolicy(
  artifact: { name: string; fingerprint: string },
  records: readonly ProvenanceLike[],
  policy: PolicyVersion,
): PolicyDecision {
  const p = policy.policy;
  const rules = [
    evaluateBooleanRule('provenance', p.provenance, artifact, records),
    evaluateBooleanRule('trail-compliance', p.trailCompliance, artifact, records),
    ...p.attestations.map((rule) => evaluateAttestationRule(rule, artifact, records)),
    ...(p.signature ? [evaluateSignatureRule(p.signature, artifact, records)] : []),
  ];
  return {
    policy_name: policy.name,
    policy_version: policy.version,
    status: rules.some((r) => r.satisfied === false) ? 'NON-COMPLIANT' : 'COMPLIANT',
    rule_evaluations: rules,
  };
}

function reasonsOf(decision: PolicyDecision): string[] {
  const out: string[] = [];
  for (const r of decision.rule_evaluations) {
    if (r.satisfied !== false) {
      continue;
    }
    const def = r.rule.definition as { name?: string; type?: string };
    const what = r.rule.type === 'attestation' ? `attestation '${def.name}' (${def.type})` : r.rule.type;
    const failing = r.resolutions.filter(
      (x) => x.type !== 'rule_not_applicable' && x.type !== 'rule_satisfied',
    );
    const why = failing.map((x) =>
      x.context.flow_name ? `${x.type} in flow '${x.context.flow_name}'` : x.type,
    );
    const found = failing[0]?.context.signatures_found;
    const detail =
      r.rule.type !== 'signature'
        ? ''
        : found && found.length > 0
          ? ` (no verified signature by an allowed signer; verified signatures: ${found.join(', ')})`
          : ' (no verified signature by an allowed signer; none verified)';
    out.push(
      `policy '${decision.policy_name}' v${decision.policy_version}: ${what}: ${why.join(', ')}${detail}`,
    );
  }
  return out;
}

/**
 * An artifact's verdict in an environment (section 6): allow-listed wins; else compliant iff it
 * passes every policy; null without policies. Used by snapshots and by asserts in environment
 * and policy scope.
 */
export function evaluateArtifactAgainstPolicies(
  artifact: { name: string; fingerprint: string },
  records: readonly ProvenanceLike[],
  policies: readonly PolicyVersion[],
  allowlisted: boolean,
): ArtifactVerdict {
  const decisions = policies.map((p) => evaluatePolicy(artifact, records, p));
  if (policies.length === 0) {
    return { compliant: null, allowlisted, decisions, reasons: [] };
  }
  if (allowlisted) {
    return { compliant: true, allowlisted, decisions, reasons: [] };
  }
  const reasons = decisions.flatMap(reasonsOf);
  return { compliant: decisions.every((d) => d.status === 'COMPLIANT'), allowlisted, decisions, reasons };
}

/** Environment compliance (section 6): null without policies, else every running artifact compliant. */
export function environmentCompliance(
  policiesAttached: number,
  artifactCompliance: ReadonlyArray<boolean | null>,
): boolean | null {
  if (policiesAttached === 0) {
    return null;
  }
  return artifactCompliance.every((c) => c === true);
}
