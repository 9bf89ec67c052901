/**
 * `npm run admin -- evidence migrate --to s3|database [--org <name>] [--batch N]`: moves evidence
 * files between the database and the object store configured by VERITY_S3_* (usecases/evidence/
 * evidence-migrate.ts), printing progress after each batch. It may run while the API serves:
 * either store reads a file from wherever it is. Stopped, it carries on where it stopped when run
 * again. Exits non-zero when any file could not be moved.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { AdminUsageError } from './admin-commands.js';
import type { Config } from './config.js';
import { S3EvidenceStore } from './object-store/s3-evidence-store.js';
import type { Db } from './storage/database.js';
import { orgsRepository } from './storage/repositories/orgs.js';
import { moveEvidence, type MoveProgress } from './usecases/evidence/evidence-migrate.js';

export const EVIDENCE_USAGE = `  evidence migrate --to <s3|database> [--org <name>] [--batch <files, default 100>]
      Moves evidence files between the database and the object store (VERITY_S3_*), checking
      each digest; run it again to resume. Set VERITY_EVIDENCE_STORE to match afterwards.`;

const MAX_BATCH = 10_000;

/** Runs `evidence migrate`; writes progress lines as it goes; returns the exit code. */
export async function evidenceCommand(
  argv: string[],
  config: Config,
  db: Db,
  write: (line: string) => void,
  options: { objects?: S3EvidenceStore; onBatch?: (p: MoveProgress) => void | Promise<void> } = {},
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { to: { type: 'string' }, org: { type: 'string' }, batch: { type: 'string' } },
  });
  if (positionals[0] !== 'evidence' || positionals[1] !== 'migrate' || positionals.length > 2) {
    throw new AdminUsageError(`Usage:\n${EVIDENCE_USAGE}`);
  }
  const to = values.to;
  if (to !== 's3' && to !== 'database') {
    throw new AdminUsageError('--to must be s3 or database');
  }
  const batch = values.batch === undefined ? 100 : Number(values.batch);
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH) {
    throw new AdminUsageError(`--batch must be a whole number from 1 to ${MAX_BATCH}`);
  }
  if (!config.s3) {
    throw new AdminUsageError(
      'evidence migrate needs the object store: set VERITY_S3_BUCKET (and VERITY_S3_*)',
    );
  }
  let orgId: string | null = null;
  if (values.org !== undefined) {
    const org = await orgsRepository.findByName(db, values.org);
    if (!org) {
      throw new AdminUsageError(`organization '${values.org}' does not exist`);
    }
    orgId = org.id;
  }
  const objects =
    options.objects ?? new S3EvidenceStore(config.s3, pino({ level: config.logLevel }, pino.destination(2)));
  const started = Date.now();
  try {
    const result = await moveEvidence(db, {
      to,
      objects,
      orgId,
      batch,
      now: () => new Date(),
      onBatch: async (p) => {
        const mib = (p.bytes / 1048576).toFixed(1);
        write(
          `moved ${p.moved} files (${mib} MiB) to ${to}; ${p.remaining} to go; ${p.failed.length} failed`,
        );
        await options.onBatch?.(p);
      },
    });
    for (const f of result.failed) {
      write(`not moved: org ${f.orgId} sha256 ${f.sha256}: ${f.reason}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    write(`done in ${seconds} s: ${result.moved} moved, ${result.failed.length} not moved`);
    return result.failed.length > 0 ? 1 : 0;
  } finally {
    if (!options.objects) {
      objects.close();
    }
  }
}
