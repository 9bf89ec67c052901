/**
 * Trail and artifact compliance (semantics.md section 4). Pure: the trail's template, artifacts
 * and attestations in, the statuses out. Rules, by the numbers used in the tests:
 *  4.1 slots: one per trail-level name, and one per (artifact, name); the latest attestation wins.
 *  4.2 an expected slot never reported is MISSING with `is_compliant: null`.
 *  4.3 a reported name the template does not expect is `unexpected: true` and still counts.
 *  4.4 artifact binding: by fingerprint, or by template name + commit (pending until such an
 *      artifact is reported); what binds to nothing stays visible as unbound, with the reason.
 *  4.5 an override is the slot's effective result; it points to what it overrode.
 *  4.6 artifact state: NON-COMPLIANT if any of its slots or a trail-level slot is non-compliant,
 *      else INCOMPLETE if any of those is MISSING, else COMPLIANT.
 *  4.7 trail state: the same over trail-level slots and every expected artifact (an expected
 *      artifact not reported is MISSING).
 *  4.8 no template: nothing can be MISSING; the AND of what was reported.
 */
import type { FlowTemplate } from './flow-template.js';

export type ComplianceState = 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';

/** An artifact reported to the trail. `seq` orders them. */
export interface ArtifactFact {
  id: string;
  fingerprint: string;
  templateReferenceName: string | null;
  gitCommit: string | null;
  seq: number;
}

/** An attestation reported to the trail. `seq` orders them (latest wins). */
export interface AttestationFact {
  id: string;
  name: string;
  /** The type shown: for an override, the type of what it overrides. */
  type: string;
  isCompliant: boolean;
  isOverride: boolean;
  artifactFingerprint: string | null;
  targetArtifacts: string[] | null;
  gitCommit: string | null;
  seq: number;
}

export interface SlotStatus {
  attestation_name: string;
  attestation_type: string | null;
  attestation_id: string | null;
  overridden_attestation_id: string | null;
  status: 'COMPLETE' | 'MISSING';
  is_compliant: boolean | null;
  unexpected: boolean;
}

export interface ArtifactStatusRecord {
  artifact_fingerprint: string | null;
  artifact_id: string | null;
  status: ComplianceState | 'MISSING';
  is_compliant: boolean | null;
  attestations_statuses: SlotStatus[];
  unexpected: boolean;
  evaluated_at: number | null;
  flow_template_id: string | null;
}

export interface UnboundRecord {
  attestation_id: string;
  attestation_name: string;
  attestation_type: string;
  target_artifacts: string[];
  git_commit: string | null;
  reason: string;
}

export interface TrailEvaluation {
  status: ComplianceState;
  is_compliant: boolean;
  attestations_statuses: SlotStatus[];
  artifacts_statuses: Record<string, ArtifactStatusRecord>;
  unbound_attestations: UnboundRecord[];
  evaluated_at: number | null;
  flow_template_id: string | null;
  /** Every reported artifact's own status, by artifact id (also those a rebuild replaced in the map). */
  byArtifactId: Record<string, ArtifactStatusRecord>;
}

/** The key an artifact is shown under in `artifacts_statuses`. */
export function artifactKey(a: Pick<ArtifactFact, 'templateReferenceName' | 'fingerprint'>): string {
  return a.templateReferenceName ?? a.fingerprint;
}

/** Rule 4.4: the artifacts of the trail an attestation applies to, or why it applies to none. */
export function bindAttestation(
  att: AttestationFact,
  artifacts: readonly ArtifactFact[],
):
  | { scope: 'trail' }
  | { scope: 'artifacts'; artifacts: ArtifactFact[] }
  | { scope: 'unbound'; reason: string } {
  if (att.artifactFingerprint) {
    const found = artifacts.filter((a) => a.fingerprint === att.artifactFingerprint);
    return found.length > 0
      ? { scope: 'artifacts', artifacts: found }
      : { scope: 'unbound', reason: `no artifact with fingerprint ${att.artifactFingerprint} in this trail` };
  }
  const targets = att.targetArtifacts ?? [];
  if (targets.length === 0) {
    return { scope: 'trail' };
  }
  if (!att.gitCommit) {
    return { scope: 'unbound', reason: 'artifact attestation without a fingerprint or a git commit' };
  }
  const found = artifacts.filter(
    (a) =>
      a.templateReferenceName !== null &&
      targets.includes(a.templateReferenceName) &&
      a.gitCommit === att.gitCommit,
  );
  if (found.length > 0) {
    return { scope: 'artifacts', artifacts: found };
  }
  return {
    scope: 'unbound',
    reason: `pending: no artifact named ${targets.map((t) => `'${t}'`).join(' or ')} with commit ${att.gitCommit} has been reported to this trail`,
  };
}

