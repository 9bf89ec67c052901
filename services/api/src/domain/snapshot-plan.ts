/**
 * What a snapshot writes (semantics.md section 5): the states that begin at it, the states they
 * replace, the instance details they need, and the runs that exit. Pure: built from the live
 * instances, the current states, the report and the verdicts the caller read and evaluated.
 *  - rule 2: the same report twice changes nothing (the caller stops before planning);
 *  - rules 3 and 4: details and instance counts alone make no snapshot, but a snapshot made for
 *    another reason records the counts that moved since the last one;
 *  - a start (0 -> n) or an exit (n -> 0) makes a snapshot; so does a change of compliance or
 *    provenance on re-evaluation (section 6).
 */
import { drain, STEP_ITEMS, type Steps } from '../slices.js';
import { reevaluationChange, type ReportedArtifact } from './snapshot-diff.js';

export type StateChange =
  'started' | 'became-compliant' | 'became-non-compliant' | 'updated-provenance' | 'unchanged';

/** A state that begins at a snapshot (stored in `runtime_states`). */
export interface NewState {
  fingerprint: string;
  from_index: number;
  name: string;
  instance_count: number;
  /** Instance count in the previous snapshot (0 when it started here). */
  was_count: number;
  change: StateChange;
  detail_hash: string;
  verdict_hash: string;
  /** Snapshot where this run of the fingerprint started. */
  run_start: number;
}

/** One flow record of a fingerprint's frozen provenance, as far as planning reads it. */
export interface ProvenanceLink {
  flow_name: string;
  trail_name: string | null;
  artifact_id: string;
}

/** A state valid now, with its verdict's compliance and provenance. */
export interface CurrentState {
  fingerprint: string;
  name: string;
  instance_count: number;
  detail_hash: string;
  verdict_hash: string;
  run_start: number;
  compliant: boolean | null;
  provenance: readonly ProvenanceLink[];
}

/** A fingerprint as reported, with the hash of its instance details. */
export interface ReportedState extends ReportedArtifact {
  detailHash: string;
  instanceCount: number;
}

/** A verdict as planning reads it. */
export interface PlannedVerdict {
  hash: string;
  compliant: boolean | null;
  provenance: readonly ProvenanceLink[];
}

export interface DetailRow {
  hash: string;
  detail: string;
}

/** A fingerprint that stops running, with its last instance count. */
export interface Exit {
  fingerprint: string;
  name: string;
  count: number;
  compliant: boolean | null;
}

export interface StatePlan {
  newStates: NewState[];
  /** Fingerprints whose current state ends here because a new state replaces it. */
  replaced: string[];
  details: DetailRow[];
  exits: Exit[];
  /** The compliance of every fingerprint running after the snapshot. */
  compliance: Array<boolean | null>;
}

/** What counts as a change of provenance: another flow, trail or artifact record. */
export function provenanceKey(entries: readonly ProvenanceLink[]): string {
  return entries
    .map((e) => `${e.flow_name}/${e.trail_name}/${e.artifact_id}`)
    .sort()
    .join('|');
}

/** Whether two lists of applied policies name the same policies at the same versions. */
export function samePolicies(
  a: ReadonlyArray<{ id: string; version: number }>,
  b: ReadonlyArray<{ id: string; version: number }>,
): boolean {
  const key = (refs: ReadonlyArray<{ id: string; version: number }>) =>
    JSON.stringify(refs.map((r) => [r.id, r.version]));
  return key(a) === key(b);
}

export interface ReportPlanInput {
  index: number;
  started: readonly ReportedState[];
  verdicts: ReadonlyMap<string, { hash: string; compliant: boolean | null }>;
  reported: ReadonlyMap<string, ReportedState>;
  current: readonly CurrentState[];
  exited: readonly string[];
  live: ReadonlyArray<{ fingerprint: string; instance_count: number }>;
}

/**
 * The states of a snapshot a report makes: the fingerprints that started, with their verdicts;
 * the running ones whose count moved since the last snapshot (rule 4: recorded now); and the exits,
 * with the count they last ran with.
 */
export function planReport(input: ReportPlanInput): StatePlan {
  return drain(planReportSteps(input));
}

/** planReport, yielding after every STEP_ITEMS fingerprints (slices.ts `inSlices`). */
export function* planReportSteps(input: ReportPlanInput): Steps<StatePlan> {
  const { index, reported } = input;
  const exited = new Set(input.exited);
  const plan: StatePlan = { newStates: [], replaced: [], details: [], exits: [], compliance: [] };
  let done = 0;
  // Bounded by the fingerprints of one report (MAX_REPORT_ARTIFACTS); each lookup is a Map.
  for (const a of input.started) {
    if (++done % STEP_ITEMS === 0) {
      yield;
    }
    const v = input.verdicts.get(a.fingerprint)!;
    plan.newStates.push({
      fingerprint: a.fingerprint,
      from_index: index,
      name: a.name,
      instance_count: a.instanceCount,
      was_count: 0,
      change: 'started',
      detail_hash: a.detailHash,
      verdict_hash: v.hash,
      run_start: index,
    });
    plan.details.push({ hash: a.detailHash, detail: a.detailKey });
    plan.compliance.push(v.compliant);
  }
  // Bounded by the fingerprints running before the report (at most one report's worth).
  for (const s of input.current) {
    if (++done % STEP_ITEMS === 0) {
      yield;
    }
    if (exited.has(s.fingerprint)) {
      continue;
    }
    plan.compliance.push(s.compliant);
    const a = reported.get(s.fingerprint);
    // Instance counts are recorded at snapshot boundaries: a count that moved since is written now.
    if (a && a.instanceCount !== s.instance_count) {
      plan.replaced.push(s.fingerprint);
      plan.newStates.push({
        fingerprint: s.fingerprint,
        from_index: index,
        name: s.name,
        instance_count: a.instanceCount,
        was_count: s.instance_count,
        change: 'unchanged',
        detail_hash: a.detailHash,
        verdict_hash: s.verdict_hash,
        run_start: s.run_start,
      });
      plan.details.push({ hash: a.detailHash, detail: a.detailKey });
    }
  }
  const liveCount = new Map(input.live.map((l) => [l.fingerprint, l.instance_count]));
  plan.exits = input.current
    .filter((s) => exited.has(s.fingerprint))
    .map((s) => ({
      fingerprint: s.fingerprint,
      name: s.name,
      count: liveCount.get(s.fingerprint) ?? s.instance_count,
      compliant: s.compliant,
    }));
  return plan;
}

