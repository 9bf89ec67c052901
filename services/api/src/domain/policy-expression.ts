/**
 * The expression language of policy conditions (semantics.md section 6): `${{ ... }}` over
 * `flow.name`, `flow.tags.<key>`, `artifact.name`, `artifact.fingerprint`, with
 * `== != < > <= >= and or not in`, lists, parentheses, `exists(x)` and `matches(s, regex)`.
 * A small recursive-descent parser builds a tree over the tokens of policy-expression-lexer.ts;
 * policy-expression-evaluate.ts walks it. User text is never run
 * as code. `matches()` runs with RE2 semantics (see user-pattern.ts).
 *
 *   expr    := or
 *   or      := and ("or" and)*
 *   and     := not ("and" not)*
 *   not     := "not" not | compare
 *   compare := operand (("==" | "!=" | "<" | ">" | "<=" | ">=") operand | "not"? "in" operand)?
 *   operand := STRING | NUMBER | "true" | "false" | "null" | list | call | path | "(" expr ")"
 *   list    := "[" (expr ("," expr)*)? "]"
 *   call    := ("exists" | "matches") "(" (expr ("," expr)*)? ")"
 */

import {
  compileUserPattern,
  tryCompileUserPattern,
  UserPatternError,
  type UserPattern,
} from './user-pattern.js';

import { ExpressionError, tokenize, type Token } from './policy-expression-lexer.js';

export { ExpressionError } from './policy-expression-lexer.js';

export type Value = string | number | boolean | null | Value[];

export type Expr =
  | { type: 'literal'; value: string | number | boolean | null }
  | { type: 'list'; items: Expr[] }
  | { type: 'path'; root: 'flow' | 'artifact'; field: 'name' | 'tags' | 'fingerprint'; key?: string }
  | { type: 'exists'; arg: Expr }
  | { type: 'matches'; subject: Expr; pattern: Expr; regex?: UserPattern | null }
  | { type: 'not'; operand: Expr }
  | { type: 'logical'; op: 'and' | 'or'; left: Expr; right: Expr }
  | { type: 'compare'; op: '==' | '!=' | '<' | '>' | '<=' | '>='; left: Expr; right: Expr }
  | { type: 'in'; negated: boolean; left: Expr; right: Expr };

/** What an expression may read. Missing tags read as null. */
export interface ExpressionContext {
  flow: { name: string; tags: Record<string, string> } | null;
  artifact: { name: string; fingerprint: string };
}

/** The longest expression text accepted. */
export const MAX_EXPRESSION_LENGTH = 2000;

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'true', 'false', 'null']);
const COMPARE_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);

class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly options: ParseOptions,
  ) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private isWord(value: string): boolean {
    const t = this.peek();
    return t.kind === 'word' && t.value === value;
  }
  private isOp(value: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.value === value;
  }
  private expectOp(value: string): void {
    const t = this.next();
    if (t.kind !== 'op' || t.value !== value) {
      throw new ExpressionError(`expected '${value}'`, t.pos + 1);
    }
  }

  parseAll(): Expr {
    const expr = this.parseOr();
    const t = this.peek();
    if (t.kind !== 'end') {
      throw new ExpressionError('unexpected input after the expression', t.pos + 1);
    }
    return expr;
  }

  private parseOr(): Expr {
    let left = this.parseAnd();
    while (this.isWord('or')) {
      const pos = this.next().pos;
      const right = this.parseAnd();
      left = {
        type: 'logical',
        op: 'or',
        left: requireBoolean(left, pos),
        right: requireBoolean(right, pos),
      };
    }
    return left;
  }

  private parseAnd(): Expr {
    let left = this.parseNot();
    while (this.isWord('and')) {
      const pos = this.next().pos;
      const right = this.parseNot();
      left = {
        type: 'logical',
        op: 'and',
        left: requireBoolean(left, pos),
        right: requireBoolean(right, pos),
      };
    }
    return left;
  }

  private parseNot(): Expr {
    if (this.isWord('not')) {
      const pos = this.next().pos;
      return { type: 'not', operand: requireBoolean(this.parseNot(), pos) };
    }
    return this.parseCompare();
  }

  private parseCompare(): Expr {
    const left = this.parseOperand();
    const t = this.peek();
    if (t.kind === 'op' && COMPARE_OPS.has(t.value)) {
      this.next();
      return { type: 'compare', op: t.value as '==', left, right: this.parseOperand() };
    }
    if (this.isWord('in')) {
      this.next();
      return { type: 'in', negated: false, left, right: this.parseOperand() };
    }
    if (
      this.isWord('not') &&
      this.tokens[this.i + 1]?.kind === 'word' &&
      (this.tokens[this.i + 1] as { value: string }).value === 'in'
    ) {
      this.i += 2;
      return { type: 'in', negated: true, left, right: this.parseOperand() };
    }
    return left;
  }

  private parseOperand(): Expr {
    const t = this.next();
    switch (t.kind) {
      case 'string':
        return { type: 'literal', value: t.value };
      case 'number':
        return { type: 'literal', value: t.value };
      case 'end':
        throw new ExpressionError('unexpected end of expression', t.pos + 1);
      case 'op': {
        if (t.value === '(') {
          const inner = this.parseOr();
          this.expectOp(')');
          return inner;
        }
        if (t.value === '[') {
          const items: Expr[] = [];
          if (!this.isOp(']')) {
            items.push(this.parseOr());
            while (this.isOp(',')) {
              this.next();
              items.push(this.parseOr());
            }
          }
          this.expectOp(']');
          return { type: 'list', items };
        }
        throw new ExpressionError(`unexpected '${t.value}'`, t.pos + 1);
      }
      case 'word':
        return this.parseWord(t);
    }
  }

  private parseWord(t: Extract<Token, { kind: 'word' }>): Expr {
    if (t.value === 'true' || t.value === 'false') {
      return { type: 'literal', value: t.value === 'true' };
    }
    if (t.value === 'null') {
      return { type: 'literal', value: null };
    }
    if (KEYWORDS.has(t.value)) {
      throw new ExpressionError(`unexpected '${t.value}'`, t.pos + 1);
    }
    if (this.isOp('(')) {
      this.next();
      const args: Expr[] = [];
      if (!this.isOp(')')) {
        args.push(this.parseOr());
        while (this.isOp(',')) {
          this.next();
          args.push(this.parseOr());
        }
      }
      this.expectOp(')');
      return call(t.value, args, t.pos, this.options);
    }
    return path(t.value, t.pos);
  }
}

