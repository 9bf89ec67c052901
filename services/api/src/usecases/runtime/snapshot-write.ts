/**
 * Writes a planned snapshot (semantics.md sections 5 and 7): the runtime states and the snapshot
 * row, the runtime events onto the trails that produced what started or exited, and the
 * notifications of its triggers, in the caller's transaction; and announces, after the commit,
 * what a runtime change wrote.
 */
import type { PolicyVersion } from '../../domain/policy-evaluation.js';
import { snapshotNotifications } from '../../domain/snapshot-notifications.js';
import type { CurrentState, Exit, StatePlan } from '../../domain/snapshot-plan.js';
import { environmentsRepository, type EnvironmentRow } from '../../storage/repositories/environments.js';
import { runtimeRepository, type NewVerdict } from '../../storage/repositories/runtime.js';
import type { AppliedPolicyRef } from '../../storage/tables/runtime.js';
import { snapshotUrls } from '../scope/links.js';
import { enqueueNotifications } from '../notifications/notifications.js';
import type { CommitEffect } from '../scope/domain-events.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { ProvenanceRecord, RuntimeEvent } from '../scope/provenance.js';
import { catchUpDeliveries, deploymentEffects, recordSnapshotDelivery } from './delivery-deferred.js';
import type { DeploymentMade } from './delivery-write.js';

/** A snapshot one call made. */
export interface SnapshotMade {
  environment: string;
  index: number;
  cause: string;
  compliant: boolean | null;
}

export interface ReportOutcome {
  snapshot: SnapshotMade | null;
  /** Notification rows written (the notifier may be woken). */
  notifications: number;
  /** Deployments the snapshot recorded. */
  deployments?: DeploymentMade[];
  /** Whether the snapshot's deployments are to be recorded after its transaction. */
  deferredDeployments?: boolean;
}

/** Announces, once their transaction has committed, what these outcomes wrote. */
export function announce(
  scope: Pick<OrgScope, 'events'>,
  ...outcomes: ReadonlyArray<ReportOutcome | null>
): void {
  const effects: CommitEffect[] = [];
  for (const o of outcomes) {
    if (o?.snapshot) {
      effects.push({ type: 'snapshot.created', cause: o.snapshot.cause });
    }
    if (o && o.notifications > 0) {
      effects.push({ type: 'notifications.enqueued', count: o.notifications });
    }
    effects.push(...deploymentEffects(o?.deployments ?? []));
    if (o?.deferredDeployments) {
      effects.push({ type: 'deployments.deferred' });
    }
  }
  scope.events.committed(effects);
}

export const policyRefs = (policies: readonly PolicyVersion[]): AppliedPolicyRef[] =>
  policies.map((p) => ({ id: p.id, name: p.name, version: p.version }));

export interface SnapshotWrite extends Omit<StatePlan, 'compliance' | 'exits'> {
  env: EnvironmentRow;
  index: number;
  cause: string;
  reportedBy: string | null;
  exits: Exit[];
  verdicts: NewVerdict[];
  policies: PolicyVersion[];
  complianceAfter: boolean | null;
  artifactCount: number;
  /** Provenance records of the fingerprints that started (for events and ON_RELEASE). */
  startedRecords: Map<string, ProvenanceRecord[]>;
  /** What ran just before the snapshot (what a deployment replaced). */
  before: readonly CurrentState[];
}

/** Writes the states and the snapshot row, and moves the environment to it. */
async function writeStates(scope: OrgScope, plan: SnapshotWrite): Promise<void> {
  const { db, org, now } = scope;
  const { env, index } = plan;
  await runtimeRepository.insertDetails(db, org.id, plan.details);
  await runtimeRepository.insertVerdicts(db, org.id, plan.verdicts);
  await runtimeRepository.closeExits(db, org.id, env.id, plan.exits, index);
  await runtimeRepository.closeStates(db, org.id, env.id, plan.replaced, index);
  await runtimeRepository.insertStates(db, org.id, env.id, plan.newStates);
  const started = plan.newStates.filter((s) => s.change === 'started');
  const changed = plan.newStates.filter((s) => s.change !== 'started' && s.change !== 'unchanged');
  await runtimeRepository.insertSnapshot(db, {
    org_id: org.id,
    environment_id: env.id,
    index,
    created_at: now,
    compliant: plan.complianceAfter,
    started: started.length,
    changed: changed.length,
    exited: plan.exits.length,
    artifact_count: plan.artifactCount,
    cause: plan.cause,
    applied_policies: policyRefs(plan.policies),
    reported_by: plan.reportedBy,
  });
  await environmentsRepository.update(db, org.id, env.id, {
    latest_snapshot: index,
    compliant: plan.complianceAfter,
    last_changed_at: now,
  });
}

/** Writes a planned snapshot, its runtime events onto trails, and its notifications. */
export async function writeSnapshot(scope: OrgScope, plan: SnapshotWrite): Promise<ReportOutcome> {
  const { db, org, now, publicUrl } = scope;
  const { env, index } = plan;
  const caughtUp = await catchUpDeliveries(db, org, env);
  await writeStates(scope, plan);
  scope.phases?.lap('states');
  const delivery = await recordSnapshotDelivery(scope, {
    env,
    index,
    before: plan.before,
    newStates: plan.newStates,
    verdicts: plan.verdicts,
    startedRecords: plan.startedRecords,
    complianceAfter: plan.complianceAfter,
  });
  scope.phases?.lap('delivery');
  const started = plan.newStates.filter((s) => s.change === 'started');
  const at = { environmentName: env.name, snapshotIndex: index, at: now };
  const runtimeEvents: RuntimeEvent[] = [
    ...started.map((s) => ({
      fingerprint: s.fingerprint,
      type: 'artifact_started_running' as const,
      ...at,
      instanceCount: s.instance_count,
    })),
    ...plan.exits.map((e) => ({
      fingerprint: e.fingerprint,
      type: 'artifact_stopped_running' as const,
      ...at,
      instanceCount: 0,
    })),
  ];
  if (runtimeEvents.length > 0) {
    await scope.services.provenance.recordRuntimeEvents(db, org.id, runtimeEvents);
  }
  // Built only when the org has actions to match them against.
  const events = () =>
    snapshotNotifications({
      base: { org: org.name, timestamp: now.getTime() / 1000, environment: env.name },
      snapshot: { index, ...snapshotUrls({ publicUrl, org }, env.name, index) },
      compliance: { before: env.compliant, after: plan.complianceAfter },
      started,
      exits: plan.exits,
      verdicts: plan.verdicts,
      startedRecords: plan.startedRecords,
    });
  const notifications = await enqueueNotifications(db, org.id, events, now);
  scope.phases?.lap('events');
  return {
    snapshot: { environment: env.name, index, cause: plan.cause, compliant: plan.complianceAfter },
    notifications,
    deployments: [...caughtUp, ...delivery.made],
    deferredDeployments: delivery.deferred,
  };
}
