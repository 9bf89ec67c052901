/**
 * What a snapshot records for delivery insight, in the snapshot's transaction (domain/deployments.ts):
 * the deployments among the fingerprints it started, with what they replaced, the commits they
 * brought and their lead times; the lead times of every artifact record that started running in
 * the environment for the first time; the deployments a rollback undid; and the stretches of
 * non-compliance it opened or closed, with the deployments that caused them.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { newId } from '../../ids.js';
import { inSlices, STEP_ITEMS } from '../../slices.js';
import {
  changeLeadTime,
  commitOf,
  deployedCommits,
  leadSeconds,
  planDeploymentsSteps,
  type CommitCandidate,
  type PlannedDeployment,
} from '../../domain/deployments.js';
import type { CurrentState, LinkedRun, NewState } from '../../domain/snapshot-plan.js';
import {
  deploymentsRepository,
  type ArtifactFacts,
  type NewDeployment,
  type NewLeadTime,
} from '../../storage/repositories/deployments.js';
import type { NewVerdict } from '../../storage/repositories/runtime.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { ProvenanceRecord } from '../scope/provenance.js';

/** A deployment one snapshot recorded, as metrics count it. */
export interface DeploymentMade {
  org: string;
  environment: string;
  changeLeadTime: number | null;
}

/** What delivery reads of a provenance record of a started fingerprint. */
export type DeliveryRecord = Pick<
  ProvenanceRecord,
  'artifactId' | 'flowName' | 'trailName' | 'gitCommit' | 'htmlUrl' | 'gitCommitInfo' | 'reportedAt'
>;

/** What delivery reads of a verdict. */
export type DeliveryVerdict = Pick<NewVerdict, 'hash' | 'compliant' | 'provenance'>;

/** What delivery writes with: the organization, the database and the snapshot's time. */
export type DeliveryScope = Pick<OrgScope, 'db' | 'org' | 'now'>;

export interface DeliveryInput {
  env: { id: string; name: string; compliant: boolean | null };
  index: number;
  /** What ran just before the snapshot. */
  before: ReadonlyArray<Pick<CurrentState, 'fingerprint' | 'name' | 'provenance'>>;
  newStates: ReadonlyArray<Pick<NewState, 'fingerprint' | 'name' | 'change' | 'verdict_hash'>>;
  verdicts: readonly DeliveryVerdict[];
  startedRecords: ReadonlyMap<string, readonly DeliveryRecord[]>;
  complianceAfter: boolean | null;
}

/**
 * The artifact record a deployment is attributed to, and the one it replaced in the same flow:
 * of several, the latest reported, so the commits it brought are those no replaced build held.
 */
function lineage(d: PlannedDeployment, facts: ReadonlyMap<string, ArtifactFacts>) {
  const own = d.artifactId ? facts.get(d.artifactId) : undefined;
  let previous: ArtifactFacts | undefined;
  for (const r of d.replaced) {
    const f = r.artifactId ? facts.get(r.artifactId) : undefined;
    if (own && f && f.flow_id === own.flow_id && (!previous || Number(f.seq) > Number(previous.seq))) {
      previous = f;
    }
  }
  return { own, previous };
}

/** The builds of each deployment's flow between the replaced artifact and the deployed one, read at once. */
async function buildsBetween(
  scope: DeliveryScope,
  planned: readonly PlannedDeployment[],
  facts: ReadonlyMap<string, ArtifactFacts>,
): Promise<Map<string, Array<Record<string, unknown>>>> {
  const ranges = planned.flatMap((d) => {
    const { own, previous } = lineage(d, facts);
    return own && previous && !d.rollback && Number(previous.seq) < Number(own.seq)
      ? [{ key: d.fingerprint, flowId: own.flow_id, afterSeq: previous.seq, upToSeq: own.seq }]
      : [];
  });
  return deploymentsRepository.flowCommits(scope.db, scope.org.id, ranges);
}

