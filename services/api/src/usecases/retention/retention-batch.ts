/**
 * What the retention job's passes share: its options and report, the disposition record and
 * audit entry each batch writes, and the pause between batches.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cutoffMs, type AppliedPeriod } from '../../domain/retention.js';
import { newId } from '../../ids.js';
import type { Db } from '../../storage/database.js';
import { auditLogRepository } from '../../storage/repositories/audit-log.js';
import { retentionRepository } from '../../storage/repositories/retention.js';
import type { DispositionsTable } from '../../storage/tables/retention.js';
import type { EvidenceStore } from '../scope/services.js';
import type { RetentionMinimum } from './retention.js';

/**
 * A file stored (or stored again) this recently is left alone: an attestation may be naming it in
 * a transaction not yet committed (the store's collector waits as long).
 */
export const FRESH_FILE_MS = 3_600_000;

export interface RetentionRunOptions {
  db: Db;
  store: EvidenceStore;
  minimum: RetentionMinimum;
  batchSize: number;
  /** Pause between batches. */
  pauseMs: number;
  clock: () => Date;
  /** Remove what has passed its period as of this time (default: now). */
  asOf?: Date;
  /** Read and report; remove nothing. */
  dryRun?: boolean;
  /** Who runs it, as disposition records and audit entries name it. */
  runBy: string;
  /** Only this organization (by name). */
  org?: string;
  onProgress?: (p: RetentionProgress) => void;
  /** Checked between batches: a stopping app ends the run early. */
  stopped?: () => boolean;
}

export interface RetentionProgress {
  org: string;
  kind: DispositionsTable['kind'];
  /** Removed (or, in a dry run, found) so far in this pass. */
  count: number;
}

/** What one organization lost (or would lose), with what it was. */
export interface OrgRetentionReport {
  org: string;
  trails: string[];
  attestations: number;
  evidence_files: string[];
  snapshots: string[];
  audit_log: number;
}

export interface RetentionReport {
  as_of: Date;
  dry_run: boolean;
  orgs: OrgRetentionReport[];
}

const AUDIT_ACTION: Record<DispositionsTable['kind'], string> = {
  trails: 'retentionRemoveTrails',
  evidence_files: 'retentionRemoveEvidenceFiles',
  snapshots: 'retentionRemoveSnapshots',
  audit_log: 'retentionRemoveAuditEntries',
};

/** One organization's run. */
export interface OrgRun {
  o: RetentionRunOptions;
  org: { id: string; name: string };
  asOf: Date;
  report: OrgRetentionReport;
}

/** The time before which a record under `applied` has passed its period. */
export function cutoffOf(applied: AppliedPeriod, asOf: Date): Date {
  return new Date(cutoffMs(applied, asOf.getTime()));
}

/** Writes a batch's disposition record and audit entry (in the batch's transaction). */
export async function record(
  run: OrgRun,
  trx: Db,
  d: {
    kind: DispositionsTable['kind'];
    count: number;
    items: unknown[];
    digests: string[];
    rule: AppliedPeriod;
  },
): Promise<void> {
  const now = run.o.clock();
  const id = newId();
  await retentionRepository.insertDisposition(trx, {
    org_id: run.org.id,
    id,
    kind: d.kind,
    count: d.count,
    items: JSON.stringify(d.items),
    digests: JSON.stringify(d.digests),
    rule: JSON.stringify({
      period: d.rule.period,
      days: d.rule.days,
      scope: d.rule.scope,
      name: d.rule.name,
    }),
    as_of: run.asOf,
    removed_at: now,
    run_by: run.o.runBy,
  });
  await auditLogRepository.insert(trx, [
    {
      org_id: run.org.id,
      at: now,
      actor_kind: 'system',
      actor_name: run.o.runBy,
      actor_email: null,
      actor_subject: null,
      action: AUDIT_ACTION[d.kind],
      resource: `/api/v2/retention/${encodeURIComponent(run.org.name)}/dispositions/${id}`,
      request_id: null,
      ip: null,
    },
  ]);
}

/** Between batches: leaves the database to ingest; false when the run should end. */
export async function pause(run: OrgRun, kind: DispositionsTable['kind'], count: number): Promise<boolean> {
  run.o.onProgress?.({ org: run.org.name, kind, count });
  if (run.o.pauseMs > 0) {
    await sleep(run.o.pauseMs);
  }
  return !run.o.stopped?.();
}
