/**
 * Deployments recorded after their snapshot's transaction. A snapshot that starts at least
 * VERITY_DEPLOYMENTS_DEFER_FROM fingerprints (a rollout of every image of a large cluster) records, in
 * its own transaction, everything delivery insight needs but its deployments: the lead times, the
 * stretches of non-compliance, and a row in `deployments_deferred`. Its deployments, and the marks
 * of those that broke compliance, are then recorded from the snapshot's history by the same code
 * as the backfill (delivery-backfill.ts deliverSnapshot), so they are the ones the snapshot would
 * have recorded:
 * - by the worker (`recordDeferredDeployments`), woken when such a snapshot commits, in a
 *   transaction of its own with the environment locked;
 * - or, when the environment's next snapshot or re-evaluation comes first, by that write, before
 *   anything else it records (`catchUpDeliveries`), so deployments are always recorded in the order
 *   of the snapshots (a rollback is found against what was recorded before it).
 * The report answers without the deployments' reads, planning and rows, which for 50,000 pods was
 * a quarter of its time; delivery insight shows them a few seconds later.
 */
import type { Db } from '../../storage/database.js';
import { deploymentBackfillRepository } from '../../storage/repositories/deployment-backfill.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import type { CommitEffect } from '../scope/domain-events.js';
import type { AppScope, OrgRef, OrgScope } from '../scope/org-scope.js';
import { deliverSnapshot } from './delivery-backfill.js';
import {
  deploymentsMade,
  recordDelivery,
  type DeliveryInput,
  type DeploymentMade,
} from './delivery-write.js';

/** Environments the worker goes through in one pass. */
const PASS_ENVIRONMENTS = 100;

/**
 * Records what a snapshot means for delivery, its deployments now or, for a snapshot that
 * starts VERITY_DEPLOYMENTS_DEFER_FROM fingerprints or more, after its transaction; returns the
 * deployments recorded now, and whether they were deferred.
 */
export async function recordSnapshotDelivery(
  scope: OrgScope,
  input: DeliveryInput,
): Promise<{ made: DeploymentMade[]; deferred: boolean }> {
  const started = input.newStates.filter((s) => s.change === 'started').length;
  if (started < scope.services.deploymentsDeferFrom) {
    return { made: await recordDelivery(scope, input), deferred: false };
  }
  const made = await recordDelivery(scope, input, { deployments: false });
  await deploymentBackfillRepository.defer(scope.db, {
    org_id: scope.org.id,
    environment_id: input.env.id,
    snapshot_index: input.index,
    compliant_before: input.env.compliant,
    created_at: scope.now,
  });
  return { made, deferred: true };
}

/**
 * Records the deployments of the environment's deferred snapshots, oldest first, in the caller's
 * transaction with the environment locked; returns them.
 */
export async function catchUpDeliveries(
  tx: Db,
  org: OrgRef,
  env: { id: string; name: string },
): Promise<DeploymentMade[]> {
  const made: DeploymentMade[] = [];
  // Bounded by the environment's deferred snapshots: each is removed once recorded.
  for (const d of await deploymentBackfillRepository.deferred(tx, org.id, env.id)) {
    const [snap] = await deploymentBackfillRepository.snapshotPage(
      tx,
      org.id,
      env.id,
      d.snapshot_index - 1,
      1,
    );
    // A snapshot retention removed has nothing left to record.
    if (snap?.index === d.snapshot_index) {
      const ranBefore = await deploymentBackfillRepository.statesBefore(tx, org.id, env.id, snap.index);
      const rows = await deliverSnapshot(tx, org, env, snap, {
        compliantBefore: d.compliant_before,
        ranBefore,
        linked: false,
      });
      // Up to a report's worth of rows: appended one by one, not spread as arguments.
      for (const m of deploymentsMade(org.name, env.name, rows)) {
        made.push(m);
      }
    }
    await deploymentBackfillRepository.recorded(tx, org.id, env.id, d.snapshot_index);
  }
  return made;
}

/** What recorded deployments mean once committed (metrics). */
export function deploymentEffects(made: readonly DeploymentMade[]): CommitEffect[] {
  return made.map((d) => ({
    type: 'deployment.recorded',
    org: d.org,
    environment: d.environment,
    leadTime: d.changeLeadTime,
  }));
}

/**
 * The worker's pass: the deployments of deferred snapshots, environment by environment, each in a
 * transaction of its own with the environment locked (a replica that comes second finds nothing
 * left). Returns how many environments it went through.
 */
export async function recordDeferredDeployments(app: Pick<AppScope, 'db' | 'events'>): Promise<number> {
  const environments = await deploymentBackfillRepository.deferredEnvironments(app.db, PASS_ENVIRONMENTS);
  for (const e of environments) {
    const org = { id: e.org_id, name: e.org_name };
    const made = await app.db.transaction().execute(async (tx) => {
      const locked = await environmentsRepository.lockById(tx, org.id, e.id);
      return locked ? catchUpDeliveries(tx, org, { id: e.id, name: e.name }) : [];
    });
    app.events.committed(deploymentEffects(made));
  }
  return environments.length;
}
