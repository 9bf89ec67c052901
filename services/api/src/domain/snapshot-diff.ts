/**
 * What a report changes (semantics.md section 5; spec rules 2, 3 and 4). A report is the full
 * current state; entries group by fingerprint into one artifact with its instances. A snapshot is
 * due only when a fingerprint starts (0 -> n) or exits (n -> 0): instance counts (rule 4), pod
 * names and timestamps (rule 3) and identical reports (rule 2) change the live state, not history.
 */

/** One instance (pod, task, file, function) as reported. */
export interface InstanceDetail {
  /** Seconds since the epoch. */
  creationTimestamp: number;
  podName?: string;
  namespace?: string;
  owners?: unknown[] | null;
  taskArn?: string;
  cluster_name?: string | null;
  service_name?: string | null;
  app_name?: string;
  app_kind?: string;
  kind?: string;
  serviceName?: string;
  revisionName?: string;
  jobName?: string;
}

/** One entry of any report type, as the contract parses it: an instance and what it runs. */
export interface ReportEntry extends InstanceDetail {
  digests: Record<string, string>;
}

/** A fingerprint as reported: its name, and every instance running it, in a stable order. */
export interface ReportedArtifact {
  fingerprint: string;
  name: string;
  instances: InstanceDetail[];
  /**
   * Canonical text of the instances, their JSON in that order: equal exactly when the instance
   * details are equal, and stored as the details.
   */
  detailKey: string;
}

function instanceOf(entry: ReportEntry): InstanceDetail {
  const { digests: _digests, ...instance } = entry;
  return instance;
}

/** Orders instances by namespace and name, then creation time, so equal sets give equal text. */
function sortKey(a: InstanceDetail): string {
  const name = a.podName ?? a.taskArn ?? a.app_name ?? a.serviceName ?? a.jobName ?? '';
  return `${a.namespace ?? ''}/${name}/${String(a.creationTimestamp).padStart(12, '0')}`;
}

/** Items a step of the sliced functions below handles before it pauses. */
export const SLICE = 2_000;

/**
 * Groups report entries by fingerprint (section 5). An entry running several fingerprints is an
 * instance of each; an empty digest (a reporter that could not read it) is skipped, so it never
 * makes a snapshot. A fingerprint reported under several names takes the smallest one.
 */
export function groupReport(entries: readonly ReportEntry[]): ReportedArtifact[] {
  return toEnd(groupReportInSlices(entries));
}

/** Runs a sliced computation without pausing. */
export function toEnd<T>(steps: Generator<void, T>): T {
  let step = steps.next();
  while (!step.done) {
    step = steps.next();
  }
  return step.value;
}

/**
 * groupReport in slices: pauses (yields) after every SLICE entries or fingerprints, so a caller
 * can let other work run between slices of a report of up to MAX_REPORT_ARTIFACTS entries.
 */
export function* groupReportInSlices(entries: readonly ReportEntry[]): Generator<void, ReportedArtifact[]> {
  const byFingerprint = new Map<string, { names: Set<string>; instances: InstanceDetail[] }>();
  // Bounded by the report's entries (the contract's cap) times their digests (MAX_DIGESTS_PER_ENTRY).
  for (let i = 0; i < entries.length; i++) {
    if (i % SLICE === SLICE - 1) {
      yield;
    }
    addEntry(byFingerprint, entries[i]!);
  }
  const out: ReportedArtifact[] = [];
  for (const [fingerprint, group] of byFingerprint) {
    if (out.length % SLICE === SLICE - 1) {
      yield;
    }
    const keyed = group.instances.map((instance) => ({ key: sortKey(instance), instance }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const instances = keyed.map((k) => k.instance);
    out.push({
      fingerprint,
      name: [...group.names].sort()[0] ?? fingerprint,
      instances,
      detailKey: JSON.stringify(instances),
    });
  }
  return out.sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0));
}

