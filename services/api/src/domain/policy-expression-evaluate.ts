/**
 * Evaluation of parsed policy expressions (policy-expression.ts): walks the tree over one
 * artifact and its flow. A missing value reads as null, so a condition is always true or false.
 */
import type { Expr, ExpressionContext, Value } from './policy-expression.js';
import { tryCompileUserPattern, type UserPattern } from './user-pattern.js';

// Patterns read from flow tags at evaluation time, compiled once per distinct text.
const dynamicPatterns = new Map<string, UserPattern | null>();
function dynamicPattern(source: string): UserPattern | null {
  let compiled = dynamicPatterns.get(source);
  if (compiled === undefined) {
    compiled = tryCompileUserPattern(source);
    if (dynamicPatterns.size >= 1000) {
      dynamicPatterns.clear();
    }
    dynamicPatterns.set(source, compiled);
  }
  return compiled;
}

function read(e: Extract<Expr, { type: 'path' }>, ctx: ExpressionContext): Value {
  if (e.root === 'artifact') {
    return e.field === 'name' ? ctx.artifact.name : ctx.artifact.fingerprint;
  }
  if (!ctx.flow) {
    return null;
  }
  if (e.field === 'name') {
    return ctx.flow.name;
  }
  return Object.prototype.hasOwnProperty.call(ctx.flow.tags, e.key!) ? ctx.flow.tags[e.key!]! : null;
}

function equal(a: Value, b: Value): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => equal(v, b[i]!))
    );
  }
  return a === b;
}

function order(op: '<' | '>' | '<=' | '>=', a: Value, b: Value): boolean {
  const comparable =
    (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!comparable) {
    return false;
  }
  switch (op) {
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '>=':
      return a >= b;
  }
}

function value(e: Expr, ctx: ExpressionContext): Value {
  switch (e.type) {
    case 'literal':
      return e.value;
    case 'list':
      return e.items.map((item) => value(item, ctx));
    case 'path':
      return read(e, ctx);
    case 'exists':
      return value(e.arg, ctx) !== null;
    case 'matches': {
      const subject = value(e.subject, ctx);
      if (typeof subject !== 'string') {
        return false;
      }
      if (e.regex !== undefined) {
        return e.regex !== null && e.regex.test(subject);
      }
      const pattern = value(e.pattern, ctx);
      const regex = typeof pattern === 'string' ? dynamicPattern(pattern) : null;
      return regex !== null && regex.test(subject);
    }
    case 'not':
      return value(e.operand, ctx) !== true;
    case 'logical': {
      const left = value(e.left, ctx) === true;
      if (e.op === 'and') {
        return left && value(e.right, ctx) === true;
      }
      return left || value(e.right, ctx) === true;
    }
    case 'compare': {
      const a = value(e.left, ctx);
      const b = value(e.right, ctx);
      if (e.op === '==') {
        return equal(a, b);
      }
      if (e.op === '!=') {
        return !equal(a, b);
      }
      return order(e.op, a, b);
    }
    case 'in': {
      const needle = value(e.left, ctx);
      const haystack = value(e.right, ctx);
      let found = false;
      if (Array.isArray(haystack)) {
        found = haystack.some((v) => equal(v, needle));
      } else if (typeof haystack === 'string' && typeof needle === 'string') {
        found = haystack.includes(needle);
      }
      return e.negated ? !found : found;
    }
  }
}

/** Evaluates a parsed condition; a missing value reads as null, so the answer is always true or false. */
export function evaluateExpression(expr: Expr, ctx: ExpressionContext): boolean {
  return value(expr, ctx) === true;
}
