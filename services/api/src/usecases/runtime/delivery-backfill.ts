/**
 * Records the deployments of snapshots written before deployments were recorded (migration
 * 0387_deployments), from the history each snapshot holds: the fingerprints it started with their
 * frozen provenance and compliance, what ran just before it, and its time. The same code as a
 * snapshot being written decides (delivery-write.ts recordDeployments), so a backfilled
 * deployment is the one that snapshot would have recorded; the deployments its rollbacks undid
 * and those that made the environment non-compliant are marked as then.
 *
 * Idempotent: a snapshot that has deployments is skipped, and marks are set once. Bounded in
 * memory: one environment's snapshots are read a page at a time, each in its own transaction
 * with the environment locked (so a report written meanwhile waits, and two runs never record
 * the same snapshot twice).
 */
import {
  deploymentBackfillRepository,
  type BackfillSnapshot,
  type BackfillState,
} from '../../storage/repositories/deployment-backfill.js';
import { deploymentsRepository, type NewDeployment } from '../../storage/repositories/deployments.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import type { Db } from '../../storage/database.js';
import type { OrgRef } from '../scope/org-scope.js';
import type { LinkedRun } from '../../domain/snapshot-plan.js';
import {
  markCulprits,
  recordDeployments,
  recordLinkedRuns,
  type DeliveryInput,
  type DeliveryRecord,
  type DeliveryScope,
} from './delivery-write.js';

/** Snapshots read at once. */
const PAGE = 100;

/** How far one environment's backfill went. */
export interface BackfillProgress {
  org: string;
  environment: string;
  /** Snapshots gone through, of `total`. */
  done: number;
  total: number;
  /** Deployments recorded in the environment so far. */
  deployments: number;
}

export interface BackfillResult {
  environments: number;
  snapshots: number;
  deployments: number;
}

/** The provenance records of these states, from their frozen provenance and their artifacts. */
async function recordsOf(
  db: Db,
  orgId: string,
  states: readonly BackfillState[],
): Promise<Map<string, DeliveryRecord[]>> {
  const facts = await deploymentsRepository.artifactFacts(
    db,
    orgId,
    states.flatMap((s) => s.provenance.map((p) => p.artifact_id)),
  );
  return new Map(
    states.map((s) => [
      s.fingerprint,
      s.provenance.flatMap((p) => {
        const a = facts.get(p.artifact_id);
        const info = p.git_commit_info;
        return a
          ? [
              {
                artifactId: p.artifact_id,
                flowName: p.flow_name,
                trailName: p.trail_name,
                gitCommit: p.git_commit || null,
                htmlUrl: p.html_url,
                gitCommitInfo: info && typeof info === 'object' ? (info as Record<string, unknown>) : null,
                reportedAt: a.created_at,
              },
            ]
          : [];
      }),
    ]),
  );
}

/**
 * What ran in an environment as its snapshots are gone through in order: the states valid at
 * snapshot `at`, kept up to date from the states that began and ended since (reads bounded by
 * the changes of a few snapshots), or read anew past a long stretch.
 */
class Running {
  private readonly states = new Map<string, BackfillState>();
  private at = 0;

  constructor(
    private readonly db: Db,
    private readonly orgId: string,
    private readonly envId: string,
    private readonly stretch: number,
  ) {}

  private static key(s: { fingerprint: string; from_index: number }): string {
    return `${s.from_index}:${s.fingerprint}`;
  }

  /** What ran just before snapshot `index`: the states valid at `index - 1`. */
  async before(index: number): Promise<BackfillState[]> {
    const { db, orgId, envId } = this;
    const to = index - 1;
    if (to - this.at > this.stretch) {
      this.states.clear();
      for (const s of await deploymentBackfillRepository.statesBefore(db, orgId, envId, index)) {
        this.states.set(Running.key(s), s);
      }
    } else if (to > this.at) {
      for (const s of await deploymentBackfillRepository.statesBegun(db, orgId, envId, this.at + 1, to)) {
        this.states.set(Running.key(s), s);
      }
      for (const s of await deploymentBackfillRepository.statesEnded(db, orgId, envId, this.at + 1, to)) {
        this.states.delete(Running.key(s));
      }
    }
    this.at = Math.max(this.at, to);
    return [...this.states.values()];
  }
}

