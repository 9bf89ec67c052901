// @ts-check
/**
 * One worker thread of the custom-type evaluator (custom-evaluator.ts): validates attestation data
 * against a type's JSON Schema (ajv) and runs its jq rules and summary rows (a WebAssembly jq).
 * No user text is evaluated as code here: user schemas go to ajv and user jq programs to the jq
 * interpreter. The pool bounds this thread's heap and the time of each job.
 *
 * Plain JavaScript (type-checked from JSDoc), so that Node runs the same file from the sources
 * (tsx, vitest) and from the compiled image.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as jq from 'jq-wasm';

/**
 * @typedef {{ name: string; expression: string }} SummaryRow
 * @typedef {{ id: number; op: 'check'; schema: Record<string, unknown> | null; rules: string[];
 *   summary: SummaryRow[] }} CheckJob
 * @typedef {{ id: number; op: 'evaluate'; schema: Record<string, unknown> | null; rules: string[];
 *   summary: SummaryRow[]; data: unknown }} EvaluateJob
 * @typedef {{ value: unknown; error: string | null }} Outcome
 * @typedef {import('ajv').ValidateFunction} ValidateFunction
 */

if (!parentPort) {
  throw new Error('custom-evaluator.worker.mjs runs only as a worker thread');
}
const jobs = parentPort;

/**
 * The port the pool gave this worker in its `workerData`.
 * @param {unknown} data
 */
const answersPort = (data) =>
  /** @type {{ answers: import('node:worker_threads').MessagePort }} */ (data).answers;
// Answers go back on a port of their own, which the pool can also read when a time bound expires.
const answers = answersPort(workerData);

/**
 * `e.message` of anything thrown (undefined when it has none).
 * @param {unknown} e
 * @returns {unknown}
 */
const messageOf = (e) =>
  e && typeof e === 'object' ? /** @type {{ message?: unknown }} */ (e).message : e ? undefined : e;

/**
 * The first three lines of an error's message.
 * @param {unknown} e
 */
const errText = (e) =>
  String(messageOf(e) || e)
    .split('\n')
    .filter(Boolean)
    .slice(0, 3)
    .join(' ');

// Compiling a schema costs far more than using it: keep the recent ones.
/** @type {Map<string, ValidateFunction>} */
const compiled = new Map();

/** @param {Record<string, unknown>} schema */
function compile(schema) {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) {
    return hit;
  }
  const validate = compileNew(schema);
  if (compiled.size >= 100) {
    compiled.delete(/** @type {string} */ (compiled.keys().next().value));
  }
  compiled.set(key, validate);
  return validate;
}

/**
 * Drafts 4, 6 and 7 by their `$schema`; 2020-12 otherwise.
 * @param {Record<string, unknown>} schema
 * @returns {ValidateFunction}
 */
function compileNew(schema) {
  const draft = typeof schema.$schema === 'string' && /draft-0[467]/.test(schema.$schema);
  const ajv = draft
    ? new Ajv({ allErrors: true, strict: false })
    : new Ajv2020({ allErrors: true, strict: false });
  return ajv.compile(schema);
}

/**
 * Every program given here has one output (or none, when only compiled); jq.json lists them.
 * @param {unknown} data
 * @param {string} expr
 * @returns {Promise<unknown>}
 */
async function runJq(data, expr) {
  const outputs = await jq.json(/** @type {jq.JqInput} */ (data), expr, ['-c']);
  return outputs[0];
}

/**
 * 'empty | (...)' compiles the program without running it: a rule that loops still checks.
 * @param {string} program
 */
const compileOnly = (program) => 'empty | (\n' + program + '\n)';

/**
 * The compile error of one jq program, or null when it compiles.
 * @param {string} program
 * @returns {Promise<string | null>}
 */
async function compileError(program) {
  try {
    await runJq({}, compileOnly(program));
  } catch (e) {
    if (/compile error/.test(String(messageOf(e)))) {
      return errText(e);
    }
  }
  return null;
}

/**
 * Compiles a definition without data: the schema and every jq program.
 * @param {CheckJob} msg
 */
