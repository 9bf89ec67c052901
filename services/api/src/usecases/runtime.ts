/**
 * The runtime's writes: reports become live state and, when something started or exited,
 * a snapshot (semantics.md section 5, spec rules 2-4); re-evaluation turns changes of provenance,
 * compliance, policies or allowlists into snapshots (section 6); every snapshot writes the
 * runtime events onto trails and the notifications of its triggers (section 7) in the same
 * transaction. Numbering is gap-free: each environment's row is locked while it changes.
 */
import { createHash } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import {
  environmentCompliance,
  evaluateArtifactAgainstPolicies,
  type PolicyVersion,
} from '../domain/policy-evaluation.js';
import type { ParsedPolicy } from '../domain/policy.js';
import {
  describeChange,
  diffRuntime,
  groupReport,
  reevaluationChange,
  reportKey,
  startedAnnotation,
  type ReportEntry,
} from '../domain/snapshot-diff.js';
import { complianceTrigger, type NotificationEvent } from '../domain/triggers.js';
import type { Db } from '../storage/database.js';
import { allowlistsRepository } from '../storage/repositories/allowlists.js';
import { environmentsRepository, type EnvironmentRow } from '../storage/repositories/environments.js';
import { orgsRepository } from '../storage/repositories/orgs.js';
import { policiesRepository } from '../storage/repositories/policies.js';
import { runtimeRepository, type NewState, type NewVerdict } from '../storage/repositories/runtime.js';
import type { AppliedPolicyRef } from '../storage/tables/runtime.js';
import { enqueueNotifications } from './notifications.js';
import type { ProvenancePort, ProvenanceRecord, RuntimeEvent } from './provenance.js';

/** What the runtime use cases need from the app. */
export interface RuntimeDeps {
  provenance: ProvenancePort;
  publicUrl: string;
}

export interface OrgRef {
  id: string;
  name: string;
}

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
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** URLs of a snapshot, for payloads. */
export function snapshotUrls(publicUrl: string, org: string, env: string, index: number) {
  const e = encodeURIComponent(env);
  return {
    html_url: `${publicUrl}/${org}/environments/${e}/snapshots/${index}`,
    api_url: `${publicUrl}/api/v2/snapshots/${org}/${e}/${index}`,
  };
}

/** The frozen provenance of a fingerprint: one entry per flow it was reported in. */
function provenanceEntries(records: readonly ProvenanceRecord[], publicUrl: string, org: string) {
  return records.map((r) => ({
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
    flow_html_url: `${publicUrl}/${org}/flows/${encodeURIComponent(r.flowName)}`,
    artifact_compliance_in_flow: r.artifactCompliance === 'COMPLIANT',
    flow_reasons_for_non_compliance: r.nonComplianceReasons,
    artifact_status: r.artifactCompliance,
    trail_status: r.trailCompliance,
  }));
}

type ProvenanceEntry = ReturnType<typeof provenanceEntries>[number];

/** What counts as a change of provenance: another flow, trail or artifact record. */
function provenanceKey(entries: readonly unknown[]): string {
  return (entries as ProvenanceEntry[])
    .map((e) => `${e.flow_name}/${e.trail_name}/${e.artifact_id}`)
    .sort()
    .join('|');
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
  db: Db,
  deps: RuntimeDeps,
  org: OrgRef,
  artifacts: ReadonlyArray<{ fingerprint: string; name: string }>,
  policies: readonly PolicyVersion[],
  allowlist: ReadonlySet<string>,
): Promise<Map<string, Evaluated>> {
  const out = new Map<string, Evaluated>();
  if (artifacts.length === 0) return out;
  const found = await deps.provenance.find(
    db,
    org.id,
    artifacts.map((a) => a.fingerprint),
  );
  for (const a of artifacts) {
    const records = found.get(a.fingerprint) ?? [];
    const v = evaluateArtifactAgainstPolicies(a, records, policies, allowlist.has(a.fingerprint));
    const body = {
      compliant: v.compliant,
      provenance: provenanceEntries(records, deps.publicUrl, org.name),
      decisions: v.decisions,
      reasons: v.reasons,
      allowlisted: v.allowlisted,
    };
    out.set(a.fingerprint, { verdict: { hash: sha256(JSON.stringify(body)), ...body }, records });
  }
  return out;
}

