/**
 * Reading snapshots (semantics.md section 5): one snapshot by expression, the list and env-diff
 * (the events are in environment-events.ts). A snapshot N is assembled from the states valid at N; the latest one shows the
 * live instance details, an older one the details recorded with its states.
 */
import { logIndexes } from '../log/log.js';
import type { z } from 'zod';
import type { DiffArtifact, Snapshot, SnapshotListItem } from '../../../../shared/contract/snapshots.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import { policyDump, type ParsedPolicy } from '../../domain/policy.js';
import { complianceState } from '../../domain/compliance-state.js';
import { annotate, type InstanceDetail } from '../../domain/snapshot-diff.js';
import {
  intervalIndex,
  parseInterval,
  parseSnapshotExpression,
  resolveSnapshotExpression,
  splitSnappish,
} from '../../domain/snapshot-expressions.js';
import type { Db } from '../../storage/database.js';
import { deploymentsRepository } from '../../storage/repositories/deployments.js';
import { environmentsRepository, type EnvironmentRow } from '../../storage/repositories/environments.js';
import { policiesRepository } from '../../storage/repositories/policies.js';
import { runtimeRepository, type StateWithVerdict } from '../../storage/repositories/runtime.js';
import { snapshotsRepository, type SnapshotRow } from '../../storage/repositories/snapshots.js';
import { getEnvironment } from './environments.js';
import { snapshotUrls } from '../scope/links.js';
import type { OrgRef, OrgScope } from '../scope/org-scope.js';

type SnapshotBody = z.infer<typeof Snapshot>;

function outOfRange(org: OrgRef, env: EnvironmentRow, expression: string, index: number): NotFoundError {
  return new NotFoundError(
    `Org: '${org.name}'. Snapshot '${env.name}${expression.startsWith('#') || expression.startsWith('~') || expression.startsWith('@') ? '' : '#'}${expression}' resolves to '${env.name}#${index}'. len(snapshots) == ${env.latest_snapshot}. Indexes are 1-based`,
  );
}

/** Resolves an expression of one environment to a snapshot number, or throws 400/404. */
export async function resolveIndex(
  scope: OrgScope,
  env: EnvironmentRow,
  expression: string,
): Promise<number> {
  const { db, org, now } = scope;
  const parsed = parseSnapshotExpression(expression);
  if (!parsed.ok) {
    throw new BadRequestError(parsed.reason, { 'path.snapshot_expression': parsed.reason });
  }
  const resolved = resolveSnapshotExpression(parsed.value, env.latest_snapshot, now.getTime());
  let index: number | undefined;
  if ('index' in resolved) {
    index = resolved.index;
  } else {
    index = await snapshotsRepository.indexAt(db, org.id, env.id, new Date(resolved.atMs));
  }
  if (index === undefined || index < 1 || index > env.latest_snapshot) {
    throw outOfRange(org, env, expression, index ?? 0);
  }
  return index;
}

function podsOf(type: string, detail: readonly InstanceDetail[]) {
  if (type !== 'K8S') {
    return null;
  }
  return Object.fromEntries(
    detail.map((d) => [
      d.podName ?? '',
      { namespace: d.namespace ?? '', creationTimestamp: d.creationTimestamp, owners: d.owners ?? [] },
    ]),
  );
}

function contextOf(type: string, detail: readonly InstanceDetail[]): Record<string, unknown> {
  const first = detail[0];
  if (!first) {
    return {};
  }
  if (type === 'ECS') {
    return {
      ecs_context: {
        task_arn: first.taskArn ?? null,
        cluster_name: first.cluster_name ?? null,
        service_name: first.service_name ?? null,
      },
    };
  }
  if (type === 'azure-apps') {
    return { azure_context: { app_name: first.app_name, app_kind: first.app_kind } };
  }
  if (type === 'cloud-run') {
    return {
      cloud_run_context: {
        kind: first.kind,
        serviceName: first.serviceName,
        revisionName: first.revisionName,
        jobName: first.jobName,
      },
    };
  }
  return {};
}

type Views = ReturnType<typeof annotate<StateWithVerdict>>[];

/** The artifacts of a snapshot, and how many running ones are compliant, non-compliant, unknown. */
function snapshotArtifacts(
  type: string,
  views: Views,
  live: Map<string, { detail: InstanceDetail[] }> | undefined,
  recorded: Map<string, InstanceDetail[]>,
  commitLeadTimes: ReadonlyMap<string, number | null>,
) {
  const counts = { true: 0, false: 0, null: 0 };
  const artifacts = views.map(({ state: s, exited, annotation }) => {
    const detail: InstanceDetail[] =
      (exited ? undefined : live?.get(s.fingerprint)?.detail) ?? recorded.get(s.detail_hash) ?? [];
    // The reference service's commit_lead_time per flow: its first run here minus its commit's time.
    const flows = s.provenance.map((f) => ({
      ...f,
      commit_lead_time: commitLeadTimes.get(f.artifact_id) ?? null,
    }));
    const primary = flows[0];
    if (!exited) {
      counts[s.compliant === null ? 'null' : s.compliant ? 'true' : 'false'] += 1;
    }
    return {
      name: s.name,
      fingerprint: s.fingerprint,
      compliant: s.compliant,
      deployments: [] as number[],
      policy_decisions: s.decisions,
      reasons_for_incompliance: s.reasons,
      creationTimestamp: exited && detail.length === 0 ? [] : detail.map((d) => d.creationTimestamp),
      pods: podsOf(type, detail),
      annotation,
      flow_name: primary?.flow_name ?? '',
      git_commit: primary?.git_commit ?? '',
      commit_url: primary?.commit_url ?? '',
      html_url: primary?.html_url ?? null,
      flow_html_url: primary?.flow_html_url ?? null,
      flows,
      allowlisted: s.allowlisted,
      running_since_snapshot: s.run_start,
      ...contextOf(type, detail),
    };
  });
  return { artifacts, counts };
}

