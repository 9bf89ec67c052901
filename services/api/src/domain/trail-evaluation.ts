/**
 * A trail's evaluation from what it holds (semantics.md section 4): the attestations it depends on
 * (its facts), the evaluation itself and the writes it implies. Pure: the stored rows in, the
 * stored values out; usecases/evidence/evaluation.ts reads and stores them.
 */
import {
  artifactState,
  evaluateTrail,
  type AttestationFact,
  type ComplianceState,
  type TrailEvaluation,
} from './compliance.js';
import { templateOrEmpty } from './flow-template.js';

/** A flow or trail as evaluation reads it: its id and its stored template. */
export interface TemplateHolder {
  id: string;
  template: unknown;
}

/** A trail as evaluation reads it. */
export interface EvaluatedTrail extends TemplateHolder {
  compliance_state: ComplianceState;
  compliance: unknown;
}

/** What a trail's evaluation reads: its artifacts, and its attestations in the order they came. */
export interface EvaluationInputs {
  artifacts: Array<{
    id: string;
    fingerprint: string;
    template_reference_name: string | null;
    git_commit: string | null;
    seq: number | string;
    state: ComplianceState;
    compliance: unknown;
  }>;
  attestations: Array<{
    id: string;
    seq: number;
    name: string;
    type: string;
    kind: string;
    is_compliant: boolean;
    artifact_fingerprint: string | null;
    target_artifacts: string[] | null;
    git_commit: string | null;
    original_type: string | null;
  }>;
}

/** A trail's facts: the attestations its evaluation depends on, and the latest one they include. */
export interface TrailFacts {
  lastId: string | null;
  attestations: Array<Omit<InputAttestation, 'seq'>>;
}

export interface EvaluationOutcome {
  evaluation: TrailEvaluation;
  /** Fingerprints whose stored compliance (state, slots) or whose trail's compliance changed. */
  changedFingerprints: string[];
}

/** The trail's template: its own, else its flow's, else none (the empty template). */
export function trailTemplate(
  trail: Pick<TemplateHolder, 'template'>,
  flow: Pick<TemplateHolder, 'template'>,
) {
  return templateOrEmpty(trail.template ?? flow.template);
}

/** The stored form of an evaluation (without the per-artifact index). */
export function storedCompliance(e: TrailEvaluation): Omit<TrailEvaluation, 'byArtifactId'> {
  const { byArtifactId: _unused, ...rest } = e;
  return rest;
}

/**
 * The JSON text of a trail's stored evaluation, with the text already made of an artifact's
 * status (`texts`) where it has one: the trail's document holds each artifact's whole status
 * again. Keys come in another order than JSON.stringify's, which jsonb does not keep anyway.
 */
function complianceText(
  stored: ReturnType<typeof storedCompliance>,
  texts: ReadonlyMap<unknown, string>,
): string {
  const { artifacts_statuses: statuses, ...rest } = stored;
  const inner = Object.entries(statuses)
    .map(([name, status]) => `${JSON.stringify(name)}:${texts.get(status) ?? JSON.stringify(status)}`)
    .join(',');
  const others = JSON.stringify(rest).slice(1, -1);
  return `{"artifacts_statuses":{${inner}}${others ? `,${others}` : ''}}`;
}

/**
 * Whether two stored evaluations say the same, `evaluated_at` aside. Objects compare by their
 * keys, not their order: jsonb hands objects back in its own key order, not the order they
 * were written. A property that is undefined counts as absent, as it would once stored.
 */