/**
 * What ran just before a snapshot. A fingerprint that kept running through it has a state before
 * it, unless retention removed the snapshot before and, with it, the state it changed from; the
 * state it changed to stands in for that one.
 */
function withKept(before: readonly BackfillState[], states: readonly BackfillState[]): BackfillState[] {
  const known = new Set(before.map((b) => b.fingerprint));
  return [...before, ...states.filter((s) => s.change !== 'started' && !known.has(s.fingerprint))];
}

/**
 * A re-evaluation that found artifact records of running fingerprints CI reported after they
 * started: their lead times, and the deployments of those runs attributed (recordLinkedRuns), as
 * that snapshot did. What it found is what each changed state's provenance adds to the one before.
 */
async function attributeLinked(
  scope: DeliveryScope,
  envId: string,
  index: number,
  states: readonly BackfillState[],
): Promise<void> {
  const { db, org } = scope;
  const before = new Map(
    (await deploymentBackfillRepository.statesChangedAt(db, org.id, envId, index)).map((s) => [
      s.fingerprint,
      s,
    ]),
  );
  const changed: BackfillState[] = [];
  const linked: LinkedRun[] = [];
  for (const s of states) {
    const was = before.get(s.fingerprint);
    const known = new Set(was?.provenance.map((p) => p.artifact_id));
    const added = s.provenance.map((p) => p.artifact_id).filter((id) => !known.has(id));
    if (was && added.length > 0) {
      changed.push(s);
      linked.push({
        fingerprint: s.fingerprint,
        snapshotIndex: was.run_start,
        instanceCount: s.instance_count,
        artifactIds: added,
      });
    }
  }
  if (linked.length > 0) {
    await recordLinkedRuns(scope, envId, linked, await recordsOf(db, org.id, changed));
  }
}

/**
 * Records, in the caller's transaction with the environment locked, what one snapshot would have
 * recorded from its history: its deployments (unless it has some, or `ranBefore` is null), the
 * deployments that made the environment non-compliant there, and (`linked`) the runs its
 * re-evaluation attributed. Returns the deployments it recorded.
 */
export async function deliverSnapshot(
  tx: Db,
  org: OrgRef,
  env: { id: string; name: string },
  snap: BackfillSnapshot,
  history: { compliantBefore: boolean | null; ranBefore: readonly BackfillState[] | null; linked: boolean },
): Promise<NewDeployment[]> {
  const { compliantBefore, ranBefore } = history;
  const scope = { db: tx, org, now: snap.created_at };
  const states = await deploymentBackfillRepository.statesFrom(tx, org.id, env.id, snap.index);
  if (history.linked && snap.cause !== 'report' && snap.changed > 0) {
    await attributeLinked(scope, env.id, snap.index, states);
  }
  const started = states.filter((s) => s.change === 'started');
  const done = await deploymentBackfillRepository.indexesWithDeployments(
    tx,
    org.id,
    env.id,
    snap.index,
    snap.index,
  );
  const input: DeliveryInput = {
    env: { ...env, compliant: compliantBefore },
    index: snap.index,
    before: [],
    newStates: states,
    verdicts: states.map((s) => ({
      hash: s.verdict_hash,
      compliant: s.compliant,
      provenance: s.provenance,
    })),
    startedRecords: new Map(),
    complianceAfter: snap.compliant,
  };
  let made: NewDeployment[] = [];
  if (ranBefore && started.length > 0 && done.size === 0) {
    made = await recordDeployments(scope, {
      ...input,
      before: withKept(ranBefore, states),
      startedRecords: await recordsOf(tx, org.id, started),
    });
  }
  await markCulprits(scope, input);
  return made;
}