const policyRefs = (policies: readonly PolicyVersion[]): AppliedPolicyRef[] =>
  policies.map((p) => ({ id: p.id, name: p.name, version: p.version }));

interface SnapshotPlan {
  env: EnvironmentRow;
  index: number;
  cause: string;
  reportedBy: string | null;
  newStates: NewState[];
  /** Fingerprints whose current state ends here because a new state replaces it. */
  replaced: string[];
  /** Fingerprints that stop running here, with their last instance count. */
  exits: Array<{ fingerprint: string; name: string; count: number; compliant: boolean | null }>;
  details: Array<{ hash: string; detail: string }>;
  verdicts: NewVerdict[];
  policies: PolicyVersion[];
  complianceBefore: boolean | null;
  complianceAfter: boolean | null;
  artifactCount: number;
  /** Provenance records of the fingerprints that started (for events and ON_RELEASE). */
  startedRecords: Map<string, ProvenanceRecord[]>;
}

async function writeSnapshot(
  db: Db,
  deps: RuntimeDeps,
  org: OrgRef,
  plan: SnapshotPlan,
  now: Date,
): Promise<ReportOutcome> {
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

  const runtimeEvents: RuntimeEvent[] = [
    ...started.map((s) => ({
      fingerprint: s.fingerprint,
      type: 'artifact_started_running' as const,
      environmentName: env.name,
      snapshotIndex: index,
      instanceCount: s.instance_count,
      at: now,
    })),
    ...plan.exits.map((e) => ({
      fingerprint: e.fingerprint,
      type: 'artifact_stopped_running' as const,
      environmentName: env.name,
      snapshotIndex: index,
      instanceCount: 0,
      at: now,
    })),
  ];
  if (runtimeEvents.length > 0) await deps.provenance.recordRuntimeEvents(db, org.id, runtimeEvents);

  const status = (c: boolean | null): 'compliant' | 'non-compliant' | 'unknown' =>
    c === true ? 'compliant' : c === false ? 'non-compliant' : 'unknown';
  const snapshot = {
    index,
    status: status(plan.complianceAfter),
    ...snapshotUrls(deps.publicUrl, org.name, env.name, index),
  };
  const verdictOf = new Map(plan.verdicts.map((v) => [v.hash, v]));
  const base = { org: org.name, timestamp: now.getTime() / 1000, environment: env.name, snapshot };
  const provenanceOf = (records: readonly ProvenanceRecord[] | undefined) => {
    const r = records?.[0];
    return r
      ? {
          flow: r.flowName,
          trail: r.trailName,
          status: r.artifactCompliance.toLowerCase(),
          commit: r.gitCommit,
          commit_url: r.commitUrl,
          build_url: r.buildUrl,
          html_url: r.htmlUrl,
        }
      : null;
  };
  const events: NotificationEvent[] = [
    ...started.map((s): NotificationEvent => ({
      ...base,
      trigger: 'ON_STARTED_ARTIFACT',
      description: describeChange(
        startedAnnotation(verdictOf.get(s.verdict_hash)?.compliant ?? null),
        0,
        s.instance_count,
      ),
      artifact: {
        name: s.name,
        fingerprint: s.fingerprint,
        provenance: provenanceOf(plan.startedRecords.get(s.fingerprint)),
      },
    })),
    ...plan.exits.map((e): NotificationEvent => ({
      ...base,
      trigger: 'ON_EXITED_ARTIFACT',
      description: describeChange('exited', e.count, 0),
      artifact: { name: e.name, fingerprint: e.fingerprint },
    })),
    // A fingerprint with provenance in a flow that starts running is a release of that flow.
    ...started.flatMap((s) =>
      (plan.startedRecords.get(s.fingerprint) ?? []).map((r): NotificationEvent => ({
        ...base,
        trigger: 'ON_RELEASE',
        flow: r.flowName,
        trail: r.trailName,
        description: `${s.name} started running in ${env.name}`,
        artifact: { name: s.name, fingerprint: s.fingerprint, provenance: provenanceOf([r]) },
      })),
    ),
  ];
  const trigger = complianceTrigger(plan.complianceBefore, plan.complianceAfter);
  if (trigger) {
    events.push({
      ...base,
      trigger,
      description: `Environment ${env.name} became ${plan.complianceAfter ? 'compliant' : 'non-compliant'} in snapshot #${index}`,
    });
  }
  const notifications = await enqueueNotifications(db, org.id, events, now);
  return {
    snapshot: { environment: env.name, index, cause: plan.cause, compliant: plan.complianceAfter },
    notifications,
  };
}