async function check(msg) {
  /** @type {{ schema: string | null; rules: Array<{ index: number; error: string }>; summary: Array<{ index: number; error: string }> }} */
  const res = { schema: null, rules: [], summary: [] };
  if (msg.schema) {
    try {
      compile(msg.schema);
    } catch (e) {
      res.schema = errText(e);
    }
  }
  const all = [...msg.rules, ...msg.summary.map((x) => x.expression)];
  let allCompile = all.length === 0;
  if (!allCompile) {
    try {
      await runJq({}, all.map(compileOnly).join(', '));
      allCompile = true;
    } catch {
      allCompile = false;
    }
  }
  if (allCompile) {
    return res;
  }
  // One of them does not compile: find which, one at a time.
  for (const [index, rule] of msg.rules.entries()) {
    const error = await compileError(rule);
    if (error !== null) {
      res.rules.push({ index, error });
    }
  }
  for (const [index, row] of msg.summary.entries()) {
    const error = await compileError(row.expression);
    if (error !== null) {
      res.summary.push({ index, error });
    }
  }
  return res;
}

/**
 * A program wrapped so that its error is a value: its outputs as an array, or `{__jq_error}`.
 * @param {string} program
 */
const wrap = (program) => '(try ([(\n' + program + '\n)]) catch {"__jq_error": (. | tostring)})';

/**
 * What a wrapped program gave: its one output, its outputs, null for none, or its error.
 * @param {unknown} v
 * @returns {Outcome}
 */
function outcome(v) {
  if (v && typeof v === 'object' && !Array.isArray(v) && '__jq_error' in v) {
    return { value: null, error: String(v.__jq_error) };
  }
  const outputs = /** @type {unknown[]} */ (v);
  return { value: outputs.length === 0 ? null : outputs.length === 1 ? outputs[0] : outputs, error: null };
}

/**
 * Runs every program against `data`, in one jq run (each jq run costs tens of milliseconds);
 * each program is caught on its own, so one failing rule does not hide the others.
 * @param {unknown} data
 * @param {string[]} programs
 * @returns {Promise<Outcome[]>}
 */
async function runPrograms(data, programs) {
  if (programs.length === 0) {
    return [];
  }
  try {
    const all = /** @type {unknown[]} */ (await runJq(data, '[' + programs.map(wrap).join(', ') + ']'));
    return all.map(outcome);
  } catch {
    /** @type {Outcome[]} */
    const outcomes = [];
    for (const p of programs) {
      try {
        outcomes.push(outcome(await runJq(data, '[' + wrap(p) + '] | .[0]')));
      } catch (err) {
        outcomes.push({ value: null, error: errText(err) });
      }
    }
    return outcomes;
  }
}

/**
 * Validates the data against the schema, then runs the rules and summary rows on it.
 * @param {EvaluateJob} msg
 */
async function evaluate(msg) {
  /** @type {{ schemaErrors: string[]; ruleResults: Array<{ rule: string; result: unknown; error: string | null }>; summary: Array<{ name: string; value: unknown; error: string | null }> }} */
  const res = { schemaErrors: [], ruleResults: [], summary: [] };
  if (msg.schema) {
    const validate = compile(msg.schema);
    if (!validate(msg.data)) {
      res.schemaErrors = (validate.errors || [])
        .slice(0, 20)
        .map((e) => (e.instancePath || '(root)') + ' ' + String(e.message));
    }
  }
  const outcomes = await runPrograms(msg.data, [...msg.rules, ...msg.summary.map((r) => r.expression)]);
  msg.rules.forEach((rule, i) => {
    const o = /** @type {Outcome} */ (outcomes[i]);
    res.ruleResults.push({ rule, result: o.value, error: o.error });
  });
  msg.summary.forEach((row, i) => {
    const o = /** @type {Outcome} */ (outcomes[msg.rules.length + i]);
    res.summary.push({ name: row.name, value: o.value, error: o.error });
  });
  return res;
}

// Load jq's WebAssembly and ajv before reporting ready, so the time bound covers evaluation only.
compileNew({ type: 'object' });
compileNew({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' });
jq.json({}, '.').then(
  () => answers.postMessage({ ready: true }),
  () => answers.postMessage({ ready: true }),
);

jobs.on('message', (/** @type {CheckJob | EvaluateJob} */ msg) => {
  (msg.op === 'check' ? check(msg) : evaluate(msg)).then(
    (value) => answers.postMessage({ id: msg.id, ok: true, value }),
    (e) => answers.postMessage({ id: msg.id, ok: false, error: errText(e) }),
  );
});