/** The commits a deployment brought (domain/deployments.ts deployedCommits). */
function commitsOf(
  d: PlannedDeployment,
  facts: ReadonlyMap<string, ArtifactFacts>,
  between: ReadonlyMap<string, ReadonlyArray<Record<string, unknown>>>,
): CommitCandidate[] {
  const { own, previous } = lineage(d, facts);
  if (!own || d.rollback) {
    return [];
  }
  const ownCommit =
    commitOf(own.git_commit_info) ??
    (own.git_commit ? { sha1: own.git_commit, timestamp: null, author: null, message: null } : null);
  const known = (list: readonly unknown[]) =>
    list.map(commitOf).filter((c): c is CommitCandidate => c !== null);
  const listed = known(own.commits_list ?? []);
  if (!previous) {
    return deployedCommits(ownCommit, listed, null);
  }
  const after = commitOf(previous.git_commit_info)?.timestamp ?? null;
  return deployedCommits(ownCommit, [...listed, ...known(between.get(d.fingerprint) ?? [])], after);
}

/** Lead times of every artifact record of the started fingerprints, from their first run here. */
function leadTimes(
  scope: DeliveryScope,
  envId: string,
  index: number,
  started: DeliveryInput['newStates'],
  records: DeliveryInput['startedRecords'],
): NewLeadTime[] {
  const { now } = scope;
  return started.flatMap((s) =>
    (records.get(s.fingerprint) ?? []).map((r) => ({
      org_id: scope.org.id,
      artifact_id: r.artifactId,
      environment_id: envId,
      snapshot_index: index,
      first_ran_at: now,
      commit_lead_time: leadSeconds(now, commitOf(r.gitCommitInfo)?.timestamp),
      build_lead_time: leadSeconds(now, r.reportedAt)!,
    })),
  );
}

/** The rows of the planned deployments. */
async function deploymentRows(
  scope: DeliveryScope,
  input: DeliveryInput,
  planned: readonly PlannedDeployment[],
  facts: ReadonlyMap<string, ArtifactFacts>,
  verdicts: ReadonlyMap<string, DeliveryVerdict>,
): Promise<NewDeployment[]> {
  const { org, now } = scope;
  const stateOf = new Map(
    input.newStates.filter((s) => s.change === 'started').map((s) => [s.fingerprint, s]),
  );
  const between = await buildsBetween(scope, planned, facts);
  const rows: NewDeployment[] = [];
  // Bounded by the fingerprints one report starts; each lookup is a Map. The event loop turns
  // after every STEP_ITEMS of them.
  for (const d of planned) {
    if (rows.length % STEP_ITEMS === STEP_ITEMS - 1) {
      await turn();
    }
    const verdict = verdicts.get(stateOf.get(d.fingerprint)!.verdict_hash);
    const record = (input.startedRecords.get(d.fingerprint) ?? []).find((r) => r.artifactId === d.artifactId);
    const own = d.artifactId ? facts.get(d.artifactId) : undefined;
    const commits = commitsOf(d, facts, between);
    rows.push({
      org_id: org.id,
      id: newId(),
      environment_id: input.env.id,
      snapshot_index: input.index,
      started_at: now,
      fingerprint: d.fingerprint,
      artifact_name: d.name,
      artifact_id: d.artifactId,
      flow_name: d.flowName,
      trail_name: record?.trailName ?? null,
      git_commit: record?.gitCommit ?? null,
      html_url: record?.htmlUrl ?? null,
      repo_name: own?.repo_name ?? null,
      replaced: JSON.stringify(
        d.replaced.map((r) => ({
          name: r.name,
          fingerprint: r.fingerprint,
          git_commit: (r.artifactId ? facts.get(r.artifactId)?.git_commit : null) ?? null,
        })),
      ),
      rollback: d.rollback,
      commit_lead_time: record ? leadSeconds(now, commitOf(record.gitCommitInfo)?.timestamp) : null,
      build_lead_time: record ? leadSeconds(now, record.reportedAt) : null,
      change_lead_time: d.rollback ? null : changeLeadTime(now, commits),
      commits: JSON.stringify(commits),
      compliant: verdict?.compliant ?? null,
    });
  }
  return rows;
}