/** Why a report is refused before anything is read from it. */
function checkReportable(
  env: EnvironmentRow | undefined,
  org: OrgRef,
  envName: string,
  type: string,
): EnvironmentRow {
  if (!env)
    throw new NotFoundError(`Environment named '${envName}' does not exist for organization '${org.name}'`);
  if (env.type === 'logical') {
    throw new BadRequestError(
      `Environment '${envName}' is logical: it takes no reports; report to its physical environments`,
    );
  }
  if (env.archived) throw new BadRequestError(`Environment '${envName}' is archived and takes no reports`);
  if (env.type !== type) {
    throw new BadRequestError(`Environment '${envName}' is of type ${env.type}; this report is for ${type}`, {
      type: `expected ${env.type}`,
    });
  }
  return env;
}

/**
 * Applies a report (the full current state) to an environment: live state always, a snapshot
 * only when a fingerprint started or exited, or for the environment's first report.
 */
export async function ingestReport(
  db: Db,
  deps: RuntimeDeps,
  input: {
    org: OrgRef;
    envName: string;
    type: string;
    entries: readonly ReportEntry[];
    now: Date;
    reportedBy: string;
    /** sha256 of the request bytes, remembered so the same bytes next time skip parsing. */
    rawHash?: string;
  },
): Promise<ReportOutcome> {
  const { org, now } = input;
  const grouped = groupReport(input.entries).map((a) => ({
    ...a,
    detailHash: sha256(a.detailKey),
    instanceCount: a.instances.length,
  }));
  const reportHash = sha256(reportKey(grouped));
  return db.transaction().execute(async (tx) => {
    const env = checkReportable(
      await environmentsRepository.lockByName(tx, org.id, input.envName),
      org,
      input.envName,
      input.type,
    );
    // Rule 2 at once: the same report as last time changes nothing but the report time.
    if (env.last_report_hash === reportHash && env.latest_snapshot > 0) {
      await environmentsRepository.update(tx, org.id, env.id, {
        last_reported_at: now,
        last_report_raw_hash: input.rawHash ?? null,
      });
      return { snapshot: null, notifications: 0 };
    }
    const live = await runtimeRepository.live(tx, org.id, env.id);
    const diff = diffRuntime(
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
    );
    const reported = new Map(grouped.map((a) => [a.fingerprint, a]));
    const liveRow = (fp: string) => {
      const a = reported.get(fp)!;
      return {
        fingerprint: fp,
        name: a.name,
        instance_count: a.instanceCount,
        detail_hash: a.detailHash,
        detail: JSON.stringify(a.instances),
      };
    };
    await runtimeRepository.upsertLive(
      tx,
      org.id,
      env.id,
      [...diff.started, ...diff.scaled, ...diff.redetailed].map(liveRow),
    );
    await runtimeRepository.deleteLive(tx, org.id, env.id, diff.exited);
    await environmentsRepository.update(tx, org.id, env.id, {
      last_reported_at: now,
      last_report_hash: reportHash,
    });

    if (!diff.snapshotDue && env.latest_snapshot > 0) {
      // Rules 3 and 4: no snapshot; scaling is still worth a notification.
      const events = diff.scaled.map((fp): NotificationEvent => {
        const was = live.find((l) => l.fingerprint === fp)!.instance_count;
        const a = reported.get(fp)!;
        return {
          trigger: 'ON_SCALED_ARTIFACT',
          org: org.name,
          timestamp: now.getTime() / 1000,
          environment: env.name,
          description: describeChange('unchanged', was, a.instanceCount),
          artifact: { name: a.name, fingerprint: fp },
        };
      });
      return { snapshot: null, notifications: await enqueueNotifications(tx, org.id, events, now) };
    }

    const index = env.latest_snapshot + 1;
    const policies = await attachedPolicies(tx, org.id, env.id);
    const allowlist = await allowlistsRepository.fingerprints(tx, org.id, env.id);
    const current = await runtimeRepository.currentStates(tx, org.id, env.id);
    const startedArtifacts = diff.started.map((fp) => reported.get(fp)!);
    const evaluated = await evaluate(tx, deps, org, startedArtifacts, policies, allowlist);

    const exited = new Set(diff.exited);
    const newStates: NewState[] = [];
    const replaced: string[] = [];
    const details: Array<{ hash: string; detail: string }> = [];
    const compliance: Array<boolean | null> = [];
    for (const a of startedArtifacts) {
      const v = evaluated.get(a.fingerprint)!.verdict;
      newStates.push({
        fingerprint: a.fingerprint,
        from_index: index,
        name: a.name,
        instance_count: a.instanceCount,
        was_count: 0,
        change: 'started',
        detail_hash: a.detailHash,
        verdict_hash: v.hash,
        run_start: index,
      });
      details.push({ hash: a.detailHash, detail: JSON.stringify(a.instances) });
      compliance.push(v.compliant);
    }
    for (const s of current) {
      if (exited.has(s.fingerprint)) continue;
      compliance.push(s.compliant);
      const a = reported.get(s.fingerprint);
      // Instance counts are recorded at snapshot boundaries: a count that moved since is written now.
      if (a && a.instanceCount !== s.instance_count) {
        replaced.push(s.fingerprint);
        newStates.push({
          fingerprint: s.fingerprint,
          from_index: index,
          name: s.name,
          instance_count: a.instanceCount,
          was_count: s.instance_count,
          change: 'unchanged',
          detail_hash: a.detailHash,
          verdict_hash: s.verdict_hash,
          run_start: s.run_start,
        });
        details.push({ hash: a.detailHash, detail: JSON.stringify(a.instances) });
      }
    }
    const liveCount = new Map(live.map((l) => [l.fingerprint, l.instance_count]));
    const exits = current
      .filter((s) => exited.has(s.fingerprint))
      .map((s) => ({
        fingerprint: s.fingerprint,
        name: s.name,
        count: liveCount.get(s.fingerprint) ?? s.instance_count,
        compliant: s.compliant,
      }));
    return writeSnapshot(
      tx,
      deps,
      org,
      {
        env,
        index,
        cause: 'report',
        reportedBy: input.reportedBy,
        newStates,
        replaced,
        exits,
        details,
        verdicts: [...evaluated.values()].map((e) => e.verdict),
        policies,
        complianceBefore: env.compliant,
        complianceAfter: environmentCompliance(policies.length, compliance),
        artifactCount: grouped.length,
        startedRecords: new Map([...evaluated].map(([fp, e]) => [fp, e.records])),
      },
      now,
    );
  });
}

