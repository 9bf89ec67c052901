import { describe, expect, it } from 'vitest';
import { evaluateExpression } from '../../services/api/src/domain/policy-expression-evaluate.js';
import {
  ExpressionError,
  parseExpression,
  type ExpressionContext,
} from '../../services/api/src/domain/policy-expression.js';

const ctx: ExpressionContext = {
  flow: {
    name: 'payments-ci',
    tags: { 'risk-level': 'high', 'team.owner': 'core', kind: 'build', tier: '3' },
  },
  artifact: { name: 'datadog:7.1', fingerprint: 'f'.repeat(64) },
};
const noFlow: ExpressionContext = { ...ctx, flow: null };

describe('policy expressions: the grammar (section 6)', () => {
  it.each([
    ['${{ flow.name == "payments-ci" }}', true],
    ['flow.name != "payments-ci"', false],
    ['${{ flow.tags.risk-level == "high" }}', true],
    ['flow.tags.team.owner == "core"', true],
    ['flow.tags.missing == null', true],
    ['exists(flow.tags.kind)', true],
    ['exists(flow.tags.missing)', false],
    ['not exists(flow.tags.missing)', true],
    ['matches(artifact.name, "^datadog:.*")', true],
    ["matches(artifact.name, '^nginx')", false],
    ['flow.name in ["a", "payments-ci"]', true],
    ['flow.name not in ["a", "payments-ci"]', false],
    ['"pay" in flow.name', true],
    ['flow.tags.kind == "build" and flow.tags.risk-level == "high"', true],
    ['flow.tags.kind == "deploy" or flow.tags.risk-level == "high"', true],
    ['not (flow.tags.kind == "build" or false)', false],
    ['flow.tags.tier > "2" and 3 >= 3 and 2 < 10 and 1 <= 0', false],
    ['"a" < 1', false],
    ['true', true],
    ['[1, 2] == [1, 2]', true],
  ])('%s is %s', (text, expected) => {
    expect(evaluateExpression(parseExpression(text), ctx)).toBe(expected);
  });

  it.each([
    ['flow.tags.kind != "build"', true],
    ['flow.name == "x"', false],
    ['exists(flow.name)', false],
    ['artifact.fingerprint == "' + 'f'.repeat(64) + '"', true],
  ])('without provenance, %s is %s', (text, expected) => {
    expect(evaluateExpression(parseExpression(text), noFlow)).toBe(expected);
  });

  it.each([
    ['flow.name ==', 'unexpected end of expression'],
    ['flow.nam == "x"', "unknown context 'flow.nam'"],
    ['repo.name == "x"', "unknown context 'repo.name'"],
    ['flow.name', 'must be a condition'],
    ['flow.name and true', 'operands of and, or and not must be conditions'],
    ['lower(flow.name) == "x"', "unknown function 'lower'"],
    ['matches(flow.name, "[")', 'invalid regular expression'],
    ['exists("x")', 'exists() takes one context value'],
    ['flow.name == "x', 'unterminated string'],
    ['flow.name == "x" )', 'unexpected input after the expression'],
    ['flow.name == $x', "unexpected character '$'"],
    ['${{ }}', 'the expression is empty'],
    ['(flow.name == "x"', "expected ')'"],
  ])('refuses %s: %s', (text, reason) => {
    expect(() => parseExpression(text)).toThrow(ExpressionError);
    expect(() => parseExpression(text)).toThrow(reason);
  });

  it('never runs user text as code', () => {
    expect(() => parseExpression('process.exit(1)')).toThrow(ExpressionError);
    expect(() => parseExpression('constructor.constructor("return 1")()')).toThrow(ExpressionError);
  });
});

describe('policy expressions: matches() runs with RE2 semantics', () => {
  const named = (name: string): ExpressionContext => ({ ...ctx, artifact: { ...ctx.artifact, name } });

  it('answers a pattern that backtracks exponentially in a backtracking engine', { timeout: 5_000 }, () => {
    const expr = parseExpression('${{ matches(artifact.name, "^(a+)+$") }}');
    // A backtracking engine takes about 20 s on 27 characters, twice that for each more.
    expect(evaluateExpression(expr, named(`${'a'.repeat(27)}!`))).toBe(false);
    expect(evaluateExpression(expr, named('a'.repeat(2048)))).toBe(true);
  });

  it('answers a catastrophic pattern read from a flow tag', { timeout: 5_000 }, () => {
    const expr = parseExpression('matches(artifact.name, flow.tags.pattern)');
    const tagged = { ...named(`${'a'.repeat(26)}!`), flow: { name: 'f', tags: { pattern: '^(a|a)+$' } } };
    expect(evaluateExpression(expr, tagged)).toBe(false);
  });

  it.each([
    ['matches(artifact.name, "(a)\\\\1")', 'invalid escape sequence'],
    ['matches(artifact.name, "(?=a)")', 'unsupported Perl syntax'],
    ['matches(artifact.name, "(?!a)")', 'unsupported Perl syntax'],
    ['matches(artifact.name, "(?<=a)b")', 'RE2 syntax'],
    ['matches(artifact.name, "(.*){1000}")', 'too complex'],
    [`matches(artifact.name, "${'a'.repeat(513)}")`, 'longer than 512 characters'],
  ])('refuses %s, which RE2 cannot run or bound', (text, reason) => {
    expect(() => parseExpression(text)).toThrow(ExpressionError);
    expect(() => parseExpression(text)).toThrow(reason);
  });

  it('evaluates a stored condition whose pattern RE2 cannot run as never matching', () => {
    const expr = parseExpression('matches(artifact.name, "^(?!nginx)") or flow.name == "payments-ci"', {
      lenientPatterns: true,
    });
    expect(evaluateExpression(expr, ctx)).toBe(true);
    expect(evaluateExpression(expr, { ...ctx, flow: { name: 'other', tags: {} } })).toBe(false);
  });

  it('keeps the JavaScript meaning of common patterns', () => {
    const cases: Array<[string, string, boolean]> = [
      ['^datadog:\\\\d+\\\\.\\\\d+$', 'datadog:7.1', true],
      ['(?i)DATADOG', 'datadog:7.1', true],
      ['\\\\/app$', 'registry.example/app', true],
      ['^nginx', 'datadog:7.1', false],
    ];
    for (const [pattern, name, expected] of cases) {
      expect(evaluateExpression(parseExpression(`matches(artifact.name, "${pattern}")`), named(name))).toBe(
        expected,
      );
    }
  });
});
