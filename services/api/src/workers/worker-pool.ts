/**
 * A small pool of worker threads running tenant programs, each job with a heap limit and a time
 * limit: a worker that overruns is terminated and replaced, and the job fails with a clear
 * reason. Organizations queue apart and are served in turn. The custom-type evaluator
 * (custom-evaluator.ts) and the CEL policy engine (cel-evaluator.ts) each run one, with their
 * own worker file.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { TooManyRequestsError } from '../errors.js';

export interface EvaluatorLimits {
  timeoutMs: number;
  maxHeapMb: number;
  /** Worker threads in the pool. */
  workers: number;
  /** Jobs an organization may have waiting; more are refused with 429. */
  queuePerOrg: number;
}

/** Raised when an evaluation exceeds its time or memory bound. */
export class EvaluationLimitError extends Error {}

interface Job {
  id: number;
  org: string;
  message: Record<string, unknown>;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** What a worker sends back: that it is ready, or a job's result. */
interface Answer {
  id?: number;
  ok?: boolean;
  value?: unknown;
  error?: string;
  ready?: boolean;
}

/** One worker thread of the pool and the job it runs. */
interface Slot {
  worker: Worker | null;
  /** Where the worker's answers arrive. */
  answers: MessagePort | null;
  ready: boolean;
  current: { job: Job; timer: NodeJS.Timeout } | null;
}

/**
 * A small pool of workers, each running one bounded evaluation at a time. Jobs wait in one
 * bounded queue per organization, and free workers serve the organizations in turn
 * (round-robin), so one organization's slow rules hold at most its own share of the pool: with
 * more than one worker, an organization runs on all but one of them at most, and another
 * organization's job waits for at most one evaluation's time bound.
 */
export class WorkerPool {
  private readonly slots: Slot[];
  /** Queued jobs per organization; the map's order is the round-robin order. */
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Map<string, number>();
  private readonly perOrgRunning: number;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly limits: EvaluatorLimits,
    /** The worker thread's code: plain JavaScript, run as it is from the sources and from the build. */
    private readonly workerFile: URL,
    /** What every worker is given besides its answers port (cloned into each thread). */
    private readonly workerData: Record<string, unknown> = {},
  ) {
    const workers = Math.max(1, limits.workers ?? 1);
    this.slots = Array.from({ length: workers }, () => ({
      worker: null,
      answers: null,
      ready: false,
      current: null,
    }));
    this.perOrgRunning = Math.max(1, workers - 1);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) {
      for (const job of queue.splice(0)) {
        job.reject(new Error('evaluator closed'));
      }
    }
    this.queues.clear();
    const exits: Array<Promise<number>> = [];
    for (const slot of this.slots) {
      if (slot.current) {
        clearTimeout(slot.current.timer);
        slot.current.job.reject(new Error('evaluator closed'));
        slot.current = null;
      }
      const w = slot.worker;
      this.drop(slot);
      if (w) {
        exits.push(w.terminate());
      }
    }
    await Promise.all(exits);
  }

  /** Runs one job in the queue of organization `org`; resolves with the worker's value. */
  run(org: string, message: Record<string, unknown>): Promise<unknown> {
    if (this.closed) {
      return Promise.reject(new Error('evaluator closed'));
    }
    const queue = this.queues.get(org) ?? [];
    if (queue.length >= this.limits.queuePerOrg) {
      // The queue drains at about one job per time bound and worker at worst.
      return Promise.reject(new TooManyRequestsError(Math.max(1, Math.ceil(this.limits.timeoutMs / 1000))));
    }
    return new Promise((resolve, reject) => {
      queue.push({ id: this.nextId++, org, message, resolve, reject });
      this.queues.set(org, queue);
      this.pump();
    });
  }

  /** The next job in round-robin order from an organization below its share of the pool. */
  private take(): Job | undefined {
    for (const [org, queue] of this.queues) {
      if ((this.running.get(org) ?? 0) >= this.perOrgRunning) {
        continue;
      }
      const job = queue.shift()!;
      // Served: the organization goes to the back of the line.
      this.queues.delete(org);
      if (queue.length > 0) {
        this.queues.set(org, queue);
      }
      return job;
    }
    return undefined;
  }

  private finish(slot: Slot): Job | undefined {
    const current = slot.current;
    if (!current) {
      return undefined;
    }
    clearTimeout(current.timer);
    slot.current = null;
    const n = (this.running.get(current.job.org) ?? 1) - 1;
    if (n > 0) {
      this.running.set(current.job.org, n);
    } else {
      this.running.delete(current.job.org);
    }
    return current.job;
  }

  private spawn(slot: Slot): Worker {
    const { port1: answers, port2 } = new MessageChannel();
    const w = new Worker(this.workerFile, {
      workerData: { ...this.workerData, answers: port2 },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, maxYoungGenerationSizeMb: 16 },
    });
    // A starting worker has a job waiting for it, and holds the process open until it is ready
    // (then the job's time bound does); a ready worker does not keep an idle process alive.
    slot.answers = answers;
    answers.on('message', (msg: Answer) => this.answered(slot, w, msg));
    answers.unref();
    w.on('error', (err) => this.fail(slot, w, new EvaluationLimitError(`evaluation failed: ${err.message}`)));
    w.on('exit', () => this.fail(slot, w, new EvaluationLimitError('evaluation exceeded its memory bound')));
    return w;
  }

  /** A worker's answer: ready, or the result of the job it runs. */
  private answered(slot: Slot, w: Worker, msg: Answer): void {
    if (slot.worker !== w) {
      return;
    }
    if (msg.ready) {
      w.unref();
      slot.ready = true;
      this.pump();
      return;
    }
    if (slot.current?.job.id !== msg.id) {
      return;
    }
    const job = this.finish(slot)!;
    if (msg.ok) {
      job.resolve(msg.value);
    } else {
      job.reject(new Error(msg.error ?? 'evaluation failed'));
    }
    this.pump();
  }

  /** The slot lets go of its worker and the worker's answers. */
  private drop(slot: Slot): void {
    slot.worker = null;
    slot.answers?.close();
    slot.answers = null;
  }

  private fail(slot: Slot, w: Worker, err: Error): void {
    if (slot.worker !== w) {
      return;
    }
    this.drop(slot);
    const job = this.finish(slot);
    if (job) {
      job.reject(err);
    } else if (!slot.ready) {
      // A worker that dies before it is ready would die again: fail a waiting job, not loop.
      this.take()?.reject(err);
    }
    this.pump();
  }

  private pump(): void {
    if (this.closed) {
      return;
    }
    for (const slot of this.slots) {
      if (slot.current || this.queues.size === 0) {
        continue;
      }
      if (!slot.worker) {
        slot.ready = false;
        slot.worker = this.spawn(slot);
      }
      if (!slot.ready) {
        continue;
      }
      const job = this.take();
      if (!job) {
        return;
      }
      const worker = slot.worker;
      this.running.set(job.org, (this.running.get(job.org) ?? 0) + 1);
      const timer = setTimeout(() => {
        // An answer may have arrived while this thread was busy elsewhere: this timer can run
        // before the message that would have cancelled it. A worker that answered in time
        // is not over its bound.
        for (
          let m = slot.answers && receiveMessageOnPort(slot.answers);
          m;
          m = slot.answers && receiveMessageOnPort(slot.answers)
        ) {
          this.answered(slot, worker, m.message as Answer);
        }
        if (slot.current?.job !== job) {
          return;
        }
        this.finish(slot);
        this.drop(slot);
        void worker.terminate();
        job.reject(
          new EvaluationLimitError(`evaluation exceeded its time bound of ${this.limits.timeoutMs} ms`),
        );
        this.pump();
      }, this.limits.timeoutMs);
      slot.current = { job, timer };
      worker.postMessage({ id: job.id, ...job.message });
    }
  }
}