function addEntry(
  byFingerprint: Map<string, { names: Set<string>; instances: InstanceDetail[] }>,
  entry: ReportEntry,
): void {
  const seen = new Set<string>();
  for (const [name, fingerprint] of Object.entries(entry.digests)) {
    if (fingerprint === '') {
      continue;
    }
    let group = byFingerprint.get(fingerprint);
    if (!group) {
      group = { names: new Set(), instances: [] };
      byFingerprint.set(fingerprint, group);
    }
    group.names.add(name);
    // Two containers of one pod with the same image are one instance.
    if (seen.has(fingerprint)) {
      continue;
    }
    seen.add(fingerprint);
    group.instances.push(instanceOf(entry));
  }
}

/** Canonical text of a whole grouped report: equal reports give equal text (rule 2). */
export function reportKey(artifacts: readonly ReportedArtifact[]): string {
  return artifacts.map((a) => `${a.fingerprint}=${a.name}:${a.detailKey}`).join('\n');
}

/** What an environment remembers of its last report. */
export interface PreviousReport {
  /** The key of the last report taken (a hash of {@link reportKey}, or of its bytes); null: none yet. */
  key: string | null;
  /** The environment's latest snapshot number; 0: it has none yet. */
  latestSnapshot: number;
}

/**
 * Spec rule 2: a report whose key equals the last report's key changes nothing, and only the
 * report time moves. An environment without a snapshot yet takes its first report even then.
 * Both keys must be of one kind: hashes of the grouped report, or hashes of the request bytes.
 */
export function reportUnchanged(previous: PreviousReport, next: string): boolean {
  return previous.latestSnapshot > 0 && previous.key === next;
}

/** What runs now, per fingerprint, as the live state remembers it. */
export interface LiveArtifact {
  fingerprint: string;
  instanceCount: number;
  /** Hash (or canonical text) of the instance details. */
  detailKey: string;
}

export interface RuntimeDiff {
  /** 0 -> n: makes a snapshot. */
  started: string[];
  /** n -> 0: makes a snapshot. */
  exited: string[];
  /** n -> m, both non-zero: no snapshot (rule 4); fires ON_SCALED_ARTIFACT. */
  scaled: string[];
  /** Same count, other pods or timestamps: no snapshot (rule 3); the live detail is refreshed. */
  redetailed: string[];
  /** True when the report makes a new snapshot. */
  snapshotDue: boolean;
}

/**
 * Compares the live state with a new report (spec rules 2-4). `reported` detail keys must be
 * comparable with the live ones (both hashes, or both canonical texts).
 */
export function diffRuntime(
  live: readonly LiveArtifact[],
  reported: ReadonlyArray<{ fingerprint: string; instanceCount: number; detailKey: string }>,
): RuntimeDiff {
  return toEnd(diffRuntimeSteps(live, reported));
}

/** diffRuntime, yielding after every SLICE fingerprints (slices.ts `inSlices`). */
export function* diffRuntimeSteps(
  live: readonly LiveArtifact[],
  reported: ReadonlyArray<{ fingerprint: string; instanceCount: number; detailKey: string }>,
): Generator<void, RuntimeDiff, void> {
  const before = new Map<string, LiveArtifact>();
  // Bounded by the live and reported fingerprints (MAX_REPORT_ARTIFACTS each); lookups are a Map and a Set.
  for (let i = 0; i < live.length; i++) {
    before.set(live[i]!.fingerprint, live[i]!);
    if ((i + 1) % SLICE === 0) {
      yield;
    }
  }
  const now = new Set<string>();
  const started: string[] = [];
  const scaled: string[] = [];
  const redetailed: string[] = [];
  for (let i = 0; i < reported.length; i++) {
    const artifact = reported[i]!;
    now.add(artifact.fingerprint);
    const was = before.get(artifact.fingerprint);
    if (!was) {
      started.push(artifact.fingerprint);
    } else if (was.instanceCount !== artifact.instanceCount) {
      scaled.push(artifact.fingerprint);
    } else if (was.detailKey !== artifact.detailKey) {
      redetailed.push(artifact.fingerprint);
    }
    if ((i + 1) % SLICE === 0) {
      yield;
    }
  }
  const exited: string[] = [];
  for (let i = 0; i < live.length; i++) {
    if (!now.has(live[i]!.fingerprint)) {
      exited.push(live[i]!.fingerprint);
    }
    if ((i + 1) % SLICE === 0) {
      yield;
    }
  }
  const snapshotDue = started.length > 0 || exited.length > 0;
  return { started, exited, scaled, redetailed, snapshotDue };
}