/** The policies a snapshot applied, with their text and the running artifacts each failed. */
async function appliedPolicies(
  db: Db,
  orgId: string,
  snapshot: SnapshotRow,
  artifacts: ReturnType<typeof snapshotArtifacts>['artifacts'],
) {
  const applied = snapshot.applied_policies;
  const versions = await Promise.all(
    applied.map((p) => policiesRepository.version(db, orgId, p.id, p.version)),
  );
  return applied.map((p, i) => ({
    id: p.id,
    name: p.name,
    version: p.version,
    policy_dump: versions[i] ? policyDump(versions[i].parsed as ParsedPolicy) : null,
    failing_artifacts: artifacts
      .filter(
        (a) =>
          a.annotation.now > 0 &&
          a.policy_decisions.some((d) => d.policy_name === p.name && d.status === 'NON-COMPLIANT'),
      )
      .map((a) => a.fingerprint),
  }));
}

/** `GET /snapshots/{org}/{env}/{expression}`. */
export async function readSnapshot(
  scope: OrgScope,
  envName: string,
  expression: string,
): Promise<SnapshotBody> {
  const { db, org, publicUrl } = scope;
  const env = await getEnvironment(scope, envName);
  if (env.type === 'logical') {
    throw new BadRequestError(
      `Environment '${envName}' is logical and has no snapshots of its own; read its physical environments`,
    );
  }
  const index = await resolveIndex(scope, env, expression);
  const snapshot = await snapshotsRepository.snapshot(db, org.id, env.id, index);
  if (!snapshot) {
    throw outOfRange(org, env, expression, index);
  }
  const next =
    index < env.latest_snapshot
      ? await snapshotsRepository.snapshot(db, org.id, env.id, index + 1)
      : undefined;
  const isLatest = index === env.latest_snapshot;
  // The latest snapshot shows the instances as they run now; older ones what was recorded then.
  // Independent reads: on PostgreSQL they run side by side.
  const recordId = `${env.id}:${index}`;
  const [states, live, recorded, logIndex] = await Promise.all([
    snapshotsRepository.statesAt(db, org.id, env.id, index),
    isLatest ? runtimeRepository.liveDetails(db, org.id, env.id) : undefined,
    snapshotsRepository.detailsAt(db, org.id, env.id, index, isLatest),
    logIndexes(db, org.id, 'snapshot', [recordId]),
  ]);
  const views = states.map((s) => annotate(s, index));
  const leadTimes = await deploymentsRepository.leadTimesOf(
    db,
    org.id,
    states.flatMap((s) => s.provenance.map((p) => p.artifact_id)),
  );
  const commitLeadTimes = new Map(
    leadTimes.filter((l) => l.environment_id === env.id).map((l) => [l.artifact_id, l.commit_lead_time]),
  );
  const { artifacts, counts } = snapshotArtifacts(env.type, views, live, recorded, commitLeadTimes);
  return {
    index,
    is_latest: isLatest,
    log_index: logIndex(recordId),
    // Retention may have removed the next one: the kept snapshot remembers when it was taken.
    next_snapshot_timestamp: next
      ? epochSeconds(next.created_at)
      : snapshot.superseded_at
        ? epochSeconds(snapshot.superseded_at)
        : null,
    artifact_compliance_count: counts,
    timestamp: epochSeconds(snapshot.created_at),
    type: env.type,
    compliant: snapshot.compliant === true,
    compliance_state: complianceState(snapshot.compliant),
    html_url: snapshotUrls({ publicUrl, org }, env.name, index).html_url,
    user_name: snapshot.reported_by,
    summary: { started: snapshot.started, changed: snapshot.changed, exited: snapshot.exited },
    artifacts,
    applied_policies: await appliedPolicies(db, org.id, snapshot, artifacts),
  };
}

/** A query flag: `true` in any case. */
export const isTrue = (v: string | undefined) => v !== undefined && v.toLowerCase() === 'true';