function call(name: string, args: Expr[], pos: number, options: ParseOptions): Expr {
  if (name === 'exists') {
    if (args.length !== 1 || args[0]!.type !== 'path') {
      throw new ExpressionError('exists() takes one context value, e.g. exists(flow.tags.team)', pos + 1);
    }
    return { type: 'exists', arg: args[0]! };
  }
  if (name === 'matches') {
    if (args.length !== 2) {
      throw new ExpressionError('matches() takes two arguments: matches(value, "regex")', pos + 1);
    }
    const [subject, pattern] = args as [Expr, Expr];
    if (pattern.type === 'literal') {
      if (typeof pattern.value !== 'string') {
        throw new ExpressionError('the pattern of matches() must be a string', pos + 1);
      }
      const regex = options.lenientPatterns
        ? tryCompileUserPattern(pattern.value)
        : compilePattern(pattern.value, pos);
      return { type: 'matches', subject, pattern, regex };
    }
    return { type: 'matches', subject, pattern };
  }
  throw new ExpressionError(`unknown function '${name}'; use exists() or matches()`, pos + 1);
}

function compilePattern(pattern: string, pos: number): UserPattern {
  try {
    return compileUserPattern(pattern);
  } catch (err) {
    if (err instanceof UserPatternError) {
      throw new ExpressionError(`invalid regular expression: ${err.message}`, pos + 1);
    }
    throw err;
  }
}

function path(text: string, pos: number): Expr {
  const [root, field, ...rest] = text.split('.');
  if (root === 'flow' && field === 'name' && rest.length === 0) {
    return { type: 'path', root, field };
  }
  if (root === 'flow' && field === 'tags' && rest.length > 0) {
    return { type: 'path', root, field, key: rest.join('.') };
  }
  if (root === 'artifact' && (field === 'name' || field === 'fingerprint') && rest.length === 0) {
    return { type: 'path', root, field };
  }
  throw new ExpressionError(
    `unknown context '${text}'; use flow.name, flow.tags.<key>, artifact.name or artifact.fingerprint`,
    pos + 1,
  );
}

function isBooleanNode(e: Expr): boolean {
  return (
    e.type === 'compare' ||
    e.type === 'in' ||
    e.type === 'not' ||
    e.type === 'logical' ||
    e.type === 'exists' ||
    e.type === 'matches' ||
    (e.type === 'literal' && typeof e.value === 'boolean')
  );
}

function requireBoolean(e: Expr, pos: number): Expr {
  if (!isBooleanNode(e)) {
    throw new ExpressionError('operands of and, or and not must be conditions', pos + 1);
  }
  return e;
}

/** Removes the `${{ ... }}` wrapper a policy writes around an expression, if present. */
export function unwrapExpression(text: string): string {
  const m = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(text);
  return (m ? m[1]! : text).trim();
}

/** How parseExpression treats a `matches()` pattern RE2 cannot run. */
export interface ParseOptions {
  /**
   * false (saving a policy): refuse it with an ExpressionError. true (evaluating a stored
   * policy saved before patterns ran with RE2): the call never matches, as a pattern read from
   * a tag that cannot run does.
   */
  lenientPatterns?: boolean;
}

/** Parses an expression (with or without `${{ }}`); throws ExpressionError when it is invalid or not a condition. */
export function parseExpression(text: string, options: ParseOptions = {}): Expr {
  const inner = unwrapExpression(text);
  if (inner.length === 0) {
    throw new ExpressionError('the expression is empty', 1);
  }
  if (inner.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`, 1);
  }
  const expr = new Parser(tokenize(inner), options).parseAll();
  if (!isBooleanNode(expr)) {
    throw new ExpressionError('the expression must be a condition (true or false)', 1);
  }
  return expr;
}
