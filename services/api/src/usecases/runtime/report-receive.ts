/**
 * A report as it arrives (spec endpoint 4, rules 2-4): the same bytes as last time only move the
 * report time; anything else is validated and ingested (report-ingest.ts). Every report is
 * counted by its result once it is over.
 */
import { REPORT_SCHEMAS, type ReportType } from '../../../../shared/contract/environment-reports.js';
import { ApiError, RequestValidationError } from '../../errors.js';
import { reportUnchanged } from '../../domain/snapshot-diff.js';
import { environmentsRepository } from '../../storage/repositories/environments.js';
import type { OrgScope } from '../scope/org-scope.js';
import { PhaseClock } from '../scope/report-phases.js';
import { ingestReport } from './report-ingest.js';
import { announce, type SnapshotMade } from './snapshot-write.js';
import { parseReport } from './report-parse.js';

export interface ArrivingReport {
  envName: string;
  type: ReportType;
  /** The parsed JSON body, not yet validated: an identical report is recognised before that. */
  body: unknown;
  /** sha256 of the request bytes, when the transport kept them. */
  rawHash?: string;
}

/**
 * Rule 2 before a report is even parsed: when the environment's last report had exactly these
 * bytes (their SHA-256), only its report time moves. True when that was all there was to do.
 * The bytes' hash is a cache of the decision on the grouped report (report-ingest.ts): equal
 * bytes group equally. An environment that would refuse the report is left to ingestion.
 */
export async function reportedAgain(
  scope: OrgScope,
  report: { envName: string; type: string; rawHash: string },
): Promise<boolean> {
  const { envName, type, rawHash } = report;
  const env = await environmentsRepository.findByName(scope.db, scope.org.id, envName);
  if (!env || env.archived || env.type !== type) {
    return false;
  }
  const latestSnapshot = env.latest_snapshot;
  if (!reportUnchanged({ key: env.last_report_raw_hash, latestSnapshot }, rawHash)) {
    return false;
  }
  const since = { rawHash, latestSnapshot };
  return environmentsRepository.touchIfSameReport(scope.db, scope.org.id, env.id, since, scope.now);
}

/** Applies a report; returns the snapshot it made, or null when none was due. */
export async function receiveReport(scope: OrgScope, report: ArrivingReport): Promise<SnapshotMade | null> {
  const { envName, type, rawHash } = report;
  try {
    if (rawHash && (await reportedAgain(scope, { envName, type, rawHash }))) {
      scope.events.committed([{ type: 'report.received', result: 'unchanged' }]);
      return null;
    }
    const phases = new PhaseClock();
    const parsed = await parseReport(REPORT_SCHEMAS[type], report.body);
    if (!parsed.success) {
      throw new RequestValidationError(parsed.issues);
    }
    phases.lap('validate');
    const entries = parsed.data.artifacts;
    const input = { envName, type, entries, ...(rawHash ? { rawHash } : {}) };
    const outcome = await ingestReport({ ...scope, phases }, input);
    phases.lap('commit');
    announce(scope, outcome);
    scope.events.committed([
      {
        type: 'report.received',
        result: outcome.snapshot ? 'snapshot' : 'unchanged',
        phases: phases.seconds,
      },
    ]);
    return outcome.snapshot;
  } catch (err) {
    const result = err instanceof ApiError && err.statusCode < 500 ? 'rejected' : 'error';
    scope.events.committed([{ type: 'report.received', result }]);
    throw err;
  }
}
