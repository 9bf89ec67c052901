/**
 * The runtime's writes: reports become live state and, when something started or exited,
 * a snapshot (semantics.md section 5, spec rules 2-4); re-evaluation turns changes of provenance,
 * compliance, policies or allowlists into snapshots (section 6); every snapshot writes the
 * runtime events onto trails and the notifications of its triggers (section 7) in the same
 * transaction. Numbering is gap-free: each environment's row is locked while it changes.
 * Each use case reads, plans (domain/snapshot-plan.ts, domain/snapshot-notifications.ts), writes.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { sha256 } from '../../sha256.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import {
  environmentCompliance,
  evaluateArtifactAgainstPolicies,
  type PolicyVersion,
} from '../../domain/policy-evaluation.js';
import type { ParsedPolicy } from '../../domain/policy.js';
import { diffRuntimeSteps, reportUnchanged, SLICE, type ReportEntry } from '../../domain/snapshot-diff.js';
import { scaledNotifications } from '../../domain/snapshot-notifications.js';
import {
  planReevaluation,
  planReportSteps,
  samePolicies,
  type ReportPlanInput,
} from '../../domain/snapshot-plan.js';
import { inSlices, mapSteps } from '../../slices.js';
import type { Db } from '../../storage/database.js';
import { allowlistsRepository } from '../../storage/repositories/allowlists.js';
import { environmentsRepository, type EnvironmentRow } from '../../storage/repositories/environments.js';
import { policiesRepository } from '../../storage/repositories/policies.js';
import { runtimeRepository, type NewVerdict } from '../../storage/repositories/runtime.js';
import { snapshotsRepository } from '../../storage/repositories/snapshots.js';
import type { ProvenanceEntry } from '../../storage/tables/runtime.js';
import { flowHtmlUrl } from '../scope/links.js';
import { catchUpDeliveries } from './delivery-deferred.js';
import { recordLinkedRuns } from './delivery-write.js';
import { groupAndHash } from './report-grouping.js';
import { policyRefs, writeSnapshot, type ReportOutcome } from './snapshot-write.js';
import { enqueueNotifications } from '../notifications/notifications.js';
import { inTransaction, type OrgRef, type OrgScope } from '../scope/org-scope.js';
import type { ProvenanceRecord, RuntimeEvent } from '../scope/provenance.js';

/** The frozen provenance of a fingerprint: one entry per flow it was reported in. */
function provenanceEntries(records: readonly ProvenanceRecord[], publicUrl: string, org: OrgRef) {
  return records.map((r): ProvenanceEntry => ({
    flow_name: r.flowName,
    trail_name: r.trailName,
    template_reference_name: r.templateReferenceName,
    artifact_id: r.artifactId,
    artifact_name: r.artifactName,
    git_commit: r.gitCommit ?? '',
    git_commit_info: r.gitCommitInfo,
    commit_url: r.commitUrl ?? '',
    build_url: r.buildUrl,
    html_url: r.htmlUrl,
    flow_html_url: flowHtmlUrl({ publicUrl, org }, r.flowName),
    artifact_compliance_in_flow: r.artifactCompliance === 'COMPLIANT',
    flow_reasons_for_non_compliance: r.nonComplianceReasons,
    artifact_status: r.artifactCompliance,
    trail_status: r.trailCompliance,
  }));
}

export async function attachedPolicies(db: Db, orgId: string, envId: string): Promise<PolicyVersion[]> {
  const rows = await policiesRepository.attachedLatest(db, orgId, envId);
  return rows.map((r) => ({ id: r.id, name: r.name, version: r.version, policy: r.parsed as ParsedPolicy }));
}

interface Evaluated {
  verdict: NewVerdict;
  records: ProvenanceRecord[];
}

async function evaluate(
  scope: OrgScope,
  artifacts: ReadonlyArray<{ fingerprint: string; name: string }>,
  policies: readonly PolicyVersion[],
  allowlist: ReadonlySet<string>,
): Promise<Map<string, Evaluated>> {
  const out = new Map<string, Evaluated>();
  if (artifacts.length === 0) {
    return out;
  }
  const { db, org, publicUrl } = scope;
  const found = await scope.services.provenance.find(
    db,
    org.id,
    artifacts.map((a) => a.fingerprint),
  );
  // Bounded by one report's fingerprints; the event loop turns after every SLICE of them.
  for (const a of artifacts) {
    if (out.size % SLICE === SLICE - 1) {
      await turn();
    }
    const records = found.get(a.fingerprint) ?? [];
    const v = evaluateArtifactAgainstPolicies(a, records, policies, allowlist.has(a.fingerprint));
    const body = {
      compliant: v.compliant,
      provenance: provenanceEntries(records, publicUrl, org),
      decisions: v.decisions,
      reasons: v.reasons,
      allowlisted: v.allowlisted,
    };
    out.set(a.fingerprint, { verdict: { hash: sha256(JSON.stringify(body)), ...body }, records });
  }
  return out;
}

