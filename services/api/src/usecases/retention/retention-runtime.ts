/** The retention passes over snapshots and the audit log. */
import type { AppliedPeriod, HeldRange } from '../../domain/retention.js';
import { retentionRepository } from '../../storage/repositories/retention.js';
import { cutoffOf, pause, record, type OrgRun } from './retention-batch.js';

export async function removeSnapshots(
  run: OrgRun,
  env: { id: string; name: string; latest_snapshot: number },
  applied: AppliedPeriod,
  held: HeldRange[],
): Promise<void> {
  const { o, org, report } = run;
  const before = cutoffOf(applied, run.asOf);
  let after = 0;
  let count = 0;
  for (;;) {
    const batch = await o.db.transaction().execute(async (trx) => {
      // The latest as it is now: a report may have made one since the run began.
      const latest = await trx
        .selectFrom('environments')
        .select('latest_snapshot')
        .where('org_id', '=', org.id)
        .where('id', '=', env.id)
        .executeTakeFirst();
      if (!latest) {
        return null;
      }
      const rows = await retentionRepository.expiredSnapshots(
        trx,
        org.id,
        env.id,
        before,
        latest.latest_snapshot,
        held,
        after,
        o.batchSize,
      );
      if (rows.length === 0) {
        return null;
      }
      const indexes = rows.map((r) => r.index);
      if (o.dryRun) {
        return { last: indexes[indexes.length - 1]!, removed: indexes };
      }
      const removed = await retentionRepository.deleteSnapshots(trx, org.id, env.id, indexes);
      await record(run, trx, {
        kind: 'snapshots',
        count: removed.length,
        items: removed.map((index) => ({ environment: env.name, index })),
        digests: [],
        rule: applied,
      });
      return { last: indexes[indexes.length - 1]!, removed };
    });
    if (!batch) {
      return;
    }
    after = batch.last;
    report.snapshots.push(...batch.removed.map((i) => `${env.name}#${i}`));
    count += batch.removed.length;
    if (!(await pause(run, 'snapshots', count))) {
      return;
    }
  }
}

export async function removeAuditEntries(
  run: OrgRun,
  applied: AppliedPeriod,
  held: HeldRange[],
): Promise<void> {
  const { o, org, report } = run;
  const before = cutoffOf(applied, run.asOf);
  let after: string | null = null;
  let count = 0;
  for (;;) {
    const batch = await o.db.transaction().execute(async (trx) => {
      const rows = await retentionRepository.expiredAuditEntries(
        trx,
        org.id,
        before,
        held,
        after,
        o.batchSize,
      );
      if (rows.length === 0) {
        return null;
      }
      const ids = rows.map((r) => String(r.id));
      if (o.dryRun) {
        return { last: ids[ids.length - 1]!, removed: ids.length };
      }
      const gone = await retentionRepository.deleteAuditEntries(trx, org.id, ids);
      await record(run, trx, {
        kind: 'audit_log',
        count: gone.length,
        items: [{ first_id: ids[0], last_id: ids[ids.length - 1] }],
        digests: [],
        rule: applied,
      });
      return { last: ids[ids.length - 1]!, removed: gone.length };
    });
    if (!batch) {
      return;
    }
    after = batch.last;
    report.audit_log += batch.removed;
    count += batch.removed;
    if (!(await pause(run, 'audit_log', count))) {
      return;
    }
  }
}
