/**
 * Evaluates custom attestation types: the JSON Schema (ajv) and the jq rules and summary rows
 * (a WebAssembly jq) of a type version, against an attestation's data. User-supplied schemas and
 * jq programs run in a small pool of worker threads with a heap limit and a time limit per
 * evaluation: a worker that overruns is terminated and replaced, and the evaluation fails with a
 * clear reason. Organizations queue apart and are served in turn.
 */
import { WorkerPool, type EvaluatorLimits } from './worker-pool.js';

export { EvaluationLimitError, type EvaluatorLimits } from './worker-pool.js';

export interface TypeDefinition {
  schema: Record<string, unknown> | null;
  rules: string[];
  summary: Array<{ name: string; expression: string }>;
}

export interface CustomEvaluationResult {
  schemaErrors: string[];
  ruleResults: Array<{ rule: string; result: unknown; error: string | null }>;
  summary: Array<{ name: string; value: unknown; error: string | null }>;
}

export interface DefinitionProblems {
  schema: string | null;
  rules: Array<{ index: number; error: string }>;
  summary: Array<{ index: number; error: string }>;
}

/** The worker thread's code: plain JavaScript, run as it is from the sources and from the build. */
const WORKER_FILE = new URL('./custom-evaluator.worker.mjs', import.meta.url);

/** The custom-type evaluator: a worker pool running ajv and jq (custom-evaluator.worker.mjs). */
export class CustomEvaluator extends WorkerPool {
  constructor(limits: EvaluatorLimits) {
    super(limits, WORKER_FILE);
  }

  /** Evaluates `data` against a type definition, in the queue of organization `org`. */
  async evaluate(definition: TypeDefinition, data: unknown, org: string): Promise<CustomEvaluationResult> {
    return (await this.run(org, { op: 'evaluate', ...definition, data })) as CustomEvaluationResult;
  }

  /** Compiles a definition without data: the schema and every jq program must be valid. */
  async check(definition: TypeDefinition, org: string): Promise<DefinitionProblems> {
    return (await this.run(org, { op: 'check', ...definition })) as DefinitionProblems;
  }
}
