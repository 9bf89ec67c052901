/**
 * A report as the runtime compares it: grouped by fingerprint, each with the hash of its instance
 * details, and the hash of the whole (spec rule 2), computed without holding the event loop.
 */
import { createHash } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { groupReportInSlices, reportKey, SLICE, type ReportEntry } from '../../domain/snapshot-diff.js';
import type { ReportedState } from '../../domain/snapshot-plan.js';
import { sha256 } from '../../sha256.js';

/**
 * Groups and hashes a report in slices of SLICE fingerprints, letting the event loop turn between
 * them: at the cap (MAX_REPORT_ARTIFACTS) this is seconds of CPU that would otherwise hold every
 * other request. The report hash is sha256 of reportKey(grouped), fed a line at a time.
 */
export async function groupAndHash(entries: readonly ReportEntry[]) {
  const steps = groupReportInSlices(entries);
  let step = steps.next();
  while (!step.done) {
    await turn();
    step = steps.next();
  }
  const grouped: ReportedState[] = [];
  const report = createHash('sha256');
  for (const a of step.value) {
    if (grouped.length % SLICE === SLICE - 1) {
      await turn();
    }
    const line = reportKey([a]);
    report.update(grouped.length === 0 ? line : `\n${line}`);
    grouped.push({ ...a, detailHash: sha256(a.detailKey), instanceCount: a.instances.length });
  }
  return { grouped, reportHash: report.digest('hex') };
}
