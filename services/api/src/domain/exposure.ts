/**
 * Where and when a fingerprint ran, as intervals: the runs of the runtime's state history
 * (semantics.md section 5: a run starts at the snapshot where the fingerprint appears and ends at
 * the one where it is gone), cut wherever the environment's compliance changed, and clipped to a
 * time window. Times are epoch milliseconds.
 */

/** One state of a fingerprint in an environment (`runtime_states`). */
export interface RunState {
  runStart: number;
  fromIndex: number;
  /** Exclusive; null while current. */
  toIndex: number | null;
}

/** A run: from snapshot `start` up to (not including) `end`; `end` null while it still runs. */
export interface Run {
  start: number;
  end: number | null;
}

/** A snapshot's time and the environment's compliance in it. */
export interface SnapshotFact {
  index: number;
  at: number;
  compliant: boolean | null;
}

export interface Interval {
  from: number;
  to: number | null;
  fromSnapshot: number;
  toSnapshot: number | null;
  compliant: boolean | null;
}

/** The runs that a fingerprint's states in one environment make, in order. */
export function runsOf(states: readonly RunState[]): Run[] {
  const byStart = new Map<number, Run>();
  for (const s of [...states].sort((a, b) => a.fromIndex - b.fromIndex)) {
    const run = byStart.get(s.runStart) ?? { start: s.runStart, end: s.toIndex };
    // The run's last state says how it ends: still current (null), or exited at its `to_index`.
    run.end = s.toIndex;
    byStart.set(s.runStart, run);
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

/**
 * The intervals of the runs, one per stretch of unchanged environment compliance, clipped to
 * [from, to]. `snapshots` holds at least the environment's snapshots the runs cover, by index; a
 * clipped end takes the window's time and the snapshot in effect then.
 */
export function exposureIntervals(
  runs: readonly Run[],
  snapshots: readonly SnapshotFact[],
  window: { from?: number | undefined; to?: number | undefined },
): Interval[] {
  const sorted = [...snapshots].sort((a, b) => a.index - b.index);
  const byIndex = new Map(sorted.map((s) => [s.index, s]));
  const out: Interval[] = [];
  for (const run of runs) {
    const inRun = sorted.filter((s) => s.index >= run.start && (run.end === null || s.index < run.end));
    if (inRun.length === 0) {
      continue;
    }
    const segments: Array<{ facts: SnapshotFact[]; endAt: number | null; endIndex: number | null }> = [];
    let current: SnapshotFact[] = [inRun[0]!];
    for (const s of inRun.slice(1)) {
      if (s.compliant !== current[0]!.compliant) {
        segments.push({ facts: current, endAt: s.at, endIndex: s.index });
        current = [s];
      } else {
        current.push(s);
      }
    }
    const endFact = run.end === null ? undefined : byIndex.get(run.end);
    segments.push({
      facts: current,
      // An end snapshot beyond what was read lies after the window: the window clips it.
      endAt: run.end === null ? null : (endFact?.at ?? Number.POSITIVE_INFINITY),
      endIndex: run.end,
    });
    for (const seg of segments) {
      const first = seg.facts[0]!;
      if (window.to !== undefined && first.at > window.to) {
        continue;
      }
      if (window.from !== undefined && seg.endAt !== null && seg.endAt <= window.from) {
        continue;
      }
      const inEffect = (t: number) => seg.facts.filter((f) => f.at <= t).pop() ?? first;
      const clipFrom = window.from !== undefined && window.from > first.at;
      const clipTo = window.to !== undefined && (seg.endAt === null || seg.endAt > window.to);
      out.push({
        from: clipFrom ? window.from! : first.at,
        fromSnapshot: clipFrom ? inEffect(window.from!).index : first.index,
        to: clipTo ? window.to! : seg.endAt,
        toSnapshot: clipTo ? inEffect(window.to!).index : seg.endIndex,
        compliant: first.compliant,
      });
    }
  }
  return out;
}