/** A fingerprint newly linked to artifact records: a start to write onto their trails. */
export interface LinkedRun {
  fingerprint: string;
  /** Where its run started. */
  snapshotIndex: number;
  instanceCount: number;
  artifactIds: string[];
}

export interface ReevaluationPlan<V extends PlannedVerdict> extends StatePlan {
  /** The verdict of every running fingerprint, in the order of the current states. */
  verdicts: V[];
  linked: LinkedRun[];
}

type LiveInstances = ReadonlyMap<string, { instance_count: number; detail_hash: string; detail: unknown }>;

/** The new state of a running fingerprint on re-evaluation, or null when it stays as it is. */
function reevaluatedState(
  index: number,
  s: CurrentState,
  v: PlannedVerdict,
  l: { instance_count: number; detail_hash: string } | undefined,
): NewState | null {
  const change = reevaluationChange(
    { compliant: s.compliant, provenanceKey: provenanceKey(s.provenance) },
    { compliant: v.compliant, provenanceKey: provenanceKey(v.provenance) },
  );
  const count = l?.instance_count ?? s.instance_count;
  if (change === null && v.hash === s.verdict_hash && count === s.instance_count) {
    return null;
  }
  return {
    fingerprint: s.fingerprint,
    from_index: index,
    name: s.name,
    instance_count: count,
    was_count: s.instance_count,
    change: change ?? 'unchanged',
    detail_hash: l?.detail_hash ?? s.detail_hash,
    verdict_hash: v.hash,
    run_start: s.run_start,
  };
}

/**
 * The snapshot a re-evaluation makes (section 6), or null when no verdict's compliance or
 * provenance changed and the attached policies are the same. Counts and details that moved since
 * the last snapshot are recorded with it (rules 3 and 4).
 */
export function planReevaluation<V extends PlannedVerdict>(input: {
  index: number;
  current: readonly CurrentState[];
  verdicts: ReadonlyMap<string, V>;
  live: LiveInstances;
  policiesChanged: boolean;
}): ReevaluationPlan<V> | null {
  const { index, current, live } = input;
  const verdicts = current.map((s) => input.verdicts.get(s.fingerprint)!);
  const changed = current.some((s, i) => {
    const v = verdicts[i]!;
    return (
      reevaluationChange(
        { compliant: s.compliant, provenanceKey: provenanceKey(s.provenance) },
        { compliant: v.compliant, provenanceKey: provenanceKey(v.provenance) },
      ) !== null
    );
  });
  if (!input.policiesChanged && !changed) {
    return null;
  }
  const plan: ReevaluationPlan<V> = {
    newStates: [],
    replaced: [],
    details: [],
    exits: [],
    compliance: verdicts.map((v) => v.compliant),
    verdicts,
    linked: [],
  };
  // Bounded by the fingerprints running now (one report's worth); live is a Map.
  current.forEach((s, i) => {
    const l = live.get(s.fingerprint);
    const state = reevaluatedState(index, s, verdicts[i]!, l);
    if (!state) {
      return;
    }
    plan.replaced.push(s.fingerprint);
    if (l && l.detail_hash !== s.detail_hash) {
      plan.details.push({ hash: l.detail_hash, detail: JSON.stringify(l.detail) });
    }
    plan.newStates.push(state);
  });
  plan.linked = linkedRuns(current, verdicts, live);
  return plan;
}

/**
 * A fingerprint that was already running when CI reported it (or reported it again in a new
 * trail) started before that trail held it: the newly linked trails are told where it runs.
 */
function linkedRuns(
  current: readonly CurrentState[],
  verdicts: readonly PlannedVerdict[],
  live: LiveInstances,
): LinkedRun[] {
  return current.flatMap((s, i): LinkedRun[] => {
    const known = new Set(s.provenance.map((e) => e.artifact_id));
    const added = verdicts[i]!.provenance.map((e) => e.artifact_id).filter((id) => !known.has(id));
    if (added.length === 0) {
      return [];
    }
    const instanceCount = live.get(s.fingerprint)?.instance_count ?? s.instance_count;
    return [{ fingerprint: s.fingerprint, snapshotIndex: s.run_start, instanceCount, artifactIds: added }];
  });
}
