/**
 * The retention job: removes, in each organization that set retention classes, what has passed
 * its period as of a time, never what a legal hold covers. Four passes: trails (with their
 * attestations, artifacts, events and facts, and the evidence files no remaining attestation
 * names), evidence files whose every naming attestation has passed its file period, snapshots
 * (never an environment's latest; states only removed snapshots read go with them, so every
 * remaining snapshot reads as before), and audit log entries.
 *
 * Each batch is one short transaction over at most `batchSize` records, selected with
 * `SKIP LOCKED` (replicas running the job side by side take different rows; an ingest
 * transaction holding a trail is passed over, not waited for), followed by a pause that leaves
 * the database to ingest. Each batch that removed something writes one disposition record and
 * one audit entry in its transaction. A dry run reads the same batches and removes nothing.
 */
import {
  appliedPeriod,
  heldRangesOfAuditLog,
  heldRangesOfEnvironment,
  heldRangesOfFlow,
  type HoldScope,
  type RetentionClasses,
} from '../../domain/retention.js';
import { retentionRepository } from '../../storage/repositories/retention.js';
import type { OrgRetentionReport, OrgRun, RetentionReport, RetentionRunOptions } from './retention-batch.js';
import { removeFiles, removeTrails } from './retention-evidence.js';
import { removeAuditEntries, removeSnapshots } from './retention-runtime.js';

export type {
  OrgRetentionReport,
  RetentionProgress,
  RetentionReport,
  RetentionRunOptions,
} from './retention-batch.js';

/** Runs the job once over every organization with retention classes (or the one named). */
export async function runRetention(o: RetentionRunOptions): Promise<RetentionReport> {
  const asOf = o.asOf ?? o.clock();
  const orgs = (await retentionRepository.orgsWithSettings(o.db)).filter((x) => !o.org || x.name === o.org);
  const report: RetentionReport = { as_of: asOf, dry_run: o.dryRun === true, orgs: [] };
  for (const org of orgs) {
    if (o.stopped?.()) {
      break;
    }
    report.orgs.push(await runOrg(o, org, asOf));
  }
  return report;
}

async function runOrg(
  o: RetentionRunOptions,
  org: { id: string; name: string },
  asOf: Date,
): Promise<OrgRetentionReport> {
  const settings = await retentionRepository.settings(o.db, org.id);
  const report: OrgRetentionReport = {
    org: org.name,
    trails: [],
    attestations: 0,
    evidence_files: [],
    snapshots: [],
    audit_log: 0,
  };
  if (!settings) {
    return report;
  }
  const classes: RetentionClasses = settings.settings;
  const holds: HoldScope[] = (await retentionRepository.holds(o.db, org.id)).map((h) => ({
    flows: h.flows,
    environments: h.environments,
    from: h.from_at,
    to: h.to_at,
  }));
  const run: OrgRun = { o, org, asOf, report };
  const flows = await o.db
    .selectFrom('flows')
    .select(['id', 'name'])
    .where('org_id', '=', org.id)
    .orderBy('name')
    .execute();
  for (const flow of flows) {
    const applied = appliedPeriod(classes, 'trails_days', { kind: 'flow', name: flow.name }, o.minimum);
    if (applied) {
      await removeTrails(run, flow, applied, heldRangesOfFlow(holds, flow.name));
    }
  }
  if (!o.dryRun && report.trails.length > 0) {
    await retentionRepository.unlinkRemovedDecisions(o.db, org.id);
  }
  await removeFiles(run, classes, holds, flows);
  const envs = await o.db
    .selectFrom('environments')
    .select(['id', 'name', 'latest_snapshot'])
    .where('org_id', '=', org.id)
    .orderBy('name')
    .execute();
  for (const env of envs) {
    const applied = appliedPeriod(
      classes,
      'snapshots_days',
      { kind: 'environment', name: env.name },
      o.minimum,
    );
    if (applied) {
      await removeSnapshots(run, env, applied, heldRangesOfEnvironment(holds, env.name));
    }
  }
  const audit = appliedPeriod(classes, 'audit_log_days', null, o.minimum);
  if (audit) {
    await removeAuditEntries(run, audit, heldRangesOfAuditLog(holds));
  }
  return report;
}
