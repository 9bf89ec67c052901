/**
 * Sections of the configuration read from the parsed environment (config.ts): the retention job,
 * the server-side evaluation workers and the transparency log.
 */
import type { Config, Env } from './config.js';

/** The retention job: the operator's minimum periods, and how often and how fast it removes. */
export function retentionConfigOf(
  e: Env,
): Pick<Config, 'retentionMinimumDays' | 'retentionIntervalMs' | 'retentionBatchSize' | 'retentionPauseMs'> {
  return {
    retentionMinimumDays: {
      trails_days: e.VERITY_RETENTION_MIN_TRAILS_DAYS,
      evidence_files_days: e.VERITY_RETENTION_MIN_EVIDENCE_FILES_DAYS,
      snapshots_days: e.VERITY_RETENTION_MIN_SNAPSHOTS_DAYS,
      audit_log_days: e.VERITY_RETENTION_MIN_AUDIT_LOG_DAYS,
    },
    retentionIntervalMs: e.VERITY_RETENTION_INTERVAL_MS,
    retentionBatchSize: e.VERITY_RETENTION_BATCH_SIZE,
    retentionPauseMs: e.VERITY_RETENTION_PAUSE_MS,
  };
}

/** The runtime workers' settings. */
export function runtimeSettings(
  e: Env,
): Pick<Config, 'reevaluationIntervalMs' | 'deploymentsDeferFrom' | 'changePollMs'> {
  return {
    reevaluationIntervalMs: e.VERITY_REEVALUATION_INTERVAL_MS,
    changePollMs: e.VERITY_CHANGE_POLL_MS,
    deploymentsDeferFrom: e.VERITY_DEPLOYMENTS_DEFER_FROM,
  };
}

/** The server-side evaluation workers' settings. */
export function evaluationSettings(e: Env) {
  return {
    evaluationsEnabled: e.VERITY_EVALUATIONS_ENABLED,
    celTimeoutMs: e.VERITY_CEL_TIMEOUT_MS,
    celMaxHeapMb: e.VERITY_CEL_MAX_HEAP_MB,
    celWorkers: e.VERITY_CEL_WORKERS,
    evaluationsPollMs: e.VERITY_EVALUATIONS_POLL_MS,
  };
}

/** The transparency log's settings. */
export function logSettings(e: Env) {
  return {
    transparencyLog: e.VERITY_TRANSPARENCY_LOG,
    logSigningKey: e.VERITY_LOG_SIGNING_KEY,
    encryptionSecret: e.VERITY_ENCRYPTION_SECRET,
    logSequenceMs: e.VERITY_LOG_SEQUENCE_MS,
    logSelfCheckMs: e.VERITY_LOG_SELF_CHECK_MS,
    logSelfCheckSample: e.VERITY_LOG_SELF_CHECK_SAMPLE,
  };
}