/** Records what one snapshot would have recorded, in a transaction of its own; returns how many deployments. */
async function backfillSnapshot(
  db: Db,
  org: OrgRef,
  env: { id: string; name: string },
  snap: BackfillSnapshot,
  compliantBefore: boolean | null,
  ranBefore: readonly BackfillState[] | null,
): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await environmentsRepository.lockById(tx, org.id, env.id);
    const made = await deliverSnapshot(tx, org, env, snap, { compliantBefore, ranBefore, linked: true });
    return made.length;
  });
}

/**
 * Whether a snapshot may need work: it started fingerprints and has no deployments, it broke
 * compliance, or it re-evaluated what runs (and may have found where something came from).
 */
function needsWork(snap: BackfillSnapshot, recorded: ReadonlySet<number>, compliantBefore: boolean | null) {
  return (
    (snap.started > 0 && !recorded.has(snap.index)) ||
    (compliantBefore !== false && snap.compliant === false) ||
    (snap.cause !== 'report' && snap.changed > 0)
  );
}

/** Backfills one environment, reporting after each page. */
async function backfillEnvironment(
  db: Db,
  org: OrgRef,
  env: { id: string; name: string },
  options: BackfillOptions,
): Promise<{ snapshots: number; deployments: number }> {
  const total = await deploymentBackfillRepository.countSnapshots(db, org.id, env.id);
  let done = 0;
  let deployments = 0;
  let after = 0;
  let compliantBefore: boolean | null = null;
  const running = new Running(db, org.id, env.id, options.stretch ?? PAGE);
  for (;;) {
    const page = await deploymentBackfillRepository.snapshotPage(db, org.id, env.id, after, PAGE);
    if (page.length === 0) {
      break;
    }
    const recorded = await deploymentBackfillRepository.indexesWithDeployments(
      db,
      org.id,
      env.id,
      page[0]!.index,
      page[page.length - 1]!.index,
    );
    for (const snap of page) {
      options.signal?.throwIfAborted();
      if (needsWork(snap, recorded, compliantBefore)) {
        const unrecorded = snap.started > 0 && !recorded.has(snap.index);
        const before = unrecorded ? await running.before(snap.index) : null;
        deployments += await backfillSnapshot(db, org, env, snap, compliantBefore, before);
      }
      compliantBefore = snap.compliant;
      after = snap.index;
      done++;
    }
    options.onProgress?.({
      org: org.name,
      environment: env.name,
      done,
      total: Math.max(total, done),
      deployments,
    });
  }
  return { snapshots: done, deployments };
}

export interface BackfillOptions {
  /** Called after each page of an environment's snapshots. */
  onProgress?: (p: BackfillProgress) => void;
  /** Stops the backfill between two snapshots (what is recorded stays). */
  signal?: AbortSignal;
  /**
   * Snapshots past which what ran before one is read anew rather than followed from the states
   * that began and ended since (100).
   */
  stretch?: number;
}

/**
 * Records the deployments of every snapshot that has none although it started fingerprints, in
 * every organization or the one named, environment by environment. Gone through every
 * organization, it is noted as finished (backfillDeploymentsOnce).
 */
export async function backfillDeployments(
  db: Db,
  orgName: string | null,
  options: BackfillOptions = {},
): Promise<BackfillResult> {
  const result: BackfillResult = { environments: 0, snapshots: 0, deployments: 0 };
  for (const e of await deploymentBackfillRepository.environments(db, orgName)) {
    const org = { id: e.org_id, name: e.org_name };
    const r = await backfillEnvironment(db, org, { id: e.id, name: e.name }, options);
    result.environments++;
    result.snapshots += r.snapshots;
    result.deployments += r.deployments;
  }
  if (orgName === null) {
    await deploymentBackfillRepository.finish(db, new Date());
  }
  return result;
}

/**
 * The backfill as the API runs it at start: unless it has finished once (or the database had no
 * snapshot when deployments began to be recorded); null when it had.
 */
export async function backfillDeploymentsOnce(
  db: Db,
  options: BackfillOptions = {},
): Promise<BackfillResult | null> {
  if (await deploymentBackfillRepository.finished(db)) {
    return null;
  }
  return backfillDeployments(db, null, options);
}
