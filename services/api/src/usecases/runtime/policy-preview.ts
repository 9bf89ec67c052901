/**
 * Policy preview: for each snapshot of a range, the compliance of the environment and of each
 * artifact running there under the policies the snapshot applied, and with a change applied
 * (policies attached, replaced or detached). Both are evaluated on the evidence as it stands now,
 * so a difference is the change's alone. Nothing is written.
 *
 * One read of the states overlapping the range, swept in snapshot order: a state enters at its
 * first snapshot and leaves at its last, each (policy set, fingerprint) is evaluated once, and the
 * running set is re-evaluated only where the applied policies change. The work is the states,
 * plus the artifacts running at each snapshot (read to judge the environment), plus the changes
 * listed (at most MAX_PREVIEW_CHANGES).
 */
import { setImmediate as turn } from 'node:timers/promises';
import {
  MAX_PREVIEW_CHANGES,
  MAX_PREVIEW_SNAPSHOTS,
  type PolicyPreview,
  type PolicyPreviewInput,
} from '../../../../shared/contract/policy-preview.js';
import {
  environmentCompliance,
  evaluateArtifactAgainstPolicies,
  type PolicyVersion,
} from '../../domain/policy-evaluation.js';
import { formatPolicyProblem, parsePolicyYaml, type ParsedPolicy } from '../../domain/policy.js';
import { BadRequestError, NotFoundError, ValidationError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import { policiesRepository } from '../../storage/repositories/policies.js';
import type { StateWithVerdict } from '../../storage/repositories/runtime.js';
import { snapshotsRepository, type SnapshotRow } from '../../storage/repositories/snapshots.js';
import type { OrgScope } from '../scope/org-scope.js';
import { getEnvironment } from './environments.js';

/** Evaluations between two turns of the event loop. */
const SLICE = 500;

type Verdict = { compliant: boolean | null; reasons: string[] };

/** The attached policies, parsed; 400 naming the first problem of each that does not parse. */
function parseAttached(attach: PolicyPreviewInput['attach']): PolicyVersion[] {
  const errors: Record<string, string> = {};
  const parsed: PolicyVersion[] = [];
  attach.forEach((a, i) => {
    const r = parsePolicyYaml(a.content);
    if (r.ok) {
      parsed.push({ id: `preview:${a.name}`, name: a.name, version: 0, policy: r.policy });
    } else {
      errors[`body.attach[${i}].content`] = r.problems.map(formatPolicyProblem).join('; ');
    }
  });
  if (Object.keys(errors).length > 0) {
    throw new ValidationError(errors, 'An attached policy is not a valid policy');
  }
  return parsed;
}

/** The snapshot range asked for (default: the latest), checked against the environment's. */
function range(input: PolicyPreviewInput, envName: string, latest: number): { from: number; to: number } {
  if (latest === 0) {
    throw new BadRequestError(`Environment '${envName}' has no snapshots yet`);
  }
  const { from, to } = input.snapshots ?? { from: latest, to: latest };
  if (from > to) {
    throw new BadRequestError(`snapshots.from (${from}) is after snapshots.to (${to})`);
  }
  if (to - from + 1 > MAX_PREVIEW_SNAPSHOTS) {
    throw new BadRequestError(
      `snapshots ${from} to ${to} are ${to - from + 1} snapshots, over the limit of ${MAX_PREVIEW_SNAPSHOTS}`,
    );
  }
  if (to > latest) {
    throw new BadRequestError(`snapshots.to is ${to}, but environment '${envName}' has ${latest} snapshots`);
  }
  return { from, to };
}

/** The policy versions each snapshot applied, by `id:version`. */
async function appliedVersions(
  scope: OrgScope,
  snapshots: SnapshotRow[],
): Promise<Map<string, PolicyVersion>> {
  const ids = [...new Set(snapshots.flatMap((s) => s.applied_policies.map((p) => p.id)))];
  const rows = await policiesRepository.versions(scope.db, scope.org.id, ids);
  const byId = new Map<string, PolicyVersion>();
  const names = new Map(snapshots.flatMap((s) => s.applied_policies.map((p) => [p.id, p.name] as const)));
  for (const r of rows) {
    byId.set(`${r.policy_id}:${r.version}`, {
      id: r.policy_id,
      name: names.get(r.policy_id) ?? r.policy_id,
      version: r.version,
      policy: r.parsed as ParsedPolicy,
    });
  }
  return byId;
}

export async function previewPolicies(
  scope: OrgScope,
  envName: string,
  input: PolicyPreviewInput,
): Promise<PolicyPreview> {
  const env = await getEnvironment(scope, envName);
  if (env.type === 'logical') {
    throw new BadRequestError(
      `Environment '${envName}' is logical and has no snapshots of its own; preview its physical environments`,
    );
  }
  const attached = parseAttached(input.attach);
  const known = await policiesRepository.findByNames(scope.db, scope.org.id, input.detach);
  const unknown = input.detach.filter((n) => !known.some((k) => k.name === n));
  if (unknown.length > 0) {
    throw new NotFoundError(`Policy '${unknown[0]}' does not exist in organization '${scope.org.name}'`);
  }
  const { from, to } = range(input, envName, env.latest_snapshot);
  const snapshots = await snapshotsRepository.snapshotsBetween(scope.db, scope.org.id, env.id, from, to);
  const versions = await appliedVersions(scope, snapshots);
  const states = await snapshotsRepository.statesOverlapping(scope.db, scope.org.id, env.id, from, to);
  const records = await scope.services.provenance.find(scope.db, scope.org.id, [
    ...new Set(states.map((s) => s.fingerprint)),
  ]);
  const replaced = new Set([...input.detach, ...attached.map((a) => a.name)]);
  return sweep(snapshots, states, {
    baseline: (s) => s.applied_policies.flatMap((p) => versions.get(`${p.id}:${p.version}`) ?? []),
    changed: (base) => [...base.filter((p) => !replaced.has(p.name)), ...attached],
    verdict: (state, policies) => {
      const v = evaluateArtifactAgainstPolicies(
        state,
        records.get(state.fingerprint) ?? [],
        policies,
        state.allowlisted,
      );
      return { compliant: v.compliant, reasons: v.reasons };
    },
  });
}

interface Evaluation {
  baseline: (s: SnapshotRow) => PolicyVersion[];
  changed: (baseline: PolicyVersion[]) => PolicyVersion[];
  verdict: (state: StateWithVerdict, policies: PolicyVersion[]) => Verdict;
}

/** Both verdicts of a running state under one policy set. */
interface Pair {
  now: Verdict;
  change: Verdict;
}

/**
 * A flip is failing under one and not the other: with no policy left to judge it, an artifact
 * (or environment) is unknown (null), which is no failure; compliant and unknown do not flip.
 */
const fails = (compliant: boolean | null) => compliant === false;

/** What has been listed so far: the fingerprints that flip, and the changes listed. */
interface Listing {
  flipped: Set<string>;
  listed: number;
  truncated: boolean;
}

/** One snapshot's entry, from the verdicts of what runs there. */
function judge(
  snap: SnapshotRow,
  pairs: ReadonlyMap<StateWithVerdict, Pair>,
  policies: { now: number; change: number },
  listing: Listing,
): PolicyPreview['snapshots'][number] {
  const changes: PolicyPreview['snapshots'][number]['changes'] = [];
  const nowValues: Array<boolean | null> = [];
  const changeValues: Array<boolean | null> = [];
  for (const [s, p] of pairs) {
    nowValues.push(p.now.compliant);
    changeValues.push(p.change.compliant);
    if (fails(p.now.compliant) === fails(p.change.compliant)) {
      continue;
    }
    listing.flipped.add(s.fingerprint);
    if (listing.listed >= MAX_PREVIEW_CHANGES) {
      listing.truncated = true;
      continue;
    }
    listing.listed += 1;
    changes.push({
      fingerprint: s.fingerprint,
      name: s.name,
      compliant_now: p.now.compliant,
      compliant_with_change: p.change.compliant,
      // Why it fails with the change, or what stops failing.
      reasons: fails(p.change.compliant) ? p.change.reasons : p.now.reasons,
    });
  }
  return {
    index: snap.index,
    taken_at: epochSeconds(snap.created_at),
    compliant_now: environmentCompliance(policies.now, nowValues),
    compliant_with_change: environmentCompliance(policies.change, changeValues),
    changes: changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

/** Walks the snapshots in order with the states running at each. */
async function sweep(
  snapshots: SnapshotRow[],
  states: StateWithVerdict[],
  evaluation: Evaluation,
): Promise<PolicyPreview> {
  const running = new Set<StateWithVerdict>();
  const leaving = new Map<number, StateWithVerdict[]>();
  let next = 0;
  let setKey = '';
  let pairs = new Map<StateWithVerdict, Pair>();
  let base: PolicyVersion[] = [];
  let changed: PolicyVersion[] = [];
  const memo = new Map<string, Pair>();
  let evaluated = 0;
  const pairOf = async (state: StateWithVerdict): Promise<Pair> => {
    const key = `${setKey}\u0000${state.fingerprint}\u0000${state.name}\u0000${state.allowlisted}`;
    let pair = memo.get(key);
    if (!pair) {
      if (++evaluated % SLICE === 0) {
        await turn();
      }
      pair = { now: evaluation.verdict(state, base), change: evaluation.verdict(state, changed) };
      memo.set(key, pair);
    }
    return pair;
  };
  const out: PolicyPreview['snapshots'] = [];
  const listing: Listing = { flipped: new Set(), listed: 0, truncated: false };
  for (const snap of snapshots) {
    for (const gone of leaving.get(snap.index) ?? []) {
      running.delete(gone);
      pairs.delete(gone);
    }
    leaving.delete(snap.index);
    const key = snap.applied_policies.map((p) => `${p.id}:${p.version}`).join(',');
    if (key !== setKey || out.length === 0) {
      // The applied policies changed: every running state is judged again.
      setKey = key;
      base = evaluation.baseline(snap);
      changed = evaluation.changed(base);
      pairs = new Map();
      for (const s of running) {
        pairs.set(s, await pairOf(s));
      }
    }
    for (; next < states.length && states[next]!.from_index <= snap.index; next++) {
      const s = states[next]!;
      if (s.to_index !== null && s.to_index <= snap.index) {
        continue;
      }
      running.add(s);
      pairs.set(s, await pairOf(s));
      if (s.to_index !== null) {
        const list = leaving.get(s.to_index) ?? [];
        list.push(s);
        leaving.set(s.to_index, list);
      }
    }
    out.push(judge(snap, pairs, { now: base.length, change: changed.length }, listing));
  }
  return {
    snapshots: out,
    summary: {
      snapshots: out.length,
      flipped_snapshots: out.filter((s) => fails(s.compliant_now) !== fails(s.compliant_with_change)).length,
      flipped_artifacts: listing.flipped.size,
      changes_truncated: listing.truncated,
    },
  };
}
