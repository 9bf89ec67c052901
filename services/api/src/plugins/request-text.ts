/**
 * Text the database can hold: PostgreSQL refuses NUL (U+0000) in text and jsonb, and a lone
 * UTF-16 surrogate is not Unicode at all (jsonb refuses its escape; text would store U+FFFD
 * in its place). Every string a request carries (path parameters, query strings, JSON bodies,
 * and multipart parts through `readMultipartForm`) is checked here once, before validation, in
 * one pass linear in its size, so such input is a 400 naming the field and never reaches
 * storage. JSON nested deeper than {@link MAX_JSON_DEPTH} is refused the same way, so no
 * recursive code later meets a document deep enough to exhaust the stack.
 */
import fp from 'fastify-plugin';
import { formatIssuePath, ValidationError } from '../errors.js';
import { drain, inSlices, type Steps } from '../slices.js';

/** The deepest nesting of arrays and objects a JSON request body or JSON form part may have. */
export const MAX_JSON_DEPTH = 64;

/** What is wrong with a request's text, and where. */
export interface TextProblem {
  /** The JSON path of the field, below the request part (`body`, `query`, `path`, a form part). */
  path: (string | number)[];
  message: string;
}

const NUL = 'contains a NUL character (U+0000), which text may not hold';
const SURROGATE = 'contains a lone UTF-16 surrogate (U+D800 to U+DFFF outside a pair), which is not Unicode';
// A NUL, a high surrogate not followed by a low one, or a low surrogate not after a high one.
// Fixed-width lookarounds: one linear scan per string.
// eslint-disable-next-line no-control-regex -- NUL is the character looked for
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored, or undefined when it can. */
export function textProblem(text: string): string | undefined {
  const m = BAD_TEXT.exec(text);
  if (!m) {
    return undefined;
  }
  return m[0] === '\u0000' ? NUL : SURROGATE;
}

interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
}

function pathOf(frame: Frame): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) {
    path.push(f.key);
  }
  return path.reverse();
}

/**
 * Plain data, as JSON and the query and path parsers build it: a prototype of Object.prototype,
 * null, or an empty object with a null prototype (the router's and query parser's dictionaries).
 * Buffers, streams and class instances are not walked.
 */
function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** Values the check visits between two turns of the event loop (a few milliseconds of work). */
const SLICE_VALUES = 20_000;

/**
 * The first string or key in `value` that cannot be stored, or the first array or object nested
 * more than `maxDepth` deep, as steps that yield after every SLICE_VALUES values. Iterative, and
 * each value is visited once.
 */
function* textProblemSteps(value: unknown, maxDepth: number): Steps<TextProblem | undefined> {
  const stack: Frame[] = [{ value, key: undefined, parent: undefined, depth: 0 }];
  let visited = 0;
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (++visited % SLICE_VALUES === 0) {
      yield;
    }
    const v = frame.value;
    if (typeof v === 'string') {
      const message = textProblem(v);
      if (message) {
        return { path: pathOf(frame), message };
      }
      continue;
    }
    if (v === null || typeof v !== 'object' || !(Array.isArray(v) || isPlainObject(v))) {
      continue;
    }
    if (frame.depth >= maxDepth) {
      return { path: pathOf(frame), message: `is nested deeper than ${maxDepth} levels` };
    }
    const depth = frame.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i -= 1) {
        stack.push({ value: v[i] as unknown, key: i, parent: frame, depth });
      }
      continue;
    }
    for (const [key, child] of Object.entries(v)) {
      const message = textProblem(key);
      if (message) {
        return { path: pathOf(frame), message: `has a key that ${message}` };
      }
      stack.push({ value: child, key, parent: frame, depth });
    }
  }
  return undefined;
}

/** The first problem in `value` (see textProblemSteps), in one piece. */
export function findTextProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): TextProblem | undefined {
  return drain(textProblemSteps(value, maxDepth));
}

function throwProblem(problem: TextProblem | undefined, context: string): void {
  if (problem) {
    const path = formatIssuePath(problem.path);
    const field = path === '' ? context : path.startsWith('[') ? `${context}${path}` : `${context}.${path}`;
    throw new ValidationError({ [field]: problem.message });
  }
}

/** Throws the 400 for the first problem in `value`, its field named under `context`. */
export function assertStorableText(value: unknown, context: string): void {
  throwProblem(findTextProblem(value), context);
}

/**
 * As assertStorableText, letting the event loop turn between slices: a 10 MiB report holds
 * hundreds of thousands of strings, over 100 ms of checking in one piece on a slow core. A body
 * of fewer than SLICE_VALUES values is checked without a turn.
 */
async function assertStorableBody(body: unknown): Promise<void> {
  throwProblem(await inSlices(textProblemSteps(body, MAX_JSON_DEPTH)), 'body');
}

export default fp(
  (app, _opts, done) => {
    // preValidation: after the body is parsed, before any schema, handler or query sees it.
    app.addHook('preValidation', async (request) => {
      assertStorableText(request.params, 'path');
      assertStorableText(request.query, 'query');
      await assertStorableBody(request.body);
    });
    done();
  },
  { name: 'request-text' },
);