/**
 * Records what a snapshot means for delivery; returns the deployments it made. With `deployments`
 * false, all but the deployments and their marks, which are then recorded later from the
 * snapshot's history (delivery-deferred.ts).
 */
export async function recordDelivery(
  scope: OrgScope,
  input: DeliveryInput,
  options: { deployments: boolean } = { deployments: true },
): Promise<DeploymentMade[]> {
  const { db, org } = scope;
  const { env, index } = input;
  const started = input.newStates.filter((s) => s.change === 'started');
  if (started.length > 0) {
    await deploymentsRepository.insertLeadTimes(
      db,
      leadTimes(scope, env.id, index, started, input.startedRecords),
    );
  }
  const rows = options.deployments ? await recordDeployments(scope, input) : [];
  await recordCompliance(scope, input, options.deployments);
  return deploymentsMade(org.name, env.name, rows);
}

/** Deployments as metrics count them. */
export function deploymentsMade(
  org: string,
  environment: string,
  rows: readonly Pick<NewDeployment, 'change_lead_time'>[],
): DeploymentMade[] {
  return rows.map((r) => ({
    org,
    environment,
    changeLeadTime: r.change_lead_time ?? null,
  }));
}

/**
 * The deployments among the fingerprints a snapshot started, with the deployments its rollbacks
 * undid marked; returns the rows written. Reads only what the snapshot's history holds (the
 * states before it, its started states and their verdicts), so it also records the deployments
 * of a snapshot written before deployments were (delivery-backfill.ts).
 */
export async function recordDeployments(
  scope: DeliveryScope,
  input: DeliveryInput,
): Promise<NewDeployment[]> {
  const { db, org, now } = scope;
  const { env, index } = input;
  const verdicts = new Map(input.verdicts.map((v) => [v.hash, v]));
  const started = input.newStates.filter((s) => s.change === 'started');
  if (started.length === 0) {
    return [];
  }
  const ranBefore = await deploymentsRepository.ranBefore(
    db,
    org.id,
    env.id,
    started.map((s) => s.fingerprint),
    index,
  );
  const planned = await inSlices(
    planDeploymentsSteps(
      started.map((s) => ({
        fingerprint: s.fingerprint,
        name: s.name,
        flows: verdicts.get(s.verdict_hash)?.provenance ?? [],
        ranBefore: ranBefore.has(s.fingerprint),
      })),
      input.before.map((b) => ({ fingerprint: b.fingerprint, name: b.name, flows: b.provenance })),
    ),
  );
  const facts = await deploymentsRepository.artifactFacts(db, org.id, [
    ...planned.flatMap((d) => (d.artifactId ? [d.artifactId] : [])),
    ...planned.flatMap((d) => d.replaced.flatMap((r) => (r.artifactId ? [r.artifactId] : []))),
  ]);
  const rows = await deploymentRows(scope, input, planned, facts, verdicts);
  await deploymentsRepository.insert(db, rows);
  const undone = planned.filter((d) => d.rollback).flatMap((d) => d.replaced.map((r) => r.fingerprint));
  if (undone.length > 0) {
    await deploymentsRepository.mark(db, org.id, env.id, undone, 'rolled_back_at', now, index);
  }
  return rows;
}

/**
 * The fingerprints that made the environment non-compliant at this snapshot: those that became
 * non-compliant and those that started non-compliant; none unless it became non-compliant here.
 */