export function sameEvaluation(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    return false;
  }
  if (Array.isArray(a) !== Array.isArray(b)) {
    return false;
  }
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => sameEvaluation(x, bs[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  // Counted, not listed: planning compares a trail's whole document on most attestations.
  let count = 0;
  for (const k in ao) {
    if (k === 'evaluated_at' || ao[k] === undefined || !Object.hasOwn(ao, k)) {
      continue;
    }
    if (!Object.hasOwn(bo, k) || !sameEvaluation(ao[k], bo[k])) {
      return false;
    }
    count += 1;
  }
  for (const k in bo) {
    if (k !== 'evaluated_at' && bo[k] !== undefined && Object.hasOwn(bo, k)) {
      count -= 1;
    }
  }
  return count === 0;
}

type InputAttestation = EvaluationInputs['attestations'][number];

/**
 * The attestations a trail's evaluation depends on, now and after any later one (rules 4.1, 4.3,
 * 4.4, 4.5): attestations that bind alike (same name, fingerprint, targets and commit) form a group,
 * and of a group only its first (the order of unexpected names), its latest (the
 * effective one) and its latest that is not an override (what a later override overrides)
 * matter. Groups that are or may become unbound (targets by name and commit, or a fingerprint
 * the trail has no artifact for) are kept whole: every unbound attestation is listed. So evaluating
 * these, plus any later attestations, gives what evaluating every one would. Keeps `seq` order.
 */
export function essentialAttestations<T extends Omit<InputAttestation, 'seq'> & { seq: number }>(
  attestations: readonly T[],
  artifactFingerprints: ReadonlySet<string>,
): T[] {
  const sorted = [...attestations].sort((a, b) => a.seq - b.seq);
  const keep = new Set<T>();
  const groups = new Map<string, { first: T; last: T; lastNonOverride?: T }>();
  for (const r of sorted) {
    const wholeGroup = r.artifact_fingerprint
      ? !artifactFingerprints.has(r.artifact_fingerprint)
      : (r.target_artifacts ?? []).length > 0;
    if (wholeGroup) {
      keep.add(r);
      continue;
    }
    const key = JSON.stringify([r.name, r.artifact_fingerprint, r.target_artifacts ?? [], r.git_commit]);
    const g = groups.get(key);
    const notOverride = r.kind !== 'override';
    if (!g) {
      groups.set(key, { first: r, last: r, ...(notOverride ? { lastNonOverride: r } : {}) });
    } else {
      g.last = r;
      if (notOverride) {
        g.lastNonOverride = r;
      }
    }
  }
  for (const g of groups.values()) {
    keep.add(g.first);
    keep.add(g.last);
    if (g.lastNonOverride) {
      keep.add(g.lastNonOverride);
    }
  }
  return sorted.filter((r) => keep.has(r));
}

/** The writes an evaluation makes: the trail's stored compliance, and each artifact whose compliance changed. */
export interface EvaluationWrites extends EvaluationOutcome {
  trail: {
    compliance: string;
    compliance_state: TrailEvaluation['status'];
    evaluated_at: Date;
    last_modified_at: Date;
  };
  /**
   * Each artifact whose stored compliance changed, with the key of `trail.compliance`'s
   * `artifacts_statuses` that holds the same document, when one does (`statusKey`).
   */
  artifacts: Array<{ id: string; state: ComplianceState; compliance: string; statusKey?: string }>;
  /** The trail's facts after this evaluation (its attestations and the added one). */
  facts: TrailFacts;
  /**
   * The stored compliance documents as values (the trail's, and each written artifact's by id),
   * for planning a next attestation on this one without parsing the JSON text again.
   */
  values: { trail: unknown; artifacts: ReadonlyMap<string, unknown> };
}

/**
 * Evaluates a trail from what it holds (the inputs, plus `added`: an attestation about to be
 * stored, reported after every other) without touching the database; `reevaluateTrail` and the
 * attestation writer store the result.
 */
export function evaluateInputs(input: {
  flow: TemplateHolder;
  trail: EvaluatedTrail;
  inputs: EvaluationInputs;
  added?: Omit<InputAttestation, 'seq'>;
  now: Date;
}): EvaluationWrites {
  const { flow, trail, now } = input;
  const { artifacts } = input.inputs;
  const facts: InputAttestation[] = input.added
    ? // Stored later under the trail's lock, the added attestation takes a seq above all of these.
      [...input.inputs.attestations, { ...input.added, seq: Number.MAX_SAFE_INTEGER }]
    : input.inputs.attestations;
  const attestations: AttestationFact[] = facts.map((f) => ({
    id: f.id,
    name: f.name,
    type: f.kind === 'override' ? (f.original_type ?? f.type) : f.type,
    isCompliant: f.is_compliant,
    isOverride: f.kind === 'override',
    artifactFingerprint: f.artifact_fingerprint,
    targetArtifacts: f.target_artifacts,
    gitCommit: f.git_commit,
    seq: Number(f.seq),
  }));
  const evaluation = evaluateTrail({
    template: trailTemplate(trail, flow),
    templateId: trail.template ? trail.id : flow.template ? flow.id : null,
    artifacts: artifacts.map((a) => ({
      id: a.id,
      fingerprint: a.fingerprint,
      templateReferenceName: a.template_reference_name,
      gitCommit: a.git_commit,
      seq: Number(a.seq),
    })),
    attestations,
    evaluatedAt: now.getTime() / 1000,
  });

  // What the runtime reads of an artifact (provenance.ts) is its state, its effective
  // attestations and its trail's state: a change of any of them, not only of the artifact's own
  // state, can change a verdict in an environment where it runs.
  const stored = storedCompliance(evaluation);
  // Compared only when an artifact's own compliance did not change: the deep comparison of the
  // trail's document is the larger part of planning an attestation that changes it.
  let trailChanged: boolean | undefined;
  const trailDiffers = () =>
    (trailChanged ??=
      evaluation.status !== trail.compliance_state || !sameEvaluation(stored, trail.compliance));
  const { changedFingerprints, artifactWrites, artifactValues, texts } = artifactChanges(
    evaluation,
    artifacts,
    trailDiffers,
  );
  const keyOf = new Map<unknown, string>(
    Object.entries(stored.artifacts_statuses).map(([name, status]) => [status, name]),
  );
  for (const w of artifactWrites) {
    const key = keyOf.get(artifactValues.get(w.id));
    if (key !== undefined) {
      w.statusKey = key;
    }
  }
  const last = facts[facts.length - 1];
  return {
    evaluation,
    facts: {
      lastId: last?.id ?? null,
      attestations: essentialAttestations(facts, new Set(artifacts.map((a) => a.fingerprint))).map(
        ({ seq: _seq, ...rest }) => rest,
      ),
    },
    changedFingerprints: [...new Set(changedFingerprints)],
    trail: {
      compliance: complianceText(stored, texts),
      compliance_state: evaluation.status,
      evaluated_at: now,
      last_modified_at: now,
    },
    artifacts: artifactWrites,
    values: { trail: stored, artifacts: artifactValues },
  };
}

/**
 * The artifacts whose stored compliance an evaluation changes (their writes, values and JSON
 * texts by status object), and the fingerprints to mark: those, and all of them when the
 * trail's own document changed (`trailDiffers`, asked only when needed).
 */
function artifactChanges(
  evaluation: TrailEvaluation,
  artifacts: EvaluationInputs['artifacts'],
  trailDiffers: () => boolean,
) {
  const changedFingerprints: string[] = [];
  const artifactWrites: EvaluationWrites['artifacts'] = [];
  const artifactValues = new Map<string, unknown>();
  const texts = new Map<unknown, string>();
  for (const a of artifacts) {
    const next = evaluation.byArtifactId[a.id];
    if (!next) {
      continue;
    }
    const state = artifactState(next.status);
    const changed = state !== a.state || !sameEvaluation(next, a.compliance);
    if (changed || trailDiffers()) {
      changedFingerprints.push(a.fingerprint);
    }
    if (changed) {
      const text = JSON.stringify(next);
      texts.set(next, text);
      artifactWrites.push({ id: a.id, state, compliance: text });
      artifactValues.set(a.id, next);
    }
  }
  return { changedFingerprints, artifactWrites, artifactValues, texts };
}
