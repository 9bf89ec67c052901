/**
 * The server-side evaluation workers (`app.evaluations`): a loop that claims queued evaluations
 * (usecases/evaluations) from the database and runs them on the CEL policy engine's worker pool
 * (workers/cel-evaluator.ts), off the request path. It runs when `VERITY_EVALUATIONS_ENABLED` is
 * on (the default), is woken at once when an evaluation is requested here, and looks for others'
 * every `VERITY_EVALUATIONS_POLL_MS`; several replicas may run it side by side.
 *
 * Fairness: a round claims the oldest evaluation of each organization that has none running in
 * this process, so one organization's backlog never holds another's; the pool serves the
 * organizations in turn, so an expensive expression holds another organization's evaluation for
 * at most one time bound.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { Loop } from '../notify/loop.js';
import { evaluationsRepository } from '../storage/repositories/evaluations.js';
import { runEvaluation } from '../usecases/evaluations/evaluation-run.js';
import { CelEvaluator } from '../workers/cel-evaluator.js';

export interface EvaluationsService {
  /** Wakes the loop: it claims and starts what can run now (when the workers run here). */
  kick(): void;
  /** Claims what can run now and runs it to the end, loop or no loop (admin commands, tests). */
  process(): Promise<void>;
  /** Resolves once no evaluation claimed by this process is running. */
  idle(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    evaluations: EvaluationsService;
  }
}

class EvaluationWorkers {
  /** Evaluations running in this process, by organization. */
  private readonly running = new Map<string, Promise<void>>();
  private readonly loop: Loop;

  constructor(
    private readonly app: FastifyInstance,
    private readonly engine: CelEvaluator,
    private readonly slots: number,
    private readonly leaseMs: number,
    private readonly counted: (outcome: string) => void,
  ) {
    this.loop = new Loop('evaluations', () => this.round(), app.config.evaluationsPollMs, app.log);
  }

  start(): void {
    this.loop.start();
  }

  kick(): void {
    this.loop.kick();
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.allSettled([...this.running.values()]);
    }
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async process(): Promise<void> {
    await this.round();
    await this.idle();
  }

  private async round(): Promise<void> {
    const free = this.slots - this.running.size;
    if (free <= 0) {
      return;
    }
    const { app } = this;
    const rows = await evaluationsRepository.claim(app.db, app.clock(), this.leaseMs, free, [
      ...this.running.keys(),
    ]);
    const scope = {
      db: app.db,
      publicUrl: app.config.publicUrl,
      events: app.domainEvents,
      services: app.services,
    };
    for (const row of rows) {
      const run = runEvaluation(scope, app.clock, this.engine, row)
        .then(this.counted)
        .catch((err: unknown) => {
          // The claim lapses and the evaluation runs again (a database outage, a closing app).
          app.log.error({ err, evaluation: row.id }, 'server-side evaluation did not finish');
        })
        .finally(() => {
          this.running.delete(row.org_id);
          this.loop.kick();
        });
      this.running.set(row.org_id, run);
    }
  }
}

export default fp(
  (app, _opts, done) => {
    const config = app.config;
    const engine = new CelEvaluator({
      timeoutMs: config.celTimeoutMs,
      maxHeapMb: config.celMaxHeapMb,
      workers: config.celWorkers,
      // The workers claim no more than they run: the pool's queues stay short.
      queuePerOrg: 10_000,
    });
    // Twice the pool: the next evaluations are read while others run.
    const slots = config.celWorkers * 2;
    // A claim outlives any evaluation's bound and the reads and writes around it.
    const leaseMs = config.celTimeoutMs + 60_000;
    const evaluations = new Counter({
      name: 'verity_evaluations_total',
      help: 'Server-side evaluations run to the end, by outcome (allowed, denied, failed) and failure kind',
      labelNames: ['outcome', 'kind'] as const,
      registers: [app.metrics.registry],
    });
    const counted = (outcome: string) => {
      const [result, kind] = outcome.split(':');
      if (result !== 'claim_lost') {
        evaluations.inc({ outcome: result, kind: kind ?? '' });
      }
    };
    const workers = new EvaluationWorkers(app, engine, slots, leaseMs, counted);
    app.decorate('evaluations', {
      kick: () => workers.kick(),
      process: () => workers.process(),
      idle: () => workers.idle(),
    } satisfies EvaluationsService);
    app.domainEvents.onCommitted((effects) => {
      if (effects.some((e) => e.type === 'evaluation.requested')) {
        workers.kick();
      }
    });
    if (config.evaluationsEnabled) {
      app.addHook('onReady', async () => workers.start());
    }
    app.addHook('onClose', async () => {
      await workers.stop();
      await engine.close();
      await workers.idle();
    });
    done();
  },
  { name: 'evaluations', dependencies: ['db', 'services', 'domain-events', 'metrics'] },
);