/**
 * Re-evaluates what runs in a locked environment against its policies, allowlist and current
 * provenance; makes a snapshot when a verdict's compliance or provenance changed or the attached
 * policies (or their versions) changed. Returns null when nothing changed.
 */
export async function reevaluateLocked(
  db: Db,
  deps: RuntimeDeps,
  org: OrgRef,
  env: EnvironmentRow,
  now: Date,
  cause: string,
  reportedBy: string | null = null,
): Promise<ReportOutcome | null> {
  if (env.type === 'logical' || env.latest_snapshot === 0) return null;
  const policies = await attachedPolicies(db, org.id, env.id);
  const latest = await runtimeRepository.snapshot(db, org.id, env.id, env.latest_snapshot);
  const refsKey = (refs: readonly AppliedPolicyRef[]) => JSON.stringify(refs.map((r) => [r.id, r.version]));
  const policiesChanged = refsKey(latest?.applied_policies ?? []) !== refsKey(policyRefs(policies));
  const current = await runtimeRepository.currentStates(db, org.id, env.id);
  const allowlist = await allowlistsRepository.fingerprints(db, org.id, env.id);
  const evaluated = await evaluate(db, deps, org, current, policies, allowlist);
  const live = await runtimeRepository.liveDetails(db, org.id, env.id);

  const changes = current.map((s) => {
    const v = evaluated.get(s.fingerprint)!.verdict;
    const change = reevaluationChange(
      { compliant: s.compliant, provenanceKey: provenanceKey(s.provenance) },
      { compliant: v.compliant, provenanceKey: provenanceKey(v.provenance) },
    );
    return { s, v, change };
  });
  if (!policiesChanged && changes.every((c) => c.change === null)) return null;

  const index = env.latest_snapshot + 1;
  const newStates: NewState[] = [];
  const replaced: string[] = [];
  const details: Array<{ hash: string; detail: string }> = [];
  for (const { s, v, change } of changes) {
    const l = live.get(s.fingerprint);
    const count = l?.instance_count ?? s.instance_count;
    if (change === null && v.hash === s.verdict_hash && count === s.instance_count) continue;
    replaced.push(s.fingerprint);
    const detailHash = l?.detail_hash ?? s.detail_hash;
    if (l && l.detail_hash !== s.detail_hash)
      details.push({ hash: l.detail_hash, detail: JSON.stringify(l.detail) });
    newStates.push({
      fingerprint: s.fingerprint,
      from_index: index,
      name: s.name,
      instance_count: count,
      was_count: s.instance_count,
      change: change ?? 'unchanged',
      detail_hash: detailHash,
      verdict_hash: v.hash,
      run_start: s.run_start,
    });
  }
  // A fingerprint that was already running when CI reported it (or reported it again in a new
  // trail) started before that trail held it: tell the newly linked trails where it runs.
  const linked = changes.flatMap(({ s, v }): RuntimeEvent[] => {
    const known = new Set((s.provenance as ProvenanceEntry[]).map((e) => e.artifact_id));
    const added = (v.provenance as ProvenanceEntry[])
      .map((e) => e.artifact_id)
      .filter((id) => !known.has(id));
    if (added.length === 0) return [];
    return [
      {
        fingerprint: s.fingerprint,
        type: 'artifact_started_running',
        environmentName: env.name,
        snapshotIndex: s.run_start,
        instanceCount: live.get(s.fingerprint)?.instance_count ?? s.instance_count,
        at: now,
        artifactIds: added,
      },
    ];
  });
  if (linked.length > 0) await deps.provenance.recordRuntimeEvents(db, org.id, linked);
  return writeSnapshot(
    db,
    deps,
    org,
    {
      env,
      index,
      cause,
      reportedBy,
      newStates,
      replaced,
      exits: [],
      details,
      verdicts: changes.map((c) => c.v),
      policies,
      complianceBefore: env.compliant,
      complianceAfter: environmentCompliance(
        policies.length,
        changes.map((c) => c.v.compliant),
      ),
      artifactCount: current.length,
      startedRecords: new Map(),
    },
    now,
  );
}

