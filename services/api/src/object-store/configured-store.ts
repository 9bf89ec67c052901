/**
 * The evidence store the configuration names: the S3-compatible object store with
 * `VERITY_EVIDENCE_STORE=s3`, else the database; with a bucket configured, the database store
 * still reads and removes files that were moved there.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { databaseStore } from '../usecases/evidence/evidence-store.js';
import type { EvidenceStore } from '../usecases/scope/services.js';
import { operatorMinimumLock, S3EvidenceStore } from './s3-evidence-store.js';

export function configuredEvidenceStore(
  config: Pick<Config, 's3' | 'evidenceStore' | 'retentionMinimumDays'>,
  log: FastifyBaseLogger,
): { store: EvidenceStore; objects: S3EvidenceStore | undefined } {
  const objects = config.s3
    ? new S3EvidenceStore(
        config.s3,
        log,
        operatorMinimumLock(config.retentionMinimumDays.evidence_files_days),
      )
    : undefined;
  const store = config.evidenceStore === 's3' && objects ? objects : databaseStore(objects);
  return { store, objects };
}
