/**
 * A work queue for reconcile keys, after client-go's: a key waits at most once however often it
 * is added, is never handed to two workers at once (an add while it is being processed runs it
 * again afterwards), and failures are retried with per-key exponential backoff.
 */

export interface WorkQueueOptions {
  /** First retry delay after a failure. */
  baseDelayMs?: number;
  /** Longest retry delay. */
  maxDelayMs?: number;
  /** Timer functions; tests may substitute their own. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

/** The delay before retry number `failures` (1-based): base * 2^(failures-1), capped. */
export function backoffDelay(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirtyWhileProcessing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, unknown>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 5 * 60_000;
    this.setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
    this.clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as NodeJS.Timeout));
  }

  /** Queues a key now (deduplicated). */
  add(key: string): void {
    if (this.shuttingDown) {
      return;
    }
    const timer = this.delayed.get(key);
    if (timer !== undefined) {
      this.clearTimer(timer);
      this.delayed.delete(key);
    }
    if (this.processing.has(key)) {
      this.dirtyWhileProcessing.add(key);
      return;
    }
    if (this.queued.has(key)) {
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
  }

  /** Queues a key after a delay; an earlier pending delay for it is kept if sooner. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) {
      return;
    }
    if (ms <= 0) {
      return this.add(key);
    }
    if (this.delayed.has(key) || this.queued.has(key)) {
      return;
    }
    this.delayed.set(
      key,
      this.setTimer(() => {
        this.delayed.delete(key);
        this.add(key);
      }, ms),
    );
  }

  /** Re-queues a key after its next backoff delay; returns that delay. */
  addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const delay = backoffDelay(n, this.baseDelayMs, this.maxDelayMs);
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears a key's failure count after a success. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times in a row this key has failed. */
  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, waiting for one; undefined once shut down. */
  async get(): Promise<string | undefined> {
    if (this.shuttingDown) {
      return undefined;
    }
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      return key;
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a key processed; if it was added meanwhile it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirtyWhileProcessing.delete(key)) {
      this.add(key);
    }
  }

  /** Keys waiting now (not delayed, not processing). */
  get length(): number {
    return this.queue.length;
  }

  /** Stops handing out keys; pending `get` calls resolve undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const timer of this.delayed.values()) {
      this.clearTimer(timer);
    }
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) {
      waiter(undefined);
    }
  }
}