/** Marks environments for re-evaluation without touching (or waiting for) their rows. */
export async function markForReevaluation(
  db: Db,
  orgId: string,
  environmentIds: readonly string[],
  reason: string,
  now: Date,
): Promise<number> {
  await runtimeRepository.addMarks(
    db,
    environmentIds.map((id) => ({ org_id: orgId, id: newId(), environment_id: id, marked_at: now, reason })),
  );
  return environmentIds.length;
}

/** Marks every environment where one of the fingerprints runs. */
export async function markEnvironmentsRunning(
  db: Db,
  orgId: string,
  fingerprints: readonly string[],
  reason: string,
  now: Date,
): Promise<number> {
  const ids = await runtimeRepository.environmentsRunning(db, orgId, fingerprints);
  return markForReevaluation(db, orgId, ids, reason, now);
}

/**
 * Processes pending marks, one environment per transaction; marks that arrive meanwhile stay for
 * the next round. Safe with several replicas: marks are claimed with SKIP LOCKED.
 */
export async function processReevaluationMarks(
  db: Db,
  deps: RuntimeDeps,
  now: () => Date,
  limit = 100,
): Promise<ReportOutcome[]> {
  const outcomes: ReportOutcome[] = [];
  for (let i = 0; i < limit; i++) {
    const done = await db.transaction().execute(async (tx) => {
      const claimed = await runtimeRepository.claimMarkedEnvironment(tx);
      if (!claimed) return true;
      const ids = await runtimeRepository.claimMarks(tx, claimed.org_id, claimed.environment_id);
      const env = await environmentsRepository.lockById(tx, claimed.org_id, claimed.environment_id);
      const org = await orgsRepository.findById(tx, claimed.org_id);
      if (env && org && !env.archived) {
        const outcome = await reevaluateLocked(
          tx,
          deps,
          { id: org.id, name: org.name },
          env,
          now(),
          'reevaluation',
        );
        if (outcome) outcomes.push(outcome);
      }
      await runtimeRepository.deleteMarks(tx, claimed.org_id, ids);
      return false;
    });
    if (done) break;
  }
  return outcomes;
}