function culprits(input: DeliveryInput): string[] {
  if (input.env.compliant === false || input.complianceAfter !== false) {
    return [];
  }
  const verdicts = new Map(input.verdicts.map((v) => [v.hash, v]));
  return input.newStates
    .filter(
      (s) =>
        s.change === 'became-non-compliant' ||
        (s.change === 'started' && verdicts.get(s.verdict_hash)?.compliant === false),
    )
    .map((s) => s.fingerprint);
}

/** Marks the deployments that made the environment non-compliant at this snapshot. */
export async function markCulprits(scope: DeliveryScope, input: DeliveryInput): Promise<void> {
  const found = culprits(input);
  if (found.length > 0) {
    const { db, org, now } = scope;
    await deploymentsRepository.mark(
      db,
      org.id,
      input.env.id,
      found,
      'broke_compliance_at',
      now,
      input.index,
    );
  }
}

/**
 * Opens or closes the environment's stretch of non-compliance, and marks the deployments that
 * caused one (`mark`: unless they are recorded later).
 */
async function recordCompliance(scope: DeliveryScope, input: DeliveryInput, mark: boolean): Promise<void> {
  const { db, org, now } = scope;
  const { env, index, complianceAfter } = input;
  const wasNonCompliant = env.compliant === false;
  if (!wasNonCompliant && complianceAfter === false) {
    await deploymentsRepository.openIncident(db, org.id, env.id, index, now);
    if (mark) {
      await markCulprits(scope, input);
    }
  } else if (wasNonCompliant && complianceAfter !== false) {
    await deploymentsRepository.closeIncident(db, org.id, env.id, index, now);
  }
}

/**
 * Artifact records CI reported after their fingerprint started running here: their lead times,
 * measured to the start of that run; and the run's deployment, recorded without provenance, is
 * attributed to the first of them.
 */
export async function recordLinkedRuns(
  scope: DeliveryScope,
  envId: string,
  linked: readonly LinkedRun[],
  records: ReadonlyMap<string, readonly DeliveryRecord[]>,
): Promise<void> {
  const { db, org } = scope;
  const runs = linked.flatMap((l) =>
    l.artifactIds.map((artifactId) => ({ artifactId, runStart: l.snapshotIndex })),
  );
  if (runs.length === 0) {
    return;
  }
  await deploymentsRepository.insertLinkedLeadTimes(db, org.id, envId, runs);
  const pending = await deploymentsRepository.unattributed(
    db,
    org.id,
    envId,
    linked.map((l) => l.fingerprint),
  );
  const runOf = new Map(linked.map((l) => [l.fingerprint, l]));
  const current = pending.filter((d) => runOf.get(d.fingerprint)?.snapshotIndex === d.snapshot_index);
  const facts = await deploymentsRepository.artifactFacts(
    db,
    org.id,
    current.flatMap((d) => runOf.get(d.fingerprint)!.artifactIds.slice(0, 1)),
  );
  // Bounded by the fingerprints running in the environment.
  for (const d of current) {
    const artifactId = runOf.get(d.fingerprint)!.artifactIds[0]!;
    const record = (records.get(d.fingerprint) ?? []).find((r) => r.artifactId === artifactId);
    const own = facts.get(artifactId);
    if (!record || !own) {
      continue;
    }
    const ownCommit = commitOf(own.git_commit_info);
    const listed = (own.commits_list ?? []).map(commitOf).filter((c): c is CommitCandidate => c !== null);
    const commits = d.rollback ? [] : deployedCommits(ownCommit, listed, null);
    await deploymentsRepository.attribute(db, org.id, d.id, {
      artifact_id: artifactId,
      flow_name: record.flowName,
      trail_name: record.trailName,
      git_commit: record.gitCommit,
      html_url: record.htmlUrl,
      repo_name: own.repo_name,
      commit_lead_time: leadSeconds(d.started_at, ownCommit?.timestamp),
      build_lead_time: leadSeconds(d.started_at, record.reportedAt),
      change_lead_time: d.rollback ? null : changeLeadTime(d.started_at, commits),
      commits: JSON.stringify(commits),
    });
  }
}
