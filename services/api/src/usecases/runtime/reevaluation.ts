/**
 * Marks of environments to re-evaluate (semantics.md section 6): written where a change of
 * evidence, policies or allowlists may move a verdict, and processed by the background worker,
 * one environment per transaction, through `reevaluateLocked`.
 */
import { newId } from '../../ids.js';
import type { Db } from '../../storage/database.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import { reevaluationMarksRepository } from '../../storage/repositories/reevaluation-marks.js';
import { runtimeRepository } from '../../storage/repositories/runtime.js';
import { scopeFor, type AppScope } from '../scope/org-scope.js';
import { reevaluateLocked } from './report-ingest.js';
import { announce, type ReportOutcome } from './snapshot-write.js';

/** Marks environments for re-evaluation without touching (or waiting for) their rows. */
export async function markForReevaluation(
  db: Db,
  orgId: string,
  environmentIds: readonly string[],
  reason: string,
  now: Date,
): Promise<number> {
  await reevaluationMarksRepository.addMarks(
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
  app: AppScope,
  now: () => Date,
  limit = 100,
): Promise<ReportOutcome[]> {
  const outcomes: ReportOutcome[] = [];
  for (let i = 0; i < limit; i++) {
    const done = await app.db.transaction().execute(async (tx) => {
      const claimed = await reevaluationMarksRepository.claimMarkedEnvironment(tx);
      if (!claimed) {
        return true;
      }
      const ids = await reevaluationMarksRepository.claimMarks(tx, claimed.org_id, claimed.environment_id);
      const env = await environmentsRepository.lockById(tx, claimed.org_id, claimed.environment_id);
      const org = await orgsRepository.findById(tx, claimed.org_id);
      if (env && org && !env.archived) {
        const scope = scopeFor({ ...app, db: tx }, { id: org.id, name: org.name }, now(), 'verity');
        const outcome = await reevaluateLocked(scope, env, 'reevaluation');
        if (outcome) {
          outcomes.push(outcome);
        }
      }
      await reevaluationMarksRepository.deleteMarks(tx, claimed.org_id, ids);
      return false;
    });
    if (done) {
      break;
    }
  }
  for (const outcome of outcomes) {
    announce({ events: app.events }, outcome);
  }
  return outcomes;
}
