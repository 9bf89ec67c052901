/** Per-type compliance rules of semantics.md section 4 ("Types"), one table per type. */
import { describe, expect, it } from 'vitest';
import {
  customCompliant,
  junitCompliant,
  pullRequestCompliant,
  qualityGateCompliant,
  scanCompliant,
  ticketsCompliant,
} from '../../services/api/src/domain/attestation-compliance.js';

describe('junit: compliant iff every suite has 0 failures and 0 errors', () => {
  it.each([
    { suites: [{ failures: 0, errors: 0 }], ok: true },
    {
      suites: [
        { failures: 0, errors: 0 },
        { failures: 1, errors: 0 },
      ],
      ok: false,
    },
    { suites: [{ failures: 0, errors: 2 }], ok: false },
    { suites: [], ok: true },
  ])('$suites -> $ok', ({ suites, ok }) => expect(junitCompliant(suites)).toBe(ok));
});

describe('snyk: compliant iff every run has no high, medium or low result', () => {
  const run = (h: number, m: number, l: number) => ({ high_count: h, medium_count: m, low_count: l });
  it.each([
    { runs: [run(0, 0, 0)], ok: true },
    { runs: [run(0, 0, 1)], ok: false },
    { runs: [run(0, 0, 0), run(1, 0, 0)], ok: false },
    { runs: [run(0, 2, 0)], ok: false },
  ])('$runs -> $ok', ({ runs, ok }) => expect(scanCompliant(runs)).toBe(ok));
});

describe('pull_request: compliant iff at least one pull request', () => {
  it.each([
    { prs: [], ok: false },
    { prs: [{}], ok: true },
  ])('$prs -> $ok', ({ prs, ok }) => expect(pullRequestCompliant(prs)).toBe(ok));
});

describe('jira: compliant iff at least one issue and every issue exists', () => {
  it.each([
    { issues: [], ok: false },
    { issues: [{ issue_exists: true }], ok: true },
    { issues: [{ issue_exists: true }, { issue_exists: false }], ok: false },
  ])('$issues -> $ok', ({ issues, ok }) => expect(ticketsCompliant(issues)).toBe(ok));
});

describe('sonar: compliant iff the quality gate status is OK', () => {
  it.each([
    { r: { qualityGate: { status: 'OK' } }, ok: true },
    { r: { qualityGate: { status: 'ERROR' } }, ok: false },
    { r: { qualityGate: null }, ok: false },
    { r: {}, ok: false },
  ])('$r -> $ok', ({ r, ok }) => expect(qualityGateCompliant(r)).toBe(ok));
});

describe('custom: compliant iff the schema validates and every rule is true', () => {
  it.each([
    { errors: [], rules: [{ result: true }], ok: true },
    { errors: ['bad'], rules: [{ result: true }], ok: false },
    { errors: [], rules: [{ result: true }, { result: false }], ok: false },
    { errors: [], rules: [{ result: 'true' }], ok: false },
    { errors: [], rules: [], ok: true },
  ])('$errors $rules -> $ok', ({ errors, rules, ok }) => expect(customCompliant(errors, rules)).toBe(ok));
});