/** `GET /snapshots/{org}/{env}`: newest first unless reversed; `to` is 0 for the current one. */
export async function listSnapshots(
  scope: OrgScope,
  envName: string,
  query: { page: number; per_page: number; interval?: string | undefined; reverse?: string | undefined },
): Promise<Array<z.infer<typeof SnapshotListItem>>> {
  const { db, org, now } = scope;
  const env = await getEnvironment(scope, envName);
  if (env.latest_snapshot === 0) {
    return [];
  }
  const interval = parseInterval(query.interval);
  if (!interval.ok) {
    throw new BadRequestError(interval.reason, { 'query.interval': interval.reason });
  }
  let lo = 1;
  let hi = env.latest_snapshot;
  if (interval.value) {
    lo = Math.max(1, intervalIndex(interval.value.from, env.latest_snapshot));
    hi = Math.min(env.latest_snapshot, intervalIndex(interval.value.to, env.latest_snapshot));
  }
  if (lo > hi) {
    return [];
  }
  const ascending = isTrue(query.reverse);
  const skip = (query.page - 1) * query.per_page;
  const from = ascending ? lo + skip : hi - skip - query.per_page + 1;
  const to = ascending ? lo + skip + query.per_page - 1 : hi - skip;
  const rows = await snapshotsRepository.snapshotsBetween(
    db,
    org.id,
    env.id,
    Math.max(lo, from),
    Math.min(hi, to + 1),
  );
  const byIndex = new Map(rows.map((r) => [r.index, r]));
  const items: Array<z.infer<typeof SnapshotListItem>> = [];
  for (let i = Math.max(lo, from); i <= Math.min(hi, to); i++) {
    const r = byIndex.get(i);
    if (!r) {
      continue;
    }
    const nextRow = byIndex.get(i + 1);
    const start = epochSeconds(r.created_at);
    const end = nextRow ? epochSeconds(nextRow.created_at) : 0;
    items.push({
      index: i,
      from: start,
      to: end,
      duration: (end === 0 ? now.getTime() / 1000 : end) - start,
      compliant: r.compliant === true,
      compliance_state: complianceState(r.compliant),
      summary: { started: r.started, changed: r.changed, exited: r.exited },
    });
  }
  return ascending ? items : items.reverse();
}

async function resolveSnappish(scope: OrgScope, text: string, field: string) {
  const { db, org } = scope;
  // A name may itself contain `~`: the whole text as a name wins.
  let env = await environmentsRepository.findByName(db, org.id, text);
  let expression = '-1';
  if (!env) {
    const split = splitSnappish(text);
    env = await environmentsRepository.findByName(db, org.id, split.environment);
    expression = split.expression;
  }
  if (!env) {
    throw new BadRequestError(`Bad snappish ${text}`, {
      [`query.${field}`]: `no environment named in '${text}'`,
    });
  }
  const index = await resolveIndex(scope, env, expression);
  const states = (await snapshotsRepository.statesAt(db, org.id, env.id, index)).filter(
    (s) => !(s.exited && s.to_index === index),
  );
  return { env, index, states };
}

/** `GET /env-diff/{org}`: only in S1, only in S2, count changed, unchanged (by fingerprint). */
export async function diffSnapshots(scope: OrgScope, snappish1: string, snappish2: string) {
  const { db, org } = scope;
  const s1 = await resolveSnappish(scope, snappish1, 'snappish1');
  const s2 = await resolveSnappish(scope, snappish2, 'snappish2');
  const one = new Map(s1.states.map((s) => [s.fingerprint, s]));
  const two = new Map(s2.states.map((s) => [s.fingerprint, s]));
  const details = await snapshotsRepository.details(
    db,
    org.id,
    [...s1.states, ...s2.states].map((s) => s.detail_hash),
  );
  const item = (s: StateWithVerdict, c1: number, c2: number): z.infer<typeof DiffArtifact> => {
    const d = details.get(s.detail_hash) ?? [];
    const flows = s.provenance;
    return {
      fingerprint: s.fingerprint,
      name: s.name,
      flow: flows[0]?.flow_name ?? '',
      commit_url: flows[0]?.commit_url ?? '',
      most_recent_timestamp: d.reduce((m, x) => Math.max(m, x.creationTimestamp), 0),
      instance_count: s.instance_count,
      s1_instance_count: c1,
      s2_instance_count: c2,
      pods: d.map((x) => x.podName).filter((p): p is string => p !== undefined),
    };
  };
  const onlyOne = s1.states.filter((s) => !two.has(s.fingerprint)).map((s) => item(s, s.instance_count, 0));
  const onlyTwo = s2.states.filter((s) => !one.has(s.fingerprint)).map((s) => item(s, 0, s.instance_count));
  const both = s2.states.filter((s) => one.has(s.fingerprint));
  const id = (x: { env: EnvironmentRow; index: number }) => `${x.env.name}#${x.index}`;
  return {
    snappish1: { snapshot_id: id(s1), artifacts: onlyOne },
    snappish2: { snapshot_id: id(s2), artifacts: onlyTwo },
    changed: {
      snapshot_id: null,
      artifacts: both
        .filter((s) => one.get(s.fingerprint)!.instance_count !== s.instance_count)
        .map((s) => item(s, one.get(s.fingerprint)!.instance_count, s.instance_count)),
    },
    'not-changed': {
      snapshot_id: null,
      artifacts: both
        .filter((s) => one.get(s.fingerprint)!.instance_count === s.instance_count)
        .map((s) => item(s, s.instance_count, s.instance_count)),
    },
  };
}