export type AnnotationType =
  | 'started-compliant'
  | 'started-non-compliant'
  | 'started-unknown'
  | 'exited'
  | 'became-compliant'
  | 'became-non-compliant'
  | 'updated-provenance'
  | 'unchanged';

/** The annotation type of a state that starts a run, by its compliance in the environment. */
export function startedAnnotation(compliant: boolean | null): AnnotationType {
  return compliant === true
    ? 'started-compliant'
    : compliant === false
      ? 'started-non-compliant'
      : 'started-unknown';
}

/** A state as its annotation reads it. */
export interface AnnotatedState {
  exited: boolean;
  to_index: number | null;
  exit_count: number | null;
  from_index: number;
  instance_count: number;
  was_count: number;
  change: Exclude<AnnotationType, 'exited' | `started-${string}`> | 'started';
  compliant: boolean | null;
}

/**
 * How a state shows in snapshot `index` (section 5): exited there, unchanged since an earlier
 * snapshot, or the change it began with.
 */
export function annotate<S extends AnnotatedState>(
  s: S,
  index: number,
): { state: S; exited: boolean; annotation: { type: AnnotationType; was: number; now: number } } {
  if (s.exited && s.to_index === index) {
    return {
      state: s,
      exited: true,
      annotation: { type: 'exited', was: s.exit_count ?? s.instance_count, now: 0 },
    };
  }
  if (s.from_index !== index) {
    return {
      state: s,
      exited: false,
      annotation: { type: 'unchanged', was: s.instance_count, now: s.instance_count },
    };
  }
  const type: AnnotationType = s.change === 'started' ? startedAnnotation(s.compliant) : s.change;
  return { state: s, exited: false, annotation: { type, was: s.was_count, now: s.instance_count } };
}

/**
 * How a running fingerprint changed on re-evaluation (section 5): compliance first, then
 * provenance; null when neither changed and no new snapshot is due for it.
 */
export function reevaluationChange(
  before: { compliant: boolean | null; provenanceKey: string },
  after: { compliant: boolean | null; provenanceKey: string },
): 'became-compliant' | 'became-non-compliant' | 'updated-provenance' | null {
  if (before.compliant !== after.compliant) {
    if (after.compliant === true) {
      return 'became-compliant';
    }
    if (after.compliant === false) {
      return 'became-non-compliant';
    }
    // Back to unknown (policies detached) is a change of provenance-free state, not a verdict.
    return 'updated-provenance';
  }
  if (before.provenanceKey !== after.provenanceKey) {
    return 'updated-provenance';
  }
  return null;
}

/** The human text of an environment event, as the interface words it. */
export function describeChange(type: AnnotationType | 'exited', was: number, now: number): string {
  const plural = (n: number) => (n === 1 ? 'instance' : 'instances');
  if (type.startsWith('started')) {
    return `${now} ${plural(now)} started running (from ${was} to ${now})`;
  }
  if (type === 'exited') {
    return `${was} ${plural(was)} stopped running (from ${was} to 0)`;
  }
  if (type === 'became-compliant') {
    return 'Artifact became compliant';
  }
  if (type === 'became-non-compliant') {
    return 'Artifact became non-compliant';
  }
  if (type === 'updated-provenance') {
    return 'Artifact provenance updated';
  }
  if (was !== now) {
    return `scaled from ${was} to ${now} ${plural(now)}`;
  }
  return 'unchanged';
}
