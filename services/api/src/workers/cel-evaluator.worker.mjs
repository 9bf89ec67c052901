// @ts-check
/**
 * One worker thread of the CEL policy engine (cel-evaluator.ts): compiles a policy bundle's entry
 * expression (CEL, @marcbachmann/cel-js) and evaluates it over `input` and `params`. CEL is not
 * Turing complete, but a nested comprehension can still cost billions of steps: the pool bounds
 * this thread's heap and the time of each job, and the parser's structural limits bound what one
 * expression may hold.
 *
 * Plain JavaScript (type-checked from JSDoc), so that Node runs the same file from the sources
 * (tsx, vitest) and from the compiled image.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Environment } from '@marcbachmann/cel-js';

/**
 * @typedef {{ id: number; op: 'evaluate'; entry: string; source: string; input: unknown; params: unknown;
 *   maxViolations: number; maxViolationChars: number }} EvaluateJob
 * @typedef {{ outcome: 'completed'; allow: boolean; violations: string[] }
 *   | { outcome: 'failed'; kind: 'compile' | 'result_shape' | 'evaluate'; message: string }} Outcome
 */

if (!parentPort) {
  throw new Error('cel-evaluator.worker.mjs runs only as a worker thread');
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

/** Structural limits checked when an expression is parsed. */
const LIMITS = {
  maxAstNodes: 20_000,
  maxDepth: 100,
  maxListElements: 1_000,
  maxMapEntries: 1_000,
  maxCallArguments: 32,
};

const environment = new Environment({
  unlistedVariablesAreDyn: false,
  // A literal such as {"allow": false, "violations": ["x"]} mixes a bool and a list, as standard CEL allows.
  homogeneousAggregateLiterals: false,
  enableOptionalTypes: true,
  limits: LIMITS,
})
  .registerVariable('input', 'dyn')
  .registerVariable('params', 'dyn');

/**
 * The first lines of an error's message, without the source excerpt the parser appends.
 * @param {unknown} e
 */
function errText(e) {
  const raw = e && typeof e === 'object' && 'message' in e ? String(e.message) : String(e);
  return raw
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l && !/^\s*(>|\^)/.test(l))
    .slice(0, 4)
    .join(' ')
    .slice(0, 1_000);
}

/**
 * JSON values as CEL sees them: whole numbers are ints, other numbers doubles.
 * @param {unknown} v
 * @returns {unknown}
 */
function toCel(v) {
  if (typeof v === 'number') {
    return Number.isSafeInteger(v) ? BigInt(v) : v;
  }
  if (Array.isArray(v)) {
    return v.map(toCel);
  }
  if (v && typeof v === 'object') {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = toCel(x);
    }
    return out;
  }
  return v;
}

/**
 * A field of a map result (a plain object or a Map).
 * @param {unknown} value
 * @param {string} key
 * @returns {unknown}
 */
function field(value, key) {
  if (value instanceof Map) {
    return /** @type {Map<unknown, unknown>} */ (value).get(key);
  }
  return /** @type {Record<string, unknown>} */ (value)[key];
}

/**
 * The keys of a map result.
 * @param {unknown} value
 * @returns {string[]}
 */
function keysOf(value) {
  return value instanceof Map ? [...value.keys()].map(String) : Object.keys(/** @type {object} */ (value));
}

/**
 * The result as allow and violations: a bool, or a map {allow: bool, violations: list<string>}.
 * @param {unknown} value
 * @param {EvaluateJob} job
 * @returns {Outcome}
 */
function shape(value, job) {
  if (typeof value === 'boolean') {
    return { outcome: 'completed', allow: value, violations: [] };
  }
  const isMap =
    value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value));
  if (!isMap) {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: `the policy gave ${describe(value)}; it must give a bool or {"allow": bool, "violations": [string]}`,
    };
  }
  const extra = keysOf(value).filter((k) => k !== 'allow' && k !== 'violations');
  if (extra.length > 0) {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: `the result has unknown keys ${extra.slice(0, 5).join(', ')}; it may hold only allow and violations`,
    };
  }
  const allow = field(value, 'allow');
  if (typeof allow !== 'boolean') {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: `the result's allow is ${describe(allow)}; it must be a bool`,
    };
  }
  const list = field(value, 'violations') ?? [];
  if (!Array.isArray(list) || list.some((/** @type {unknown} */ x) => typeof x !== 'string')) {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: "the result's violations must be a list of strings",
    };
  }
  const violations = /** @type {string[]} */ (list);
  if (violations.length > job.maxViolations) {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: `the result holds ${violations.length} violations, over the limit of ${job.maxViolations}`,
    };
  }
  const long = violations.findIndex((x) => x.length > job.maxViolationChars);
  if (long >= 0) {
    return {
      outcome: 'failed',
      kind: 'result_shape',
      message: `violation ${long} is ${String(violations[long]).length} characters, over the limit of ${job.maxViolationChars}`,
    };
  }
  return { outcome: 'completed', allow, violations };
}

/**
 * How a wrong result is named in a message.
 * @param {unknown} v
 */
function describe(v) {
  if (v === null || v === undefined) {
    return 'null';
  }
  if (typeof v === 'bigint') {
    return 'an int';
  }
  if (Array.isArray(v)) {
    return 'a list';
  }
  return `a ${typeof v === 'number' ? 'double' : typeof v}`;
}

/**
 * @param {EvaluateJob} job
 * @returns {Outcome}
 */
function evaluate(job) {
  /** @type {ReturnType<Environment['parse']>} */
  let program;
  try {
    program = environment.parse(job.source);
  } catch (e) {
    return { outcome: 'failed', kind: 'compile', message: `${job.entry}: ${errText(e)}` };
  }
  /** @type {unknown} */
  let value;
  try {
    value = program({ input: toCel(job.input), params: toCel(job.params) });
  } catch (e) {
    return { outcome: 'failed', kind: 'evaluate', message: `${job.entry}: ${errText(e)}` };
  }
  return shape(value, job);
}

// Warm the parser and evaluator before reporting ready, so the time bound covers evaluation only.
try {
  environment.parse('input.size() >= 0')({ input: {}, params: {} });
} finally {
  answers.postMessage({ ready: true });
}

jobs.on('message', (/** @type {EvaluateJob} */ job) => {
  try {
    answers.postMessage({ id: job.id, ok: true, value: evaluate(job) });
  } catch (e) {
    answers.postMessage({ id: job.id, ok: false, error: errText(e) });
  }
});
