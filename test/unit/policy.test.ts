import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { formatPolicyProblem, parsePolicyYaml, policyDump } from '../../services/api/src/domain/policy.js';

const fixture = (name: string) => readFileSync(`/work/shared/reference/fixtures/policies/${name}`, 'utf8');
const DOCS = '_schema: https://docs.kosli.com/schemas/policy/v1\n';

describe('policy files: schema and conditions (section 6)', () => {
  it('accepts both published _schema URLs and fills defaults', () => {
    for (const text of [fixture('test-policy.yml'), DOCS]) {
      const result = parsePolicyYaml(text);
      expect(result.ok).toBe(true);
    }
    const result = parsePolicyYaml(DOCS);
    expect(result).toEqual({
      ok: true,
      policy: {
        schemaVersion: '1',
        provenance: { required: false, exceptions: [] },
        trailCompliance: { required: false, exceptions: [] },
        attestations: [],
      },
    });
  });

  it('parses rules, conditions and decisions', () => {
    const text = `${DOCS}artifacts:
  provenance:
    required: true
    exceptions:
      - if: \${{ matches(artifact.name, "^datadog:.*") }}
  attestations:
    - name: pull-request
      type: pull_request
      if: \${{ flow.tags.risk-level == "high" }}
    - type: decision
      for_control: CTL-1
      must_be_compliant: false
`;
    const result = parsePolicyYaml(text);
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    expect(result.policy.provenance).toEqual({
      required: true,
      exceptions: [{ text: 'matches(artifact.name, "^datadog:.*")' }],
    });
    expect(result.policy.attestations).toEqual([
      {
        name: 'pull-request',
        type: 'pull_request',
        if: { text: 'flow.tags.risk-level == "high"' },
        mustBeCompliant: true,
        forControl: null,
      },
      { name: '*', type: 'decision', if: null, mustBeCompliant: false, forControl: 'CTL-1' },
    ]);
    expect(policyDump(result.policy)).toMatchObject({
      schema_version: '1',
      artifacts: {
        provenance: {
          required: true,
          exceptions: [{ if_condition: { text: 'matches(artifact.name, "^datadog:.*")' } }],
        },
        trail_compliance: { required: false, exceptions: [] },
      },
    });
  });

  it.each([
    { case: 'missing _schema', text: 'artifacts: {}\n', line: 1, message: "missing required key '_schema'" },
    {
      case: 'unknown key',
      text: `${DOCS}artifacts:\n  provenance:\n    requird: true\n`,
      line: 4,
      message: "unknown key 'requird'",
    },
    {
      case: 'unknown attestation type',
      text: `${DOCS}artifacts:\n  attestations:\n    - type: screenshot\n`,
      line: 4,
      message: 'not one of the allowed values',
    },
    {
      case: 'wrong value type',
      text: `${DOCS}artifacts:\n  provenance:\n    required: yes-please\n`,
      line: 4,
      message: 'must be boolean',
    },
    {
      case: 'unsupported version',
      text: '_schema: https://docs.kosli.com/schemas/policy/v2\n',
      line: 1,
      message: 'v2 is not supported',
    },
    {
      case: 'both wildcards',
      text: `${DOCS}artifacts:\n  attestations:\n    - name: "*"\n      type: "*"\n`,
      line: 4,
      message: "cannot both be '*'",
    },
    {
      case: 'for_control without decision',
      text: `${DOCS}artifacts:\n  attestations:\n    - type: junit\n      for_control: X\n`,
      line: 5,
      message: "only valid with type 'decision'",
    },
    {
      case: 'bad condition',
      text: `${DOCS}artifacts:\n  attestations:\n    - type: junit\n      if: \${{ flow.nmae == "x" }}\n`,
      line: 5,
      message: "unknown context 'flow.nmae'",
    },
    { case: 'broken YAML', text: `${DOCS}artifacts:\n  provenance: [\n`, line: 4, message: 'invalid YAML' },
    { case: 'not a mapping', text: '- a\n- b\n', line: 1, message: 'must be a YAML mapping' },
  ])('reports $case with its line', ({ text, line, message }) => {
    const result = parsePolicyYaml(text);
    expect(result.ok).toBe(false);
    if (result.ok) {
      return;
    }
    const hit = result.problems.find((p) => p.message.includes(message));
    expect(hit, JSON.stringify(result.problems)).toBeDefined();
    expect(hit!.line).toBe(line);
    expect(formatPolicyProblem(hit!)).toMatch(new RegExp(`^line ${line}: `));
  });
});
