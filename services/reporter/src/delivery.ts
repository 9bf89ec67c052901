/**
 * Delivery of one environment's reports. One slot holds the newest state not yet delivered: a
 * newer state replaces it, so memory stays bounded however long the API is away, and when it
 * returns one PUT carries the newest state. Network errors, 409, 429 and 5xx are retried with
 * exponential backoff and jitter (a Retry-After is followed); other 4xx are final.
 *
 * The retry loop is written here rather than taken from a retry library: a retry must send the
 * newest state rather than the one that failed, follow Retry-After, and wait on an injectable
 * timer so tests can observe the delays without waiting them out.
 */
import { isRetryable, retryAfterMs } from '../../shared/client/index.js';

/** Retry timing. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** Longest Retry-After followed, so a bad header cannot park a reporter for days. */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * The wait before retry number `attempt` (1-based): the server's Retry-After when it sent one,
 * else half the exponential step plus a random share of the other half ("equal jitter"), so
 * reporters that lost the API together do not come back together.
 */
export function retryDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: number,
  retryAfter?: number,
): number {
  if (retryAfter !== undefined) {
    return Math.min(Math.max(0, retryAfter), MAX_RETRY_AFTER_MS);
  }
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random * (step / 2));
}

/** An error no retry can fix (e.g. the environment exists with another type). */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

/** Whether a failed delivery is worth retrying. */
export function shouldRetry(err: unknown): boolean {
  return !(err instanceof PermanentError) && isRetryable(err);
}

export interface DeliveryHooks<T> {
  accepted(item: T, attempts: number): void;
  rejected(item: T, err: unknown): void;
  retrying(item: T, err: unknown, delayMs: number, attempt: number): void;
}

/** Waits `ms` unless the signal aborts first. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) {
      return resolve();
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Sends the newest submitted item, retrying until it is accepted, rejected or stopped. */
export class LatestOnlyDelivery<T> {
  private pending: T | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly send: (item: T) => Promise<void>,
    private readonly hooks: DeliveryHooks<T>,
    private readonly policy: BackoffPolicy,
    private readonly sleep: Sleep = realSleep,
    private readonly random: () => number = Math.random,
  ) {}

  /** Hands over a state; it replaces any state not yet sent. */
  submit(item: T): void {
    if (this.abort.signal.aborted) {
      return;
    }
    this.pending = item;
    this.running ??= this.run().finally(() => {
      this.running = undefined;
      // A state submitted while the last attempt was settling starts a new run.
      if (this.pending !== undefined && !this.abort.signal.aborted) {
        this.submit(this.pending);
      }
    });
  }

  /** Whether a state is waiting or being sent. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Resolves when nothing is waiting or being sent. */
  async idle(): Promise<void> {
    while (this.running) {
      await this.running;
    }
  }

  /** Stops retrying; a request in flight completes, nothing new is sent. */
  stop(): void {
    this.abort.abort();
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (this.pending !== undefined && !this.abort.signal.aborted) {
      const item = this.pending;
      this.pending = undefined;
      attempt += 1;
      try {
        await this.send(item);
        this.hooks.accepted(item, attempt);
        attempt = 0;
      } catch (err) {
        if (!shouldRetry(err)) {
          this.hooks.rejected(item, err);
          attempt = 0;
          continue;
        }
        // Keep the failed state unless a newer one arrived meanwhile.
        this.pending ??= item;
        const delay = retryDelay(attempt, this.policy, this.random(), retryAfterMs(err));
        this.hooks.retrying(item, err, delay, attempt);
        await this.sleep(delay, this.abort.signal);
      }
    }
  }
}