/** Why a report is refused before anything is read from it. */
function checkReportable(
  env: EnvironmentRow | undefined,
  org: OrgRef,
  envName: string,
  type: string,
): EnvironmentRow {
  if (!env) {
    throw new NotFoundError(`Environment named '${envName}' does not exist for organization '${org.name}'`);
  }
  if (env.type === 'logical') {
    throw new BadRequestError(
      `Environment '${envName}' is logical: it takes no reports; report to its physical environments`,
    );
  }
  if (env.archived) {
    throw new BadRequestError(`Environment '${envName}' is archived and takes no reports`);
  }
  if (env.type !== type) {
    throw new BadRequestError(`Environment '${envName}' is of type ${env.type}; this report is for ${type}`, {
      type: `expected ${env.type}`,
    });
  }
  return env;
}

export interface ReportInput {
  envName: string;
  type: string;
  entries: readonly ReportEntry[];
  /** sha256 of the request bytes, remembered so the same bytes next time skip parsing. */
  rawHash?: string;
}

/**
 * Applies a report (the full current state) to an environment: live state always, a snapshot
 * only when a fingerprint started or exited, or for the environment's first report. The
 * snapshot is reported by the scope's actor.
 */
export async function ingestReport(scope: OrgScope, input: ReportInput): Promise<ReportOutcome> {
  const { org, now } = scope;
  const { grouped, reportHash } = await groupAndHash(input.entries);
  scope.phases?.lap('group');
  return scope.db.transaction().execute(async (tx) => {
    const env = checkReportable(
      await environmentsRepository.lockByName(tx, org.id, input.envName),
      org,
      input.envName,
      input.type,
    );
    scope.phases?.lap('lock');
    // Rule 2 at once: the same report as last time changes nothing but the report time.
    if (reportUnchanged({ key: env.last_report_hash, latestSnapshot: env.latest_snapshot }, reportHash)) {
      await environmentsRepository.update(tx, org.id, env.id, {
        last_reported_at: now,
        last_report_raw_hash: input.rawHash ?? null,
      });
      return { snapshot: null, notifications: 0 };
    }
    return applyReport(inTransaction(scope, tx), env, grouped, reportHash);
  });
}

type Grouped = ReportPlanInput['started'][number];

/** Brings the live state of the locked environment to the report; returns how it changed. */
async function updateLive(
  tx: Db,
  orgId: string,
  env: EnvironmentRow,
  grouped: readonly Grouped[],
  reportHash: string,
  now: Date,
) {
  const live = await runtimeRepository.live(tx, orgId, env.id);
  const diff = await inSlices(
    diffRuntimeSteps(
      live.map((l) => ({
        fingerprint: l.fingerprint,
        instanceCount: l.instance_count,
        detailKey: l.detail_hash,
      })),
      grouped.map((a) => ({
        fingerprint: a.fingerprint,
        instanceCount: a.instanceCount,
        detailKey: a.detailHash,
      })),
    ),
  );
  const reported = new Map(grouped.map((a) => [a.fingerprint, a]));
  const liveRow = (fp: string) => {
    const a = reported.get(fp)!;
    return {
      fingerprint: fp,
      instance_count: a.instanceCount,
      detail_hash: a.detailHash,
      // The instances' canonical JSON text, already made for the hash.
      detail: a.detailKey,
    };
  };
  // What started is written with its new state, and what exited is closed with its state, in the
  // snapshot either makes; only counts and details that moved are written here.
  const moved = [...diff.scaled, ...diff.redetailed];
  await runtimeRepository.updateLive(tx, orgId, env.id, await inSlices(mapSteps(moved, liveRow)));
  await environmentsRepository.update(tx, orgId, env.id, {
    last_reported_at: now,
    last_report_hash: reportHash,
  });
  return { live, diff, reported };
}

