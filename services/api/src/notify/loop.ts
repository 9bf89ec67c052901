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
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    if (!this.running) return;
    if (this.busy) {
      this.pending = true;
      return;
    }
    this.busy = this.task()
      .then(() => undefined)
      .catch((err: unknown) => this.log.error({ err, task: this.name }, 'background task failed'))
      .finally(() => {
        this.busy = null;
        if (this.running) this.schedule(this.pending ? 0 : this.intervalMs);
        this.pending = false;
      });
  }

  /** Runs the task as soon as possible (after the round in flight, if any). */
  kick(): void {
    if (!this.running) return;
    if (this.busy) this.pending = true;
    else this.schedule(0);
  }

  /** Stops and waits for the round in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
  }
}
