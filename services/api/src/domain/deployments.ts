/**
 * What a snapshot means for delivery (semantics of deployments, README "Delivery insight"):
 *  - a deployment is a fingerprint starting to run in an environment where it never ran;
 *  - a fingerprint that ran there before and comes back replacing another is a rollback;
 *  - one that comes back replacing nothing is a restart (scaled to zero and back), no deployment;
 *  - scaling and restarts of running pods never start a fingerprint, so never deploy.
 * What a deployment replaced is what ran just before the snapshot under the same flow (or, for
 * artifacts without provenance, the same image repository). Pure: the caller reads, this decides.
 */
import { pushTo } from '../group-by.js';
import { drain, STEP_ITEMS, type Steps } from '../slices.js';

/** A fingerprint as planning sees it: its name and the flows (with artifact records) it was reported in. */
export interface RunningFingerprint {
  fingerprint: string;
  name: string;
  flows: ReadonlyArray<{ flow_name: string; artifact_id: string }>;
}

export interface StartedFingerprint extends RunningFingerprint {
  /** It ran in this environment before this run. */
  ranBefore: boolean;
}

export interface PlannedDeployment {
  fingerprint: string;
  name: string;
  /** The artifact record the deployment is attributed to (null without provenance). */
  artifactId: string | null;
  flowName: string | null;
  rollback: boolean;
  /** What it replaced, with the record of each in the same flow (null when matched by image). */
  replaced: Array<{ fingerprint: string; name: string; artifactId: string | null }>;
}

/**
 * What one deployment names as replaced at most: a flow may run many fingerprints at once, and
 * a report starting as many would otherwise record each of them against each.
 */
export const MAX_REPLACED = 20;

/** The image repository of a name: without its tag or digest (`registry:5000/app:1.2@sha256:..` -> `registry:5000/app`). */
export function imageRepository(name: string): string {
  const at = name.indexOf('@');
  const base = at >= 0 ? name.slice(0, at) : name;
  const slash = base.lastIndexOf('/');
  const colon = base.lastIndexOf(':');
  return colon > slash ? base.slice(0, colon) : base;
}

/**
 * The deployments among the fingerprints a snapshot started. `before` is what ran just before
 * the snapshot (exits included). Linear in the two lists: `before` is indexed by flow and image
 * once.
 */
export function planDeployments(
  started: readonly StartedFingerprint[],
  before: readonly RunningFingerprint[],
): PlannedDeployment[] {
  return drain(planDeploymentsSteps(started, before));
}

/** planDeployments, yielding after every STEP_ITEMS fingerprints (slices.ts `inSlices`). */
export function* planDeploymentsSteps(
  started: readonly StartedFingerprint[],
  before: readonly RunningFingerprint[],
): Steps<PlannedDeployment[]> {
  let done = 0;
  const startedSet = new Set(started.map((s) => s.fingerprint));
  const byFlow = new Map<string, Array<{ r: RunningFingerprint; artifactId: string }>>();
  const byImage = new Map<string, RunningFingerprint[]>();
  for (const r of before) {
    if (++done % STEP_ITEMS === 0) {
      yield;
    }
    if (startedSet.has(r.fingerprint)) {
      continue;
    }
    for (const f of r.flows) {
      pushTo(byFlow, f.flow_name, { r, artifactId: f.artifact_id });
    }
    if (r.flows.length === 0) {
      pushTo(byImage, imageRepository(r.name), r);
    }
  }
  const out: PlannedDeployment[] = [];
  for (const s of started) {
    if (++done % STEP_ITEMS === 0) {
      yield;
    }
    let primary = s.flows[0] ?? null;
    let replaced: PlannedDeployment['replaced'] = [];
    for (const f of s.flows) {
      const found = byFlow.get(f.flow_name);
      if (found && found.length > 0) {
        primary = f;
        replaced = found.slice(0, MAX_REPLACED).map((x) => ({
          fingerprint: x.r.fingerprint,
          name: x.r.name,
          artifactId: x.artifactId,
        }));
        break;
      }
    }
    if (s.flows.length === 0) {
      replaced = (byImage.get(imageRepository(s.name)) ?? []).slice(0, MAX_REPLACED).map((r) => ({
        fingerprint: r.fingerprint,
        name: r.name,
        artifactId: null,
      }));
    }
    if (s.ranBefore && replaced.length === 0) {
      continue;
    }
    out.push({
      fingerprint: s.fingerprint,
      name: s.name,
      artifactId: primary?.artifact_id ?? null,
      flowName: primary?.flow_name ?? null,
      rollback: s.ranBefore,
      replaced,
    });
  }
  return out;
}

/** Seconds from `from` to `to`; null when `from` is unknown. */
export function leadSeconds(to: Date, from: Date | number | null | undefined): number | null {
  if (from === null || from === undefined) {
    return null;
  }
  const ms = typeof from === 'number' ? from * 1000 : from.getTime();
  return (to.getTime() - ms) / 1000;
}

export interface CommitCandidate {
  sha1: string;
  timestamp: number | null;
  author: string | null;
  message: string | null;
}

/** Commits a deployment carries at most; past this the oldest are kept (they set the lead time). */
export const MAX_DEPLOYED_COMMITS = 100;

/**
 * The commits a deployment brought: distinct by sha, made after the replaced artifact's commit
 * (when its time is known) and no later than the deployed one's, oldest first. The deployed
 * artifact's own commit is always among them.
 */
export function deployedCommits(
  own: CommitCandidate | null,
  candidates: readonly CommitCandidate[],
  after: number | null,
): CommitCandidate[] {
  const upTo = own?.timestamp ?? null;
  const seen = new Map<string, CommitCandidate>();
  if (own) {
    seen.set(own.sha1, own);
  }
  for (const c of candidates) {
    if (seen.has(c.sha1)) {
      continue;
    }
    if (after !== null && (c.timestamp === null || c.timestamp <= after)) {
      continue;
    }
    if (upTo !== null && c.timestamp !== null && c.timestamp > upTo) {
      continue;
    }
    seen.set(c.sha1, c);
  }
  return [...seen.values()]
    .sort((a, b) => (a.timestamp ?? Infinity) - (b.timestamp ?? Infinity))
    .slice(0, MAX_DEPLOYED_COMMITS);
}

/** A change lead time: from the oldest commit with a time to the deployment; null without one. */
export function changeLeadTime(startedAt: Date, commits: readonly CommitCandidate[]): number | null {
  let oldest: number | null = null;
  for (const c of commits) {
    if (c.timestamp !== null && (oldest === null || c.timestamp < oldest)) {
      oldest = c.timestamp;
    }
  }
  return leadSeconds(startedAt, oldest);
}

/** A commit as git_commit_info (or a commits_list item) holds it; null when it names no sha. */
export function commitOf(info: unknown): CommitCandidate | null {
  if (!info || typeof info !== 'object') {
    return null;
  }
  const i = info as Record<string, unknown>;
  if (typeof i.sha1 !== 'string' || i.sha1 === '') {
    return null;
  }
  const message = typeof i.message === 'string' ? (i.message.split('\n', 1)[0] ?? '').slice(0, 200) : null;
  return {
    sha1: i.sha1,
    timestamp: typeof i.timestamp === 'number' && Number.isFinite(i.timestamp) ? i.timestamp : null,
    author: typeof i.author === 'string' ? i.author.slice(0, 200) : null,
    message,
  };
}