/** Applies a report that differs from the last one to the locked environment. */
async function applyReport(
  scope: OrgScope,
  env: EnvironmentRow,
  grouped: readonly Grouped[],
  reportHash: string,
): Promise<ReportOutcome> {
  const { db: tx, org, now } = scope;
  const { live, diff, reported } = await updateLive(tx, org.id, env, grouped, reportHash, now);
  scope.phases?.lap('live');
  if (!diff.snapshotDue && env.latest_snapshot > 0) {
    // Rules 3 and 4: no snapshot; scaling is still worth a notification.
    const base = { org: org.name, timestamp: now.getTime() / 1000, environment: env.name };
    const was = new Map(live.map((l) => [l.fingerprint, l.instance_count]));
    const scaled = diff.scaled.map((fp) => ({
      name: reported.get(fp)!.name,
      fingerprint: fp,
      was: was.get(fp)!,
      now: reported.get(fp)!.instanceCount,
    }));
    const events = scaledNotifications(base, scaled);
    const notifications = await enqueueNotifications(tx, org.id, events, now);
    scope.phases?.lap('events');
    return { snapshot: null, notifications };
  }

  const index = env.latest_snapshot + 1;
  const policies = await attachedPolicies(tx, org.id, env.id);
  const allowlist = await allowlistsRepository.fingerprints(tx, org.id, env.id);
  const current = await runtimeRepository.currentStates(tx, org.id, env.id);
  const started = diff.started.map((fp) => reported.get(fp)!);
  const evaluated = await evaluate(scope, started, policies, allowlist);
  const verdicts = new Map([...evaluated].map(([fp, e]) => [fp, e.verdict]));
  const plan = await inSlices(
    planReportSteps({ index, started, verdicts, reported, current, exited: diff.exited, live }),
  );
  scope.phases?.lap('plan');
  return writeSnapshot(scope, {
    ...plan,
    env,
    index,
    cause: 'report',
    reportedBy: scope.actor,
    verdicts: [...verdicts.values()],
    policies,
    complianceAfter: environmentCompliance(policies.length, plan.compliance),
    artifactCount: grouped.length,
    startedRecords: new Map([...evaluated].map(([fp, e]) => [fp, e.records])),
    before: current,
  });
}

/**
 * Re-evaluates what runs in a locked environment against its policies, allowlist and current
 * provenance; makes a snapshot when a verdict's compliance or provenance changed or the attached
 * policies (or their versions) changed. Returns null when nothing changed.
 */
export async function reevaluateLocked(
  scope: OrgScope,
  env: EnvironmentRow,
  cause: string,
  reportedBy: string | null = null,
): Promise<ReportOutcome | null> {
  const { db, org, now } = scope;
  if (env.type === 'logical' || env.latest_snapshot === 0) {
    return null;
  }
  const policies = await attachedPolicies(db, org.id, env.id);
  const latest = await snapshotsRepository.snapshot(db, org.id, env.id, env.latest_snapshot);
  const current = await runtimeRepository.currentStates(db, org.id, env.id);
  const allowlist = await allowlistsRepository.fingerprints(db, org.id, env.id);
  const evaluated = await evaluate(scope, current, policies, allowlist);
  const live = await runtimeRepository.liveDetails(db, org.id, env.id);
  const plan = planReevaluation({
    index: env.latest_snapshot + 1,
    current,
    verdicts: new Map([...evaluated].map(([fp, e]) => [fp, e.verdict])),
    live,
    policiesChanged: !samePolicies(latest?.applied_policies ?? [], policyRefs(policies)),
  });
  if (!plan) {
    return null;
  }
  const linked = plan.linked.map((l): RuntimeEvent => ({
    ...l,
    type: 'artifact_started_running',
    environmentName: env.name,
    at: now,
  }));
  // The runs linked here are attributed to their deployments: those of deferred snapshots first.
  const caughtUp = linked.length > 0 ? await catchUpDeliveries(db, org, env) : [];
  if (linked.length > 0) {
    await scope.services.provenance.recordRuntimeEvents(db, org.id, linked);
    await recordLinkedRuns(
      scope,
      env.id,
      plan.linked,
      new Map([...evaluated].map(([fp, e]) => [fp, e.records])),
    );
  }
  const outcome = await writeSnapshot(scope, {
    ...plan,
    env,
    index: env.latest_snapshot + 1,
    cause,
    reportedBy,
    policies,
    complianceAfter: environmentCompliance(policies.length, plan.compliance),
    artifactCount: current.length,
    startedRecords: new Map(),
    before: current,
  });
  return { ...outcome, deployments: [...caughtUp, ...(outcome.deployments ?? [])] };
}
