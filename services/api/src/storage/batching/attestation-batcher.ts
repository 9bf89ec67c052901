/**
 * Stores concurrent attestations without the trail's lock in shared statements: the attestations that
 * arrive while earlier ones are being stored wait and go together, with one read of every trail
 * they name and one conditioned write (`trailStore.readTrailsForAttestations`,
 * `trailStore.insertAttestationBatch`). Statement, plan and commit costs are paid once per
 * batch instead of once per attestation, which is where a single attestation's time went.
 *
 * A trail this batcher wrote last is not read again: it is remembered as that write left it, with
 * the new row versions. Where attestations keep coming to the same trails, batches then take one
 * statement, the write.
 *
 * A batch changes nothing an attestation sees: each is planned on its trail as read (or remembered) plus
 * the attestations before it in the same batch, and a trail is written only if nobody else wrote it or
 * its flow since (the rows' versions) and the names the attestations used still name its flow, with all
 * of its attestations in order. Attestations planned on a remembered trail that has changed, or whose plan
 * failed there (an artifact reported since, say), are planned again on a new read. What a batch
 * cannot store goes back to the caller, who retries or takes the trail's lock; so does everything
 * after a failed statement, to fail or succeed alone.
 */
import type { Db } from '../database.js';
import { trailStore, type AttestationTrailRead } from '../trail-store/index.js';
import { LruMap } from '../../lru-map.js';
import { isDatabaseAway, isDatabaseUnavailable } from '../errors.js';
import {
  addPlanned,
  batchOf,
  newChain,
  written,
  type Chain as ChainOf,
  type PlannedAttestation,
  type Read,
} from './attestation-chain.js';

export type { PlannedAttestation } from './attestation-chain.js';

export interface BatchedAttestation {
  orgId: string;
  flowName: string;
  trailName: string;
  /**
   * Plans the attestation on the trail as read (and as the attestations before it in the batch left it);
   * undefined when it must take the trail's lock (a subscriber has work). Throws what the attestation's caller should see (an unknown fingerprint, say).
   */
  plan(read: AttestationTrailRead): PlannedAttestation | undefined;
}

/**
 * stored: written. missing: no such flow or trail. locked: store it under the trail's lock.
 * conflict: someone wrote the trail since the read (or an attestation before it in the batch could not
 * be stored here): try again.
 */
export type BatchOutcome = 'stored' | 'missing' | 'locked' | 'conflict';

interface Pending {
  attestation: BatchedAttestation;
  resolve(outcome: BatchOutcome): void;
  reject(err: unknown): void;
  /** Sent back once already, after a remembered read turned out stale: read afresh. */
  retried?: boolean;
  /** Resolved or rejected: its caller has its answer. */
  settled?: boolean;
}

export interface AttestationBatcherOptions {
  /** Attestations per batch at most. */
  maxBatch?: number;
  /** Batches in flight at once (each holds a database connection while it runs). */
  maxInFlight?: number;
  /**
   * While a batch is in flight, attestations waiting before the next one starts (default: half
   * of maxBatch). The first batch starts at once.
   */
  minWaitingWhileBusy?: number;
  /** Trails remembered as this batcher last wrote them, at most. */
  maxRemembered?: number;
  /** Called once a batch's write committed re-evaluation marks (to wake their worker). */
  onMarked?: () => void;
}

type Chain = ChainOf<Pending>;

