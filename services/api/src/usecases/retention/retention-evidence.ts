/**
 * The retention passes over evidence: trails (with everything of theirs, and the evidence files
 * no remaining attestation names) and evidence files past their own period.
 */
import {
  appliedPeriod,
  heldRangesOfFlow,
  type AppliedPeriod,
  type HeldRange,
  type HoldScope,
  type RetentionClasses,
} from '../../domain/retention.js';
import { retentionRepository, type Cursor } from '../../storage/repositories/retention.js';
import { FRESH_FILE_MS, cutoffOf, pause, record, type OrgRun } from './retention-batch.js';

/** Attestations of a batch's trails, all told. */
const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, n) => a + n, 0);

export async function removeTrails(
  run: OrgRun,
  flow: { id: string; name: string },
  applied: AppliedPeriod,
  held: HeldRange[],
): Promise<void> {
  const { o, org, report } = run;
  const before = cutoffOf(applied, run.asOf);
  let after: Cursor | null = null;
  let count = 0;
  for (;;) {
    const batch = await o.db.transaction().execute(async (trx) => {
      const trails = await retentionRepository.expiredTrails(
        trx,
        org.id,
        flow.id,
        before,
        held,
        after,
        o.batchSize,
      );
      if (trails.length === 0) {
        return null;
      }
      const ids = trails.map((t) => t.id);
      const contents = await retentionRepository.trailContents(trx, org.id, ids);
      if (o.dryRun) {
        const files = await retentionRepository.unnamed(trx, org.id, contents.digests, ids);
        return { trails, gone: ids, attestations: total(contents.attestations), files };
      }
      const gone = new Set(await retentionRepository.deleteTrails(trx, org.id, ids, contents.artifactIds));
      const unnamed = await retentionRepository.unnamed(trx, org.id, contents.digests, []);
      const storedBefore = new Date(o.clock().getTime() - FRESH_FILE_MS);
      const files = await o.store.remove(trx, org.id, unnamed, storedBefore);
      const removed = trails.filter((t) => gone.has(t.id));
      await record(run, trx, {
        kind: 'trails',
        count: removed.length,
        items: removed.map((t) => ({
          id: t.id,
          flow: flow.name,
          trail: t.name,
          attestations: contents.attestations.get(t.id) ?? 0,
        })),
        digests: files,
        rule: applied,
      });
      return { trails, gone: [...gone], attestations: total(contents.attestations), files };
    });
    if (!batch) {
      return;
    }
    const last = batch.trails[batch.trails.length - 1]!;
    after = { at: last.created_at, id: last.id };
    const goneNames = batch.trails
      .filter((t) => batch.gone.includes(t.id))
      .map((t) => `${flow.name}/${t.name}`);
    report.trails.push(...goneNames);
    report.attestations += batch.attestations;
    report.evidence_files.push(...batch.files.filter((f) => !report.evidence_files.includes(f)));
    count += goneNames.length;
    if (!(await pause(run, 'trails', count))) {
      return;
    }
  }
}

/** Per flow: the evidence file period, its cutoff, and the ranges holds keep. */
function fileRules(
  run: OrgRun,
  classes: RetentionClasses,
  holds: HoldScope[],
  flows: Array<{ id: string; name: string }>,
) {
  const rules = new Map<string, AppliedPeriod>();
  const cutoffs = new Map<string, Date>();
  const heldByFlow = new Map<string, HeldRange[]>();
  for (const flow of flows) {
    const applied = appliedPeriod(
      classes,
      'evidence_files_days',
      { kind: 'flow', name: flow.name },
      run.o.minimum,
    );
    if (applied) {
      rules.set(flow.id, applied);
      cutoffs.set(flow.id, cutoffOf(applied, run.asOf));
    }
    const held = heldRangesOfFlow(holds, flow.name);
    if (held.length > 0) {
      heldByFlow.set(flow.id, held);
    }
  }
  return { rules, cutoffs, heldByFlow };
}

/**
 * Files whose every naming attestation has passed its flow's evidence file period (and is in no
 * held trail), found through the attestations of each flow with such a period; the attestations
 * stay, without their file.
 */
export async function removeFiles(
  run: OrgRun,
  classes: RetentionClasses,
  holds: HoldScope[],
  flows: Array<{ id: string; name: string }>,
): Promise<void> {
  const { o, org, report } = run;
  const { rules, cutoffs, heldByFlow } = fileRules(run, classes, holds, flows);
  const seen = new Set(report.evidence_files);
  let count = 0;
  for (const flow of flows) {
    const applied = rules.get(flow.id);
    if (!applied) {
      continue;
    }
    let after: Cursor | null = null;
    for (;;) {
      const batch = await o.db.transaction().execute(async (trx) => {
        const rows = await retentionRepository.expiredFileAttestations(
          trx,
          org.id,
          flow.id,
          cutoffs.get(flow.id)!,
          heldByFlow.get(flow.id) ?? [],
          after,
          o.batchSize,
        );
        if (rows.length === 0) {
          return null;
        }
        const digests = [...new Set(rows.map((r) => r.evidence_sha256))].filter((d) => !seen.has(d));
        const past = await retentionRepository.filesPastPeriod(trx, org.id, digests, cutoffs, heldByFlow);
        if (o.dryRun) {
          // Only files still stored: a file whose attestations stay may have gone in an earlier run.
          const stored = await Promise.all(
            past.map(async (d) => ((await o.store.stat(trx, org.id, d)) ? d : null)),
          );
          return { rows, files: stored.filter((d): d is string => d !== null) };
        }
        const storedBefore = new Date(o.clock().getTime() - FRESH_FILE_MS);
        const files = await o.store.remove(trx, org.id, past, storedBefore);
        if (files.length > 0) {
          await record(run, trx, {
            kind: 'evidence_files',
            count: files.length,
            items: [],
            digests: files,
            rule: applied,
          });
        }
        return { rows, files };
      });
      if (!batch) {
        break;
      }
      const last = batch.rows[batch.rows.length - 1]!;
      after = { at: last.created_at, id: last.id };
      for (const f of batch.files) {
        seen.add(f);
        report.evidence_files.push(f);
      }
      count += batch.files.length;
      if (!(await pause(run, 'evidence_files', count))) {
        return;
      }
    }
  }
}
