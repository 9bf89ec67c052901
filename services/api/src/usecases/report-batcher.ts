/**
 * Stores concurrent reports without the trail's lock in shared statements: the reports that
 * arrive while earlier ones are being stored wait and go together, with one read of every trail
 * they name and one conditioned write (`trailsRepository.readForReports`,
 * `attestationsRepository.insertReports`). Statement, plan and commit costs are paid once per
 * batch instead of once per report, which is where a single report's time went.
 *
 * A trail this batcher wrote last is not read again: it is remembered as that write left it, with
 * the new row versions. Where reports keep coming to the same trails, batches then take one
 * statement, the write.
 *
 * A batch changes nothing a report sees: each is planned on its trail as read (or remembered) plus
 * the reports before it in the same batch, and a trail is written only if nobody else wrote it or
 * its flow since (the rows' versions) and the names the reports used still name its flow, with all
 * of its reports in order. Reports planned on a remembered trail that has changed, or whose plan
 * failed there (an artifact reported since, say), are planned again on a new read. What a batch
 * cannot store goes back to the caller, who retries or takes the trail's lock; so does everything
 * after a failed statement, to fail or succeed alone.
 */
import type { Db } from '../storage/database.js';
import type { StoredReport, TrailReports } from '../storage/repositories/attestations.js';
import { attestationsRepository } from '../storage/repositories/attestations.js';
import { trailsRepository, type ReportRead, type TrailFacts } from '../storage/repositories/trails.js';
import { LruMap } from '../lru-map.js';
import { isDatabaseUnavailable } from '../storage/errors.js';

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
  /** Sent back once already, after a remembered read turned out stale: read afresh. */
  retried?: boolean;
  /** Resolved or rejected: its caller has its answer. */
  settled?: boolean;
}

export interface ReportBatcherOptions {
  /** Reports per batch at most. */
  maxBatch?: number;
  /** Batches in flight at once (each holds a database connection while it runs). */
  maxInFlight?: number;
  /** Trails remembered as this batcher last wrote them, at most. */
  maxRemembered?: number;
}

/** Reports to one trail in one batch. */
interface Chain {
  /** What they were planned on: read now, or remembered from this batcher's last write. */
  read: ReportRead;
  remembered: boolean;
  /** The trail as the reports planned so far leave it. */
  state: ReportRead;
  /** The flow names the reports were sent to (a flow's current name or an old one). */
  flowNames: Set<string>;
  /** The names the reports were sent by (`keyOf`). */
  keys: Set<string>;
  /** A report must take the trail's lock: the ones after it must not overtake it. */
  blocked: boolean;
  /** The remembered read is out of date: every report goes back to be planned on a new read. */
  stale: boolean;
  pending: Pending[];
  planned: Array<{ p: Pending; report: PlannedReport }>;
}

