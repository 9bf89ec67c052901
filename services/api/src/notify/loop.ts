/**
 * A background task run every `intervalMs` and at once when kicked, never twice at the same
 * time, stopped cleanly (the round in flight is awaited) when the app closes.
 */
import type { FastifyBaseLogger } from 'fastify';

export class Loop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private busy: Promise<void> | null = null;
  private pending = false;
  /** Rounds failed in a row: the next waits longer (the database may be down). */
  private failures = 0;

  constructor(
    private readonly name: string,
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    if (!this.running) {
      return;
    }
    if (this.busy) {
      this.pending = true;
      return;
    }
    this.busy = this.task()
      .then(() => {
        if (this.failures > 0) {
          this.log.info({ task: this.name }, 'background task recovered');
        }
        this.failures = 0;
      })
      .catch((err: unknown) => {
        this.failures += 1;
        this.log.error({ err, task: this.name, failures: this.failures }, 'background task failed');
      })
      .finally(() => {
        this.busy = null;
        if (this.running) {
          this.schedule(this.pending ? 0 : this.failures > 0 ? this.backoff() : this.intervalMs);
        }
        this.pending = false;
      });
  }

  /**
   * After failures: from a second (or the interval, if shorter) doubling up to five seconds (or
   * the interval, if longer), with jitter so replicas do not retry in step.
   */
  private backoff(): number {
    const base = Math.min(this.intervalMs, 1_000) * 2 ** Math.min(this.failures - 1, 10);
    const ms = Math.min(base, Math.max(this.intervalMs, 5_000));
    return Math.round(ms * (0.5 + Math.random() / 2));
  }

  /** Runs the task as soon as possible (after the round in flight, if any). */
  kick(): void {
    if (!this.running) {
      return;
    }
    if (this.busy) {
      this.pending = true;
    } else {
      this.schedule(0);
    }
  }

  /** Stops and waits for the round in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) {
      clearTimeout(this.timer);
    }
    await this.busy;
  }
}