export class AttestationBatcher {
  private queue: Pending[] = [];
  /**
   * Trails (by the names attestations give) in a batch in flight or an exclusive write, and how
   * many of those hold each.
   */
  private readonly busy = new Map<string, number>();
  /**
   * Trails as this batcher's last write to each left them (with the new row versions), by the
   * names attestations give. Planning on one saves the read; the write's conditions catch any change
   * made elsewhere since, and the attestations then go back to be planned on a new read.
   */
  private readonly remembered: LruMap<AttestationTrailRead>;
  private inFlight = 0;
  private scheduled = false;
  /** Closed: new attestations take the trail's lock; `close` waits for the batches under way. */
  private closed = false;
  private readonly drained: Array<() => void> = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly minWaitingWhileBusy: number;
  private readonly onMarked: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    options: AttestationBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.minWaitingWhileBusy = options.minWaitingWhileBusy ?? Math.ceil(this.maxBatch / 2);
    this.remembered = new LruMap(options.maxRemembered ?? 5_000);
    this.onMarked = options.onMarked;
  }

  submit(attestation: BatchedAttestation): Promise<BatchOutcome> {
    if (this.closed) {
      return Promise.resolve('locked');
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ attestation, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Runs `write`, a write to the trail outside any batch (under the trail's lock), holding back
   * the attestations to the trail meanwhile: planned on a read taken before it commits, they would
   * only meet its write. Without this, attestations that met locked writes twice take the lock
   * themselves, and while 64 callers write to one trail, that feeds itself: every batch meets a
   * locked write and sends its attestations to the lock, about 15 times slower.
   */
  async exclusive<T>(trail: TrailKey, write: () => Promise<T>): Promise<T> {
    const key = keyOf(trail);
    this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
    try {
      return await write();
    } finally {
      this.release([key]);
      this.schedule();
    }
  }

  /** Takes no more attestations and resolves once every batch under way has answered. */
  close(): Promise<void> {
    this.closed = true;
    return this.idle() ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private idle(): boolean {
    return this.inFlight === 0 && this.queue.length === 0 && !this.scheduled;
  }

  /**
   * Whether another batch may start now. With one in flight, the next waits until it ends or
   * until half a batch is waiting: each statement costs PostgreSQL about a millisecond of CPU
   * besides its rows (setting up its many parts, its statement triggers, its commit), and small
   * batches started one after another paid it for a handful of rows each. Under 64 callers this
   * cut PostgreSQL's CPU per attestation by about a fifth, with a lower median latency
   * (bench/README.md, "Batches").
   */
  private mayStart(): boolean {
    return (
      this.inFlight < this.maxInFlight &&
      this.queue.length > 0 &&
      (this.inFlight === 0 || this.queue.length >= this.minWaitingWhileBusy)
    );
  }

  private schedule(): void {
    if (this.scheduled || !this.mayStart()) {
      return;
    }
    this.scheduled = true;
    // Whatever else arrives in this turn of the event loop joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      while (this.mayStart()) {
        const batch = this.take();
        if (batch.length === 0) {
          return;
        }
        const keys = [...new Set(batch.map((p) => keyOf(p.attestation)))];
        for (const k of keys) {
          this.busy.set(k, (this.busy.get(k) ?? 0) + 1);
        }
        this.inFlight += 1;
        void this.run(batch).finally(() => {
          this.release(keys);
          this.inFlight -= 1;
          this.schedule();
          if (this.idle()) {
            this.drained.splice(0).forEach((resolve) => resolve());
          }
        });
      }
    });
  }

  /**
   * The next batch: queued attestations in order, except those to a trail a batch in flight holds.
   * Those would only meet its write and try again; they wait for the next batch instead.
   */
  private take(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const p of this.queue) {
      if (batch.length < this.maxBatch && !this.busy.has(keyOf(p.attestation))) {
        batch.push(p);
      } else {
        rest.push(p);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Pending[]): Promise<void> {
    const reads = await this.read(batch);
    if (!reads) {
      return;
    }
    const chains = this.plan(batch, reads);
    const stored = await this.write(chains);
    if (stored) {
      this.sendBack(this.settleWrites(chains, stored));
    }
  }

  /**
   * The trail each attestation is planned on: remembered, or read now (undefined: no such flow or
   * trail). Undefined when the read failed; every attestation of the batch is then settled.
   */
  private async read(batch: Pending[]): Promise<Array<Read | undefined> | undefined> {
    const known = batch.map((p) => (p.retried ? undefined : this.remembered.get(keyOf(p.attestation))));
    const unknown = batch.filter((_, i) => !known[i]);
    let fresh: Array<AttestationTrailRead | undefined> = [];
    if (unknown.length > 0) {
      try {
        fresh = await trailStore.readTrailsForAttestations(
          this.db,
          unknown.map(({ attestation: r }) => ({
            orgId: r.orgId,
            flowName: r.flowName,
            trailName: r.trailName,
          })),
        );
      } catch (err) {
        // The database is away: trying each attestation on its own would only wait for it again.
        if (isDatabaseUnavailable(err)) {
          this.fail(batch, err);
          if (isDatabaseAway(err)) {
            this.failWaiting(err);
          }
          return undefined;
        }
        // Each attestation takes the trail's lock on its own, and fails there with its own error if it must.
        for (const p of batch) {
          this.settle(p, 'locked');
        }
        return undefined;
      }
    }
    let nextFresh = 0;
    return known.map((read) => {
      if (read) {
        return { read, remembered: true };
      }
      const r = fresh[nextFresh++];
      return r ? { read: r, remembered: false } : undefined;
    });
  }

  /** Plans each attestation on its trail, in order, grouped in one chain per trail. */
  private plan(batch: Pending[], reads: Array<Read | undefined>): Map<string, Chain> {
    const chains = new Map<string, Chain>();
    batch.forEach((p, i) => {
      const found = reads[i];
      if (!found) {
        return this.settle(p, 'missing');
      }
      const key = `${found.read.trail.org_id}:${found.read.trail.id}`;
      let chain = chains.get(key);
      if (!chain) {
        chain = newChain<Pending>(found);
        chains.set(key, chain);
      }
      this.planOne(chain, p);
    });
    return chains;
  }

  private planOne(chain: Chain, p: Pending): void {
    chain.keys.add(keyOf(p.attestation));
    chain.flowNames.add(p.attestation.flowName);
    chain.pending.push(p);
    if (chain.stale) {
      return;
    }
    // Stored after an attestation that could not be stored here, it would overtake it.
    if (chain.blocked) {
      return this.settle(p, 'conflict');
    }
    let planned: PlannedAttestation | undefined;
    try {
      planned = p.attestation.plan(chain.state);
    } catch (err) {
      // Planned on a remembered trail, the answer may be out of date (an artifact recorded since).
      if (chain.remembered) {
        chain.stale = true;
      } else {
        p.settled = true;
        p.reject(err);
      }
      return;
    }
    if (!planned) {
      chain.blocked = true;
      return this.settle(p, 'locked');
    }
    addPlanned(chain, p, planned);
  }

  /**
   * Writes every chain with something planned in one statement; returns the trails written with
   * their new versions, or undefined when the statement failed (every attestation then settled).
   */
  private async write(chains: Map<string, Chain>): Promise<Map<string, string> | undefined> {
    const writes = [...chains.values()].filter((c) => !c.stale && c.planned.length > 0);
    if (writes.length === 0) {
      return new Map();
    }
    try {
      const stored = await trailStore.insertAttestationBatch(this.db, writes.map(batchOf));
      if (stored.marks > 0) {
        this.onMarked?.();
      }
      return stored;
    } catch (err) {
      for (const c of chains.values()) {
        this.forget(c);
        if (isDatabaseUnavailable(err)) {
          this.fail(c.pending, err);
          continue;
        }
        c.pending.filter((p) => !p.settled).forEach((p) => this.settle(p, 'locked'));
      }
      if (isDatabaseAway(err)) {
        this.failWaiting(err);
      }
      return undefined;
    }
  }

  /** Answers what was written and remembers its trails; returns what to plan again on a new read. */
  private settleWrites(chains: Map<string, Chain>, stored: Map<string, string>): Pending[] {
    const again: Pending[] = [];
    for (const c of chains.values()) {
      const version = stored.get(`${c.read.trail.org_id}:${c.read.trail.id}`);
      if (version !== undefined) {
        for (const { p } of c.planned) {
          this.settle(p, 'stored');
        }
        if (c.blocked) {
          this.forget(c);
        } else {
          for (const k of c.keys) {
            this.remembered.set(k, written(c, version));
          }
        }
        continue;
      }
      this.forget(c);
      // Planned on a remembered trail that has changed since: plan them again on a new read.
      if (c.remembered) {
        again.push(...c.pending.filter((p) => !p.settled));
      } else {
        for (const { p } of c.planned) {
          this.settle(p, 'conflict');
        }
      }
    }
    return again;
  }

  /**
   * The database went away under a batch: the attestations that waited for it (to the same
   * trails, or for a free slot) would each wait out another deadline before failing, so the
   * wait of one attestation would add up. They fail now with the same error (503); attestations
   * that arrive from now on try again. Not for a statement that ran out of time (57014): that
   * may be one organization's statement, and must not fail the others' waiting attestations.
   */
  private failWaiting(err: unknown): void {
    const waiting = this.queue;
    this.queue = [];
    this.fail(waiting, err);
  }

  /** Fails the attestations not settled yet with `err` (their write may or may not have committed). */
  private fail(attestations: Pending[], err: unknown): void {
    for (const p of attestations) {
      if (p.settled) {
        continue;
      }
      p.settled = true;
      p.reject(err);
    }
  }

  /** A batch or an exclusive write no longer holds these trails. */
  private release(keys: readonly string[]): void {
    for (const k of keys) {
      const n = (this.busy.get(k) ?? 1) - 1;
      if (n > 0) {
        this.busy.set(k, n);
      } else {
        this.busy.delete(k);
      }
    }
  }

  private settle(p: Pending, outcome: BatchOutcome): void {
    p.settled = true;
    p.resolve(outcome);
  }

  private forget(chain: Chain): void {
    for (const k of chain.keys) {
      this.remembered.delete(k);
    }
  }

  /**
   * Attestations to plan again, ahead of those that came after them; an attestation already sent back once
   * goes to its caller to try again.
   */
  private sendBack(attestations: Pending[]): void {
    const again: Pending[] = [];
    for (const p of attestations) {
      if (p.retried) {
        this.settle(p, 'conflict');
      } else {
        again.push({ ...p, retried: true, settled: false });
      }
    }
    this.queue.unshift(...again);
  }
}

/** A trail as attestations name it. */
export type TrailKey = Pick<BatchedAttestation, 'orgId' | 'flowName' | 'trailName'>;

const keyOf = (r: TrailKey) => `${r.orgId}\u0000${r.flowName}\u0000${r.trailName}`;
