/**
 * Where an environment report's time goes, step by step: a clock that the report's scope carries
 * from validation to commit, announced with `report.received` and exported as the histogram
 * `verity_report_phase_seconds{phase}`. A report that takes long shows which step took it: its
 * body, waiting for the environment's lock, the live rows, the plan, the snapshot's rows, the
 * deployments, the events, or the commit. The steps of a snapshot's writes are shared with
 * re-evaluation, which carries no clock and counts nothing.
 */

export const REPORT_PHASES = [
  'validate',
  'group',
  'lock',
  'live',
  'plan',
  'states',
  'delivery',
  'events',
  'commit',
] as const;

export type ReportPhase = (typeof REPORT_PHASES)[number];

/** Seconds spent in each step of one report. */
export type PhaseSeconds = Partial<Record<ReportPhase, number>>;

export class PhaseClock {
  private last = performance.now();
  readonly seconds: PhaseSeconds = {};

  /** Counts the time since the last lap (or the clock's start) as `phase`. */
  lap(phase: ReportPhase): void {
    const now = performance.now();
    this.seconds[phase] = (this.seconds[phase] ?? 0) + (now - this.last) / 1000;
    this.last = now;
  }
}