/** Rules 4.1 and 4.5: the effective attestation of one slot from its attestations. */
export function effectiveOf(attestations: readonly AttestationFact[]): {
  effective: AttestationFact;
  overriddenId: string | null;
} {
  const sorted = [...attestations].sort((a, b) => a.seq - b.seq);
  const effective = sorted[sorted.length - 1]!;
  let overriddenId: string | null = null;
  if (effective.isOverride) {
    const before = sorted.slice(0, -1).filter((r) => !r.isOverride);
    overriddenId = before.length > 0 ? before[before.length - 1]!.id : null;
  }
  return { effective, overriddenId };
}

/** Rules 4.1-4.3: the statuses of one group of slots against the names the template expects. */
export function slotStatuses(
  expected: readonly { name: string; type: string }[],
  attestations: readonly AttestationFact[],
): SlotStatus[] {
  const byName = new Map<string, AttestationFact[]>();
  for (const r of attestations) {
    const list = byName.get(r.name);
    if (list) {
      list.push(r);
    } else {
      byName.set(r.name, [r]);
    }
  }
  const out: SlotStatus[] = [];
  const expectedNames = new Set(expected.map((e) => e.name));
  for (const e of expected) {
    const list = byName.get(e.name);
    if (!list) {
      out.push({
        attestation_name: e.name,
        attestation_type: e.type,
        attestation_id: null,
        overridden_attestation_id: null,
        status: 'MISSING',
        is_compliant: null,
        unexpected: false,
      });
      continue;
    }
    out.push(complete(list, false));
  }
  const extras = [...byName.entries()]
    .filter(([name]) => !expectedNames.has(name))
    .sort((a, b) => Math.min(...a[1].map((r) => r.seq)) - Math.min(...b[1].map((r) => r.seq)));
  for (const [, list] of extras) {
    out.push(complete(list, true));
  }
  return out;
}

function complete(list: AttestationFact[], unexpected: boolean): SlotStatus {
  const { effective, overriddenId } = effectiveOf(list);
  return {
    attestation_name: effective.name,
    attestation_type: effective.type,
    attestation_id: effective.id,
    overridden_attestation_id: overriddenId,
    status: 'COMPLETE',
    is_compliant: effective.isCompliant,
    unexpected,
  };
}

/** Rules 4.6 and 4.7: NON-COMPLIANT > INCOMPLETE > COMPLIANT over slots (and artifact states). */
export function combineStates(
  slots: readonly SlotStatus[],
  artifactStates: ReadonlyArray<ComplianceState | 'MISSING'> = [],
): ComplianceState {
  if (slots.some((s) => s.is_compliant === false) || artifactStates.includes('NON-COMPLIANT')) {
    return 'NON-COMPLIANT';
  }
  if (
    slots.some((s) => s.status === 'MISSING') ||
    artifactStates.includes('MISSING') ||
    artifactStates.includes('INCOMPLETE')
  ) {
    return 'INCOMPLETE';
  }
  return 'COMPLIANT';
}

/**
 * Rules 4.6 and 4.7: the state an artifact record shows (COMPLIANT, NON-COMPLIANT or INCOMPLETE)
 * from its evaluated status. An expected artifact evaluated as MISSING shows INCOMPLETE, and so
 * does one not evaluated yet.
 */
