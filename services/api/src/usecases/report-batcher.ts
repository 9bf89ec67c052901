/**
 * Stores concurrent reports without the trail's lock in shared statements: the reports that
 * arrive while earlier ones are being stored wait and go together, with one read of every trail
 * they name and one conditioned write (`trailsRepository.readForReports`,
 * `attestationsRepository.insertReports`). Statement, plan and commit costs are paid once per
 * batch instead of once per report, which is where a single report's time went.
 *
 * A batch changes nothing a report sees: each is planned on its trail as the read found it plus
 * the reports before it in the same batch, and a trail is written only if nobody else wrote it
 * since the read (its row version), with all of its reports in order. What a batch cannot store
 * goes back to the caller, who retries or takes the trail's lock; so does everything after a
 * failed statement, to fail or succeed alone.
 */
import type { Db } from '../storage/database.js';
import type { StoredReport, TrailReports } from '../storage/repositories/attestations.js';
import { attestationsRepository } from '../storage/repositories/attestations.js';
import { trailsRepository, type ReportRead, type TrailFacts } from '../storage/repositories/trails.js';

/** A report planned on a trail as read: its rows, the trail after it, and its facts after it. */
export interface PlannedReport extends StoredReport {
  trail: TrailReports['trail'];
  facts: TrailFacts;
}

export interface BatchedReport {
  orgId: string;
  flowName: string;
  trailName: string;
  /**
   * Plans the report on the trail as read (and as the reports before it in the batch left it);
   * undefined when it must take the trail's lock (it changes artifacts, or a subscriber has
   * work). Throws what the report's caller should see (an unknown fingerprint, say).
   */
  plan(read: ReportRead): PlannedReport | undefined;
}

/**
 * stored: written. missing: no such flow or trail. locked: store it under the trail's lock.
 * conflict: someone wrote the trail since the read (or a report before it in the batch could not
 * be stored here): try again.
 */
export type BatchOutcome = 'stored' | 'missing' | 'locked' | 'conflict';

interface Pending {
  report: BatchedReport;
  resolve(outcome: BatchOutcome): void;
  reject(err: unknown): void;
}

export interface ReportBatcherOptions {
  /** Reports per batch at most. */
  maxBatch?: number;
  /** Batches in flight at once (each holds a database connection while it runs). */
  maxInFlight?: number;
}

export class ReportBatcher {
  private queue: Pending[] = [];
  /** Trails (by the names reports give) in a batch in flight, and how many batches hold each. */
  private readonly busy = new Map<string, number>();
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly db: Db,
    options: ReportBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxInFlight = options.maxInFlight ?? 4;
  }

  submit(report: BatchedReport): Promise<BatchOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ report, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // Whatever else arrives in this turn of the event loop joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
        const batch = this.take();
        if (batch.length === 0) return;
        const keys = [...new Set(batch.map((p) => keyOf(p.report)))];
        for (const k of keys) this.busy.set(k, (this.busy.get(k) ?? 0) + 1);
        this.inFlight += 1;
        void this.run(batch).finally(() => {
          for (const k of keys) {
            const n = (this.busy.get(k) ?? 1) - 1;
            if (n > 0) this.busy.set(k, n);
            else this.busy.delete(k);
          }
          this.inFlight -= 1;
          this.schedule();
        });
      }
    });
  }

  /**
   * The next batch: queued reports in order, except those to a trail a batch in flight holds.
   * Those would only meet its write and try again; they wait for the next batch instead.
   */
  private take(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const p of this.queue) {
      if (batch.length < this.maxBatch && !this.busy.has(keyOf(p.report))) batch.push(p);
      else rest.push(p);
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Pending[]): Promise<void> {
    let reads: Array<ReportRead | undefined>;
    try {
      reads = await trailsRepository.readForReports(
        this.db,
        batch.map(({ report: r }) => ({ orgId: r.orgId, flowName: r.flowName, trailName: r.trailName })),
      );
    } catch {
      // Each report takes the trail's lock on its own, and fails there with its own error if it must.
      for (const p of batch) p.resolve('locked');
      return;
    }
    /** Per trail: the read, the trail as the batch's reports so far leave it, and those reports. */
    const chains = new Map<
      string,
      {
        read: ReportRead;
        state: ReportRead;
        blocked: boolean;
        planned: Array<{ p: Pending; report: PlannedReport }>;
      }
    >();
    batch.forEach((p, i) => {
      const read = reads[i];
      if (!read) return p.resolve('missing');
      const key = `${read.trail.org_id}:${read.trail.id}`;
      let chain = chains.get(key);
      if (!chain) chains.set(key, (chain = { read, state: read, blocked: false, planned: [] }));
      // Stored after a report that could not be stored here, it would overtake it.
      if (chain.blocked) return p.resolve('conflict');
      let planned: PlannedReport | undefined;
      try {
        planned = p.report.plan(chain.state);
      } catch (err) {
        return p.reject(err);
      }
      if (!planned) {
        chain.blocked = true;
        return p.resolve('locked');
      }
      chain.planned.push({ p, report: planned });
      chain.state = after(chain.state, planned);
    });
    const writes = [...chains.values()].filter((c) => c.planned.length > 0);
    if (writes.length === 0) return;
    let stored: Set<string>;
    try {
      stored = await attestationsRepository.insertReports(
        this.db,
        writes.map((c) => {
          const last = c.planned[c.planned.length - 1]!.report;
          return {
            orgId: c.read.trail.org_id,
            trailId: c.read.trail.id,
            ifVersion: c.read.version,
            trail: last.trail,
            facts: last.facts,
            reports: c.planned.map(({ report }) => ({ row: report.row, event: report.event })),
          };
        }),
      );
    } catch {
      for (const c of writes) for (const { p } of c.planned) p.resolve('locked');
      return;
    }
    for (const c of writes) {
      const outcome = stored.has(`${c.read.trail.org_id}:${c.read.trail.id}`) ? 'stored' : 'conflict';
      for (const { p } of c.planned) p.resolve(outcome);
    }
  }
}

const keyOf = (r: BatchedReport) => `${r.orgId}\u0000${r.flowName}\u0000${r.trailName}`;

/** The trail as a planned report leaves it, for planning the next report to it. */
function after(state: ReportRead, planned: PlannedReport): ReportRead {
  return {
    ...state,
    trail: {
      ...state.trail,
      compliance: JSON.parse(planned.trail.compliance as string) as ReportRead['trail']['compliance'],
      compliance_state: planned.trail.compliance_state as ReportRead['trail']['compliance_state'],
      evaluated_at: planned.trail.evaluated_at as Date,
      last_modified_at: planned.trail.last_modified_at as Date,
    },
    inputs: {
      artifacts: state.inputs.artifacts,
      attestations: planned.facts.attestations.map((a, i) => ({ ...a, seq: i + 1 })),
    },
  };
}

const batchers = new WeakMap<Db, ReportBatcher>();

/** The batcher for this database (one per pool; none inside a transaction). */
export function reportBatcher(db: Db): ReportBatcher | undefined {
  if (db.isTransaction) return undefined;
  let b = batchers.get(db);
  if (!b) batchers.set(db, (b = new ReportBatcher(db)));
  return b;
}
