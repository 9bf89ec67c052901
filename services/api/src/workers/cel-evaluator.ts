/**
 * The CEL policy engine: a policy bundle's entry expression evaluated over an evaluation's input
 * and params, in a worker pool (cel-evaluator.worker.mjs) with a heap limit and a time limit per
 * evaluation; organizations queue apart and are served in turn, so one organization's expensive
 * expression holds another's evaluation for at most one time bound.
 */
import { EvaluationLimitError, WorkerPool, type EvaluatorLimits } from './worker-pool.js';

/** What one evaluation gave: allow and violations, or the kind of failure and why. */
export type CelOutcome =
  | { outcome: 'completed'; allow: boolean; violations: string[] }
  | { outcome: 'failed'; kind: 'compile' | 'result_shape' | 'evaluate'; message: string };

/** Violations a result may hold, and characters one violation may have. */
export const MAX_VIOLATIONS = 1_000;
export const MAX_VIOLATION_CHARS = 4_096;

const WORKER_FILE = new URL('./cel-evaluator.worker.mjs', import.meta.url);

export class CelEvaluator extends WorkerPool {
  constructor(limits: EvaluatorLimits) {
    super(limits, WORKER_FILE);
  }

  /**
   * Evaluates the CEL expression `source` (the bundle's file `entry`) over `input` and `params`,
   * in organization `org`'s queue. Past the time or memory bound, the evaluation failed.
   */
  async evaluate(
    org: string,
    job: { entry: string; source: string; input: unknown; params: unknown },
  ): Promise<CelOutcome> {
    try {
      return (await this.run(org, {
        op: 'evaluate',
        ...job,
        maxViolations: MAX_VIOLATIONS,
        maxViolationChars: MAX_VIOLATION_CHARS,
      })) as CelOutcome;
    } catch (err) {
      if (err instanceof EvaluationLimitError) {
        return { outcome: 'failed', kind: 'evaluate', message: err.message };
      }
      throw err;
    }
  }
}