export function artifactState(status: ComplianceState | 'MISSING' | undefined): ComplianceState {
  return status === undefined || status === 'MISSING' ? 'INCOMPLETE' : status;
}

/** Binds every attestation (rule 4.4): to the trail, to artifacts, or to nothing (unbound). */
function bindAll(attestations: readonly AttestationFact[], artifacts: readonly ArtifactFact[]) {
  const trailReports: AttestationFact[] = [];
  const artifactReports = new Map<string, AttestationFact[]>();
  const unbound: UnboundRecord[] = [];
  for (const att of attestations) {
    const binding = bindAttestation(att, artifacts);
    if (binding.scope === 'trail') {
      trailReports.push(att);
    } else if (binding.scope === 'artifacts') {
      for (const a of binding.artifacts) {
        const list = artifactReports.get(a.id);
        if (list) {
          list.push(att);
        } else {
          artifactReports.set(a.id, [att]);
        }
      }
    } else {
      unbound.push({
        attestation_id: att.id,
        attestation_name: att.name,
        attestation_type: att.type,
        target_artifacts: att.targetArtifacts ?? [],
        git_commit: att.gitCommit,
        reason: binding.reason,
      });
    }
  }
  return { trailReports, artifactReports, unbound };
}

/** Evaluates a trail: every rule of this module, at `evaluatedAt` (epoch seconds). */
export function evaluateTrail(input: {
  template: FlowTemplate;
  templateId: string | null;
  artifacts: readonly ArtifactFact[];
  attestations: readonly AttestationFact[];
  evaluatedAt: number;
}): TrailEvaluation {
  const { template, artifacts, attestations, evaluatedAt } = input;
  const { trailReports, artifactReports, unbound } = bindAll(attestations, artifacts);
  const trailSlots = slotStatuses(template.trail.attestations, trailReports);
  const expectedArtifacts = new Map(template.trail.artifacts.map((a) => [a.name, a]));

  const byArtifactId: Record<string, ArtifactStatusRecord> = {};
  for (const a of artifacts) {
    const expectation = a.templateReferenceName ? expectedArtifacts.get(a.templateReferenceName) : undefined;
    const slots = slotStatuses(expectation?.attestations ?? [], artifactReports.get(a.id) ?? []);
    const state = combineStates([...slots, ...trailSlots]);
    byArtifactId[a.id] = {
      artifact_fingerprint: a.fingerprint,
      artifact_id: a.id,
      status: state,
      is_compliant: state === 'COMPLIANT',
      attestations_statuses: slots,
      unexpected: expectation === undefined,
      evaluated_at: evaluatedAt,
      flow_template_id: input.templateId,
    };
  }

  // The map shows the latest artifact under each name; a rebuild replaces the earlier artifact.
  const latestByKey = new Map<string, ArtifactFact>();
  for (const a of [...artifacts].sort((x, y) => x.seq - y.seq)) {
    latestByKey.set(artifactKey(a), a);
  }
  const artifactsStatuses: Record<string, ArtifactStatusRecord> = {};
  for (const expected of template.trail.artifacts) {
    const reported = latestByKey.get(expected.name);
    artifactsStatuses[expected.name] = reported
      ? byArtifactId[reported.id]!
      : {
          artifact_fingerprint: null,
          artifact_id: null,
          status: 'MISSING',
          is_compliant: null,
          attestations_statuses: slotStatuses(expected.attestations, []),
          unexpected: false,
          evaluated_at: evaluatedAt,
          flow_template_id: input.templateId,
        };
  }
  for (const [key, a] of latestByKey) {
    if (!(key in artifactsStatuses)) {
      artifactsStatuses[key] = byArtifactId[a.id]!;
    }
  }

  const status = combineStates(
    trailSlots,
    Object.values(artifactsStatuses).map((s) => s.status),
  );
  return {
    status,
    is_compliant: status === 'COMPLIANT',
    attestations_statuses: trailSlots,
    artifacts_statuses: artifactsStatuses,
    unbound_attestations: unbound,
    evaluated_at: evaluatedAt,
    flow_template_id: input.templateId,
    byArtifactId,
  };
}
