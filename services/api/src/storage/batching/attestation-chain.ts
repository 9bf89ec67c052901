/**
 * A chain: the attestations to one trail in one batch of the attestation batcher
 * (attestation-batcher.ts), each planned on the trail as the ones before it leave it, and the one
 * conditioned write that stores them all.
 */
import type {
  ArtifactStateWrite,
  AttestationTrailRead,
  StoredAttestation,
  TrailAttestationBatch,
  TrailFacts,
} from '../trail-store/index.js';
import type { EvaluationWrites } from '../../domain/trail-evaluation.js';

/**
 * An attestation planned on a trail as read: its rows, the trail after it, its facts after it,
 * the artifact states it changes and the fingerprints whose compliance it changes (the write
 * marks the environments where they run).
 */
export interface PlannedAttestation extends StoredAttestation {
  trail: TrailAttestationBatch['trail'];
  facts: TrailFacts;
  artifactStates?: ReadonlyArray<Omit<ArtifactStateWrite, 'version'>>;
  changedFingerprints?: readonly string[];
  /** The compliance documents written, as values (`EvaluationWrites['values']`). */
  values: EvaluationWrites['values'];
}

/**
 * How far a trail's stored facts may fall behind its reports before a batch writes them again.
 * Until then a write leaves them (about 2 KB) as they are, and a read takes the reports after
 * them too (`evaluationInputsColumns`): at most this many small rows, by the trail's index.
 */
export const FACTS_WRITTEN_EVERY = 16;

/** A trail to plan on, and whether it was remembered rather than read now. */
export type Read = { read: AttestationTrailRead; remembered: boolean };

/** Attestations to one trail in one batch; `P` is the batcher's pending attestation. */
export interface Chain<P> {
  /** What they were planned on: read now, or remembered from this batcher's last write. */
  read: AttestationTrailRead;
  remembered: boolean;
  /** The trail as the attestations planned so far leave it. */
  state: AttestationTrailRead;
  /** The flow names the attestations were sent to (a flow's current name or an old one). */
  flowNames: Set<string>;
  /** The names the attestations were sent by (`keyOf`). */
  keys: Set<string>;
  /** An attestation must take the trail's lock: the ones after it must not overtake it. */
  blocked: boolean;
  /** The remembered read is out of date: every attestation goes back to be planned on a new read. */
  stale: boolean;
  pending: P[];
  planned: Array<{ p: P; attestation: PlannedAttestation }>;
  /** Each artifact's state as the last attestation that changed it left it, by artifact id. */
  artifacts: Map<string, Omit<ArtifactStateWrite, 'version'>>;
  /** Fingerprints whose compliance the attestations changed. */
  changed: Set<string>;
}

export function newChain<P>({ read, remembered }: Read): Chain<P> {
  return {
    read,
    remembered,
    state: read,
    flowNames: new Set(),
    keys: new Set(),
    blocked: false,
    stale: false,
    pending: [],
    planned: [],
    artifacts: new Map(),
    changed: new Set(),
  };
}

/** Adds a planned attestation to the chain: the trail (and its artifacts) as it leaves them. */
export function addPlanned<P>(chain: Chain<P>, p: P, planned: PlannedAttestation): void {
  chain.planned.push({ p, attestation: planned });
  for (const a of planned.artifactStates ?? []) {
    chain.artifacts.set(a.id, a);
  }
  for (const f of planned.changedFingerprints ?? []) {
    chain.changed.add(f);
  }
  chain.state = after(chain.state, planned);
}

/**
 * A chain's write: its attestations, its artifacts' last states and its marks, on the condition
 * of what they were planned on (the artifacts at their versions as read).
 */
export function batchOf<P>(c: Chain<P>): TrailAttestationBatch {
  const last = c.planned[c.planned.length - 1]!.attestation;
  return {
    orgId: c.read.trail.org_id,
    trailId: c.read.trail.id,
    ifUnchanged: { version: c.read.version, flowVersion: c.read.flowVersion, flowNames: [...c.flowNames] },
    trail: last.trail,
    facts: factsBehindAfter(c) === 0 ? last.facts : null,
    attestations: c.planned.map(({ attestation }) => ({ row: attestation.row, event: attestation.event })),
    artifacts: [...c.artifacts.values()].map((w) => {
      const { statusKey, ...a } = w;
      // The trail's document this write stores holds only the last attestation's evaluation.
      const inTrail = statusKey !== undefined && (last.artifactStates ?? []).includes(w);
      return { ...a, ...(inTrail ? { statusKey } : {}), version: c.read.artifactVersions[a.id] ?? null };
    }),
    marks: { fingerprints: [...c.changed], at: last.event.occurred_at },
  };
}

/**
 * The trail as the chain's write left it, with the new row version: the trail's and that of each
 * artifact it wrote (rows written by one statement share its transaction id).
 */
export function written<P>(c: Chain<P>, version: string): AttestationTrailRead {
  const artifactVersions = { ...c.state.artifactVersions };
  for (const id of c.artifacts.keys()) {
    artifactVersions[id] = version;
  }
  return { ...c.state, version, artifactVersions, factsBehind: factsBehindAfter(c) };
}

/** How many reports the trail's stored facts leave out once the chain is written (0: it writes them). */
function factsBehindAfter<P>(c: Chain<P>): number {
  const behind = c.read.factsBehind + c.planned.length;
  return behind >= FACTS_WRITTEN_EVERY ? 0 : behind;
}

/** The trail as a planned attestation leaves it, for planning the next attestation to it. */
function after(state: AttestationTrailRead, planned: PlannedAttestation): AttestationTrailRead {
  const changed = new Map((planned.artifactStates ?? []).map((a) => [a.id, a]));
  const { values } = planned;
  return {
    ...state,
    trail: {
      ...state.trail,
      compliance: values.trail,
      compliance_state: planned.trail.compliance_state as AttestationTrailRead['trail']['compliance_state'],
      evaluated_at: planned.trail.evaluated_at as Date,
      last_modified_at: planned.trail.last_modified_at as Date,
    },
    inputs: {
      artifacts: state.inputs.artifacts.map((a) => {
        const w = changed.get(a.id);
        return w
          ? {
              ...a,
              state: w.state as typeof a.state,
              compliance: values.artifacts.get(w.id),
            }
          : a;
      }),
      attestations: planned.facts.attestations.map((a, i) => ({ ...a, seq: i + 1 })),
    },
  };
}