export class ReportBatcher {
  private queue: Pending[] = [];
  /** Trails (by the names reports give) in a batch in flight, and how many batches hold each. */
  private readonly busy = new Map<string, number>();
  /**
   * Trails as this batcher's last write to each left them (with the new row versions), by the
   * names reports give. Planning on one saves the read; the write's conditions catch any change
   * made elsewhere since, and the reports then go back to be planned on a new read.
   */
  private readonly remembered: LruMap<ReportRead>;
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
    this.remembered = new LruMap(options.maxRemembered ?? 5_000);
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
    const known = batch.map((p) => (p.retried ? undefined : this.remembered.get(keyOf(p.report))));
    const unknown = batch.filter((_, i) => !known[i]);
    let fresh: Array<ReportRead | undefined> = [];
    if (unknown.length > 0) {
      try {
        fresh = await trailsRepository.readForReports(
          this.db,
          unknown.map(({ report: r }) => ({ orgId: r.orgId, flowName: r.flowName, trailName: r.trailName })),
        );
      } catch (err) {
        // The database is away: trying each report on its own would only wait for it again.
        if (isDatabaseUnavailable(err)) return this.fail(batch, err);
        // Each report takes the trail's lock on its own, and fails there with its own error if it must.
        for (const p of batch) this.settle(p, 'locked');
        return;
      }
    }
    const chains = new Map<string, Chain>();
    let nextFresh = 0;
    batch.forEach((p, i) => {
      const read = known[i] ?? fresh[nextFresh++];
      if (!read) return this.settle(p, 'missing');
      const key = `${read.trail.org_id}:${read.trail.id}`;
      let chain = chains.get(key);
      if (!chain) {
        chain = {
          read,
          remembered: known[i] !== undefined,
          state: read,
          flowNames: new Set(),
          keys: new Set(),
          blocked: false,
          stale: false,
          pending: [],
          planned: [],
        };
        chains.set(key, chain);
      }
      chain.keys.add(keyOf(p.report));
      chain.flowNames.add(p.report.flowName);
      chain.pending.push(p);
      if (chain.stale) return;
      // Stored after a report that could not be stored here, it would overtake it.
      if (chain.blocked) return this.settle(p, 'conflict');
      let planned: PlannedReport | undefined;
      try {
        planned = p.report.plan(chain.state);
      } catch (err) {
        // Planned on a remembered trail, the answer may be out of date (an artifact reported since).
        if (chain.remembered) chain.stale = true;
        else {
          p.settled = true;
          p.reject(err);
        }
        return;
      }
      if (!planned) {
        chain.blocked = true;
        return this.settle(p, 'locked');
      }
      chain.planned.push({ p, report: planned });
      chain.state = after(chain.state, planned);
    });
    const writes = [...chains.values()].filter((c) => !c.stale && c.planned.length > 0);
    let stored = new Map<string, string>();
    if (writes.length > 0) {
      try {
        stored = await attestationsRepository.insertReports(
          this.db,
          writes.map((c) => {
            const last = c.planned[c.planned.length - 1]!.report;
            return {
              orgId: c.read.trail.org_id,
              trailId: c.read.trail.id,
              ifUnchanged: {
                version: c.read.version,
                flowVersion: c.read.flowVersion,
                flowNames: [...c.flowNames],
              },
              trail: last.trail,
              facts: last.facts,
              reports: c.planned.map(({ report }) => ({ row: report.row, event: report.event })),
            };
          }),
        );
      } catch (err) {
        for (const c of chains.values()) {
          this.forget(c);
          if (isDatabaseUnavailable(err)) this.fail(c.pending, err);
          else for (const p of c.pending) if (!p.settled) this.settle(p, 'locked');
        }
        return;
      }
    }
    const again: Pending[] = [];
    for (const c of chains.values()) {
      const version = stored.get(`${c.read.trail.org_id}:${c.read.trail.id}`);
      if (version !== undefined) {
        for (const { p } of c.planned) this.settle(p, 'stored');
        if (c.blocked) this.forget(c);
        else for (const k of c.keys) this.remembered.set(k, { ...c.state, version });
        continue;
      }
      this.forget(c);
      // Planned on a remembered trail that has changed since: plan them again on a new read.
      if (c.remembered) again.push(...c.pending.filter((p) => !p.settled));
      else for (const { p } of c.planned) this.settle(p, 'conflict');
    }
    this.sendBack(again);
  }

  /** Fails the reports not settled yet with `err` (their write may or may not have committed). */
  private fail(reports: Pending[], err: unknown): void {
    for (const p of reports) {
      if (p.settled) continue;
      p.settled = true;
      p.reject(err);
    }
  }

  private settle(p: Pending, outcome: BatchOutcome): void {
    p.settled = true;
    p.resolve(outcome);
  }

  private forget(chain: Chain): void {
    for (const k of chain.keys) this.remembered.delete(k);
  }

  /**
   * Reports to plan again, ahead of those that came after them; a report already sent back once
   * goes to its caller to try again.
   */
  private sendBack(reports: Pending[]): void {
    const again: Pending[] = [];
    for (const p of reports) {
      if (p.retried) this.settle(p, 'conflict');
      else again.push({ ...p, retried: true, settled: false });
    }
    this.queue.unshift(...again);
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
