/**
 * The change filter: which reports are worth a PUT. A report's identity is the set of
 * (namespace, workload, image -> digest); its digests are the digests of that set. Pod names,
 * replica counts, restarts and timestamps are not part of it, which mirrors what makes the API
 * cut a new snapshot (semantics section 5, rules 3 and 4). Pure.
 */
import { podDigests, workloadOf, type PodLike } from './pods-report.js';

/** The sorted, de-duplicated (namespace, workload, image, digest) tuples of a report. */
export type ReportIdentity = readonly string[];

/**
 * The identity of the report `podsToK8sReport` would build from these pods, without building it:
 * most evaluations end in "unchanged", and a report of every pod is then garbage.
 */
export function podsIdentity(pods: Iterable<PodLike>): {
  identity: ReportIdentity;
  /** Pods the report would carry. */
  reported: number;
  /** Pods it would leave out, their image id not known yet. */
  leftOut: number;
} {
  const tuples = new Set<string>();
  let reported = 0;
  let leftOut = 0;
  for (const pod of pods) {
    const digests = podDigests(pod);
    if (digests === undefined) {
      continue;
    }
    if (digests === 'unknown') {
      leftOut += 1;
      continue;
    }
    reported += 1;
    const prefix = `${pod.metadata?.namespace ?? ''} ${workloadOf(pod)} `;
    for (const image in digests) {
      tuples.add(`${prefix}${image}@${digests[image]}`);
    }
  }
  return { identity: [...tuples].sort(), reported, leftOut };
}

/** Whether two identities are the same set. */
export function sameIdentity(a: ReportIdentity, b: ReportIdentity): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

/** Tuples that appeared and disappeared between two identities, for the log. */
export function identityChanges(
  before: ReportIdentity,
  after: ReportIdentity,
): { started: string[]; stopped: string[] } {
  const b = new Set(before);
  const a = new Set(after);
  return { started: after.filter((t) => !b.has(t)), stopped: before.filter((t) => !a.has(t)) };
}

/** Why a report is sent. */
export type SendReason = 'first' | 'change' | 'heartbeat';
/** Why a report is not sent. */
export type SkipReason = 'unchanged' | 'rejected';

/** What happened to the last report handed to delivery. */
export interface LastSubmitted {
  identity: ReportIdentity;
  /** `rejected`: the API refused it with a 4xx that retrying cannot fix. */
  outcome: 'pending' | 'accepted' | 'rejected';
}

/**
 * Send or skip. Compared with the last report handed to delivery, whether or not it has arrived
 * yet: a change reverted during an outage must still send the reverted state. A state the API
 * rejected is not sent again until it changes or the heartbeat comes: no retry storm.
 */
export function decideReport(
  last: LastSubmitted | undefined,
  next: ReportIdentity,
  heartbeat: boolean,
): { send: true; reason: SendReason } | { send: false; reason: SkipReason } {
  if (heartbeat) {
    return { send: true, reason: 'heartbeat' };
  }
  if (!last) {
    return { send: true, reason: 'first' };
  }
  if (!sameIdentity(last.identity, next)) {
    return { send: true, reason: 'change' };
  }
  return { send: false, reason: last.outcome === 'rejected' ? 'rejected' : 'unchanged' };
}
