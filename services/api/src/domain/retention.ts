/**
 * Retention classes and legal holds (README "Retention", "Legal holds"). Pure: which period
 * applies to a record, whether a class goes below the server's minimum, and what a hold covers.
 */

/** The kinds of record a retention class sets a period for. */
export type PeriodName = 'trails_days' | 'evidence_files_days' | 'snapshots_days' | 'audit_log_days';

export type Periods = Partial<Record<PeriodName, number>>;

export interface RetentionClasses {
  default: Periods;
  flows: Record<string, Periods>;
  environments: Record<string, Periods>;
}

/** The period that applies to a record, and where it was set. */
export interface AppliedPeriod {
  period: PeriodName;
  days: number;
  scope: 'default' | 'flow' | 'environment';
  name: string | null;
}

const DAY_MS = 86_400_000;

/** What each period is called in messages. */
const WHAT: Record<PeriodName, string> = {
  trails_days: 'trails',
  evidence_files_days: 'evidence files',
  snapshots_days: 'snapshots',
  audit_log_days: 'audit log entries',
};

/** The variable an operator sets each minimum with. */
export const MINIMUM_VARIABLE: Record<PeriodName, string> = {
  trails_days: 'VERITY_RETENTION_MIN_TRAILS_DAYS',
  evidence_files_days: 'VERITY_RETENTION_MIN_EVIDENCE_FILES_DAYS',
  snapshots_days: 'VERITY_RETENTION_MIN_SNAPSHOTS_DAYS',
  audit_log_days: 'VERITY_RETENTION_MIN_AUDIT_LOG_DAYS',
};

/**
 * The period of `period` for a record of the flow or environment named (`owner`): the owner's
 * own class when it sets that period, else the default's; null keeps the record forever. The
 * server's minimum raises a shorter period (a minimum set after the class was stored).
 */
export function appliedPeriod(
  classes: RetentionClasses,
  period: PeriodName,
  owner: { kind: 'flow' | 'environment'; name: string } | null,
  minimum: Record<PeriodName, number>,
): AppliedPeriod | null {
  const own = owner ? (owner.kind === 'flow' ? classes.flows : classes.environments)[owner.name] : undefined;
  const fromOwner = own?.[period];
  const days = fromOwner ?? classes.default[period];
  if (days === undefined) {
    return null;
  }
  return {
    period,
    days: Math.max(days, minimum[period]),
    scope: fromOwner !== undefined && owner ? owner.kind : 'default',
    name: fromOwner !== undefined && owner ? owner.name : null,
  };
}

/** The time (epoch ms) before which a record under `applied` has passed its period, as of `asOfMs`. */
export function cutoffMs(applied: AppliedPeriod, asOfMs: number): number {
  return asOfMs - applied.days * DAY_MS;
}

/**
 * The periods of `classes` below the server's minimum, as field paths and messages (empty:
 * none). A tenant cannot set a period the operator does not allow.
 */
export function belowMinimum(
  classes: RetentionClasses,
  minimum: Record<PeriodName, number>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  const check = (path: string, periods: Periods) => {
    for (const [name, days] of Object.entries(periods) as Array<[PeriodName, number | undefined]>) {
      const min = minimum[name];
      if (days !== undefined && min > 0 && days < min) {
        problems[`${path}.${name}`] =
          `is ${days}; this server keeps ${WHAT[name]} at least ${min} days (${MINIMUM_VARIABLE[name]})`;
      }
    }
  };
  check('default', classes.default);
  for (const [name, periods] of Object.entries(classes.flows)) {
    check(`flows.${name}`, periods);
  }
  for (const [name, periods] of Object.entries(classes.environments)) {
    check(`environments.${name}`, periods);
  }
  return problems;
}

/** A legal hold's scope: flows and environments named (both empty: the whole organization). */
export interface HoldScope {
  flows: readonly string[];
  environments: readonly string[];
  from: Date | null;
  to: Date | null;
}

/** A time range a hold keeps (null ends: open). */
export interface HeldRange {
  from: Date | null;
  to: Date | null;
}

const orgWide = (h: HoldScope) => h.flows.length === 0 && h.environments.length === 0;

/** The ranges of time in which the flow's trails (and their evidence files) are held. */
export function heldRangesOfFlow(holds: readonly HoldScope[], flow: string): HeldRange[] {
  return holds.filter((h) => orgWide(h) || h.flows.includes(flow)).map(({ from, to }) => ({ from, to }));
}

/** The ranges of time in which the environment's snapshots are held. */
export function heldRangesOfEnvironment(holds: readonly HoldScope[], env: string): HeldRange[] {
  return holds
    .filter((h) => orgWide(h) || h.environments.includes(env))
    .map(({ from, to }) => ({ from, to }));
}

/** The ranges of time in which the audit log is held: holds over the whole organization. */
export function heldRangesOfAuditLog(holds: readonly HoldScope[]): HeldRange[] {
  return holds.filter(orgWide).map(({ from, to }) => ({ from, to }));
}

/** What a hold keeps, in words, for people reading the settings. */
export function describeHold(h: HoldScope): string {
  const when =
    h.from && h.to
      ? ` from ${h.from.toISOString()} to ${h.to.toISOString()}`
      : h.from
        ? ` from ${h.from.toISOString()} on`
        : h.to
          ? ` up to ${h.to.toISOString()}`
          : '';
  if (orgWide(h)) {
    return `every trail, evidence file, snapshot and audit log entry of the organization${when}`;
  }
  const parts: string[] = [];
  if (h.flows.length > 0) {
    parts.push(`the trails and evidence files of flow${h.flows.length > 1 ? 's' : ''} ${h.flows.join(', ')}`);
  }
  if (h.environments.length > 0) {
    parts.push(
      `the snapshots of environment${h.environments.length > 1 ? 's' : ''} ${h.environments.join(', ')}`,
    );
  }
  return `${parts.join(' and ')}${when}`;
}
