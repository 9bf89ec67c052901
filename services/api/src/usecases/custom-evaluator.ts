/**
 * Evaluates custom attestation types: the JSON Schema (ajv) and the jq rules and summary rows
 * (a WebAssembly jq) of a type version, against an attestation's data. User-supplied schemas and
 * jq programs run in a worker thread with a heap limit and a time limit per evaluation: a worker
 * that overruns is terminated and replaced, and the evaluation fails with a clear reason.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

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

export interface EvaluatorLimits {
  timeoutMs: number;
  maxHeapMb: number;
}

/** Raised when an evaluation exceeds its time or memory bound. */
export class EvaluationLimitError extends Error {}

// Runs inside the worker. Our own constant source: no user text is evaluated as code here;
// user schemas go to ajv and user jq programs to the jq interpreter.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const jq = require(workerData.jqPath);
const Ajv2020 = require(workerData.ajv2020Path).default;
const Ajv07 = require(workerData.ajvPath).default;
const errText = (e) => String((e && e.message) || e).split('\\n').filter(Boolean).slice(0, 3).join(' ');
// Compiling a schema costs far more than using it: keep the recent ones.
const compiled = new Map();
function compile(schema) {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  const validate = compileNew(schema);
  if (compiled.size >= 100) compiled.delete(compiled.keys().next().value);
  compiled.set(key, validate);
  return validate;
}
function compileNew(schema) {
  const draft = typeof schema.$schema === 'string' && /draft-0[467]/.test(schema.$schema);
  const ajv = draft ? new Ajv07({ allErrors: true, strict: false }) : new Ajv2020({ allErrors: true, strict: false });
  return ajv.compile(schema);
}
async function runJq(data, expr) {
  const out = await jq.json(data, expr, ['-c']);
  return out;
}
// Load jq's WebAssembly and ajv before reporting ready, so the time bound covers evaluation only.
compileNew({ type: 'object' });
compileNew({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' });
jq.json({}, '.').then(() => parentPort.postMessage({ ready: true }), () => parentPort.postMessage({ ready: true }));
parentPort.on('message', async (msg) => {
  try {
    if (msg.op === 'check') {
      const res = { schema: null, rules: [], summary: [] };
      if (msg.schema) { try { compile(msg.schema); } catch (e) { res.schema = errText(e); } }
      // 'empty | (...)' compiles the program without running it: a rule that loops still checks.
      const compileOnly = (p) => 'empty | (\\n' + p + '\\n)';
      const all = [...msg.rules, ...msg.summary.map((x) => x.expression)];
      let allCompile = all.length === 0;
      if (!allCompile) {
        try { await runJq({}, all.map(compileOnly).join(', ')); allCompile = true; } catch (e) { allCompile = false; }
      }
      if (allCompile) { parentPort.postMessage({ id: msg.id, ok: true, value: res }); return; }
      for (const [i, r] of msg.rules.entries()) {
        try { await runJq({}, compileOnly(r)); } catch (e) { if (/compile error/.test(String(e && e.message))) res.rules.push({ index: i, error: errText(e) }); }
      }
      for (const [i, s] of msg.summary.entries()) {
        try { await runJq({}, compileOnly(s.expression)); } catch (e) { if (/compile error/.test(String(e && e.message))) res.summary.push({ index: i, error: errText(e) }); }
      }
      parentPort.postMessage({ id: msg.id, ok: true, value: res });
      return;
    }
    const res = { schemaErrors: [], ruleResults: [], summary: [] };
    if (msg.schema) {
      const validate = compile(msg.schema);
      if (!validate(msg.data)) {
        res.schemaErrors = (validate.errors || []).slice(0, 20).map((e) => ((e.instancePath || '(root)') + ' ' + e.message));
      }
    }
    // One jq run for every rule and summary row (each jq run costs tens of milliseconds);
    // each program is caught on its own, so one failing rule does not hide the others.
    const wrap = (p) => '(try ([(\\n' + p + '\\n)]) catch {"__jq_error": (. | tostring)})';
    const programs = [...msg.rules, ...msg.summary.map((r) => r.expression)];
    const outcome = (v) => (v && typeof v === 'object' && !Array.isArray(v) && '__jq_error' in v)
      ? { value: null, error: String(v.__jq_error) }
      : { value: v.length === 0 ? null : v.length === 1 ? v[0] : v, error: null };
    let outcomes;
    if (programs.length > 0) {
      try {
        const all = await runJq(msg.data, '[' + programs.map(wrap).join(', ') + ']');
        outcomes = all.map(outcome);
      } catch (e) {
        outcomes = [];
        for (const p of programs) {
          try { outcomes.push(outcome(await runJq(msg.data, '[' + wrap(p) + '] | .[0]'))); }
          catch (err) { outcomes.push({ value: null, error: errText(err) }); }
        }
      }
    } else outcomes = [];
    msg.rules.forEach((rule, i) => res.ruleResults.push({ rule, result: outcomes[i].value, error: outcomes[i].error }));
    msg.summary.forEach((row, i) => {
      const o = outcomes[msg.rules.length + i];
      res.summary.push({ name: row.name, value: o.value, error: o.error });
    });
    parentPort.postMessage({ id: msg.id, ok: true, value: res });
  } catch (e) {
    parentPort.postMessage({ id: msg.id, ok: false, error: errText(e) });
  }
});
`;

interface Job {
  id: number;
  message: Record<string, unknown>;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** One worker, one evaluation at a time, each bounded; a queue in front of it. */
export class CustomEvaluator {
  private worker: Worker | null = null;
  private ready = false;
  private queue: Job[] = [];
  private current: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;
  private closed = false;
  private readonly paths: { jqPath: string; ajvPath: string; ajv2020Path: string };

  constructor(private readonly limits: EvaluatorLimits) {
    const require = createRequire(import.meta.url);
    this.paths = {
      jqPath: require.resolve('jq-wasm'),
      ajvPath: require.resolve('ajv'),
      ajv2020Path: require.resolve('ajv/dist/2020'),
    };
  }

  /** Evaluates `data` against a type definition. */
  async evaluate(definition: TypeDefinition, data: unknown): Promise<CustomEvaluationResult> {
    return (await this.submit({ op: 'evaluate', ...definition, data })) as CustomEvaluationResult;
  }

  /** Compiles a definition without data: the schema and every jq program must be valid. */
  async check(definition: TypeDefinition): Promise<DefinitionProblems> {
    return (await this.submit({ op: 'check', ...definition })) as DefinitionProblems;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('evaluator closed'));
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.job.reject(new Error('evaluator closed'));
      this.current = null;
    }
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private submit(message: Record<string, unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('evaluator closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, message, resolve, reject });
      this.pump();
    });
  }

  private spawn(): Worker {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: this.paths,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, maxYoungGenerationSizeMb: 16 },
    });
    w.unref();
    w.on('message', (msg: { id: number; ok: boolean; value?: unknown; error?: string; ready?: boolean }) => {
      if (msg.ready) {
        if (this.worker === w) this.ready = true;
        this.pump();
        return;
      }
      if (!this.current || this.current.job.id !== msg.id) return;
      clearTimeout(this.current.timer);
      const { job } = this.current;
      this.current = null;
      if (msg.ok) job.resolve(msg.value);
      else job.reject(new Error(msg.error ?? 'evaluation failed'));
      this.pump();
    });
    w.on('error', (err) => this.fail(w, new EvaluationLimitError(`evaluation failed: ${err.message}`)));
    w.on('exit', () => this.fail(w, new EvaluationLimitError('evaluation exceeded its memory bound')));
    return w;
  }

  private fail(w: Worker, err: Error): void {
    if (this.worker !== w) return;
    this.worker = null;
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.job.reject(err);
      this.current = null;
    } else if (!this.ready) {
      // A worker that dies before it is ready would die again: fail the waiting job, not loop.
      this.queue.shift()?.reject(err);
    }
    this.pump();
  }

  private pump(): void {
    if (this.current || this.closed || this.queue.length === 0) return;
    if (!this.worker) {
      this.ready = false;
      this.worker = this.spawn();
    }
    if (!this.ready) return;
    const worker = this.worker;
    const job = this.queue.shift()!;
    const timer = setTimeout(() => {
      if (this.current?.job !== job) return;
      this.current = null;
      this.worker = null;
      void worker.terminate();
      job.reject(
        new EvaluationLimitError(`evaluation exceeded its time bound of ${this.limits.timeoutMs} ms`),
      );
      this.pump();
    }, this.limits.timeoutMs);
    this.current = { job, timer };
    worker.postMessage({ id: job.id, ...job.message });
  }
}
