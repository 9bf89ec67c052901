/**
 * `npm run admin -- retention run [--dry-run] [--as-of <ISO time>] [--org <name>]`: runs the
 * retention job once on the configured database, or shows what it would remove as of that time,
 * with progress on stderr.
 */
import { parseArgs } from 'node:util';
import { AdminUsageError } from './admin-commands.js';
import type { Config } from './config.js';
import type { Db } from './storage/database.js';
import { databaseEvidenceStore } from './usecases/evidence/evidence-store.js';
import {
  runRetention,
  type RetentionProgress,
  type RetentionReport,
} from './usecases/retention/retention-run.js';
import type { EvidenceStore } from './usecases/scope/services.js';

export const RETENTION_USAGE = `  retention run [--dry-run] [--as-of <ISO 8601 time>] [--org <name>]
      removes what has passed its retention period (never what a legal hold covers), or with
      --dry-run lists what it would remove, as of now or of --as-of`;

function asOf(raw: string | undefined): Date | undefined {
  if (raw === undefined) {
    return undefined;
  }
  const d = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(d.getTime())) {
    throw new AdminUsageError('--as-of must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z');
  }
  return d;
}

/** The lines a run prints: per organization, what went (or would go). */
export function reportLines(r: RetentionReport): string[] {
  const verb = r.dry_run ? 'would remove' : 'removed';
  const lines = [`retention ${r.dry_run ? 'dry run' : 'run'} as of ${r.as_of.toISOString()}`];
  if (r.orgs.length === 0) {
    lines.push('no organization sets retention classes');
  }
  for (const o of r.orgs) {
    lines.push(
      `${o.org}: ${verb} ${o.trails.length} trails (${o.attestations} attestations), ` +
        `${o.evidence_files.length} evidence files, ${o.snapshots.length} snapshots, ${o.audit_log} audit log entries`,
    );
    for (const t of o.trails) {
      lines.push(`  trail ${t}`);
    }
    for (const f of o.evidence_files) {
      lines.push(`  evidence file ${f}`);
    }
    for (const s of o.snapshots) {
      lines.push(`  snapshot ${s}`);
    }
  }
  return lines;
}

export async function retentionCommand(
  db: Db,
  argv: string[],
  config: Config,
  options: { store?: EvidenceStore; progress?: (p: RetentionProgress) => void; now?: () => Date } = {},
): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'dry-run': { type: 'boolean' }, 'as-of': { type: 'string' }, org: { type: 'string' } },
  });
  if (positionals[0] !== 'retention' || positionals[1] !== 'run' || positionals.length > 2) {
    throw new AdminUsageError(`Usage:\n${RETENTION_USAGE}`);
  }
  const at = asOf(values['as-of']);
  const report = await runRetention({
    db,
    store: options.store ?? databaseEvidenceStore,
    minimum: config.retentionMinimumDays,
    batchSize: config.retentionBatchSize,
    pauseMs: config.retentionPauseMs,
    clock: options.now ?? (() => new Date()),
    ...(at ? { asOf: at } : {}),
    dryRun: values['dry-run'] === true,
    runBy: 'admin-cli',
    ...(values.org ? { org: values.org } : {}),
    onProgress: options.progress ?? ((p) => process.stderr.write(`${p.org}: ${p.kind} ${p.count}\n`)),
  });
  return reportLines(report);
}
