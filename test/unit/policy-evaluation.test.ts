import { describe, expect, it } from 'vitest';
import {
  environmentCompliance,
  evaluateArtifactAgainstPolicies,
  type PolicyVersion,
} from '../../services/api/src/domain/policy-evaluation.js';
import { parsePolicyYaml } from '../../services/api/src/domain/policy.js';
import type { ProvenanceRecord } from '../../services/api/src/usecases/scope/provenance.js';

const FP = 'e'.repeat(64);
const artifact = { name: 'registry/payments:1.2', fingerprint: FP };

function policy(yaml: string, name = 'prod', version = 1): PolicyVersion {
  const parsed = parsePolicyYaml(`_schema: https://docs.kosli.com/schemas/policy/v1\n${yaml}`);
  if (!parsed.ok) {
    throw new Error(JSON.stringify(parsed.problems));
  }
  return { id: `id-${name}`, name, version, policy: parsed.policy };
}

function record(overrides: Partial<ProvenanceRecord> = {}): ProvenanceRecord {
  return {
    fingerprint: FP,
    flowName: 'payments-ci',
    flowTags: { kind: 'build' },
    trailName: 'abc123',
    artifactId: 'a1',
    artifactName: 'payments',
    templateReferenceName: 'payments',
    gitCommit: 'c'.repeat(40),
    gitCommitInfo: null,
    commitUrl: null,
    buildUrl: null,
    htmlUrl: 'http://verity.test/acme/flows/payments-ci',
    reportedAt: new Date(0),
    artifactCompliance: 'COMPLIANT',
    trailCompliance: 'COMPLIANT',
    nonComplianceReasons: [],
    attestations: [],
    ...overrides,
  };
}

const PROVENANCE = policy('artifacts:\n  provenance:\n    required: true\n');
const TRAIL = policy('artifacts:\n  trail-compliance:\n    required: true\n');
const SNYK = policy('artifacts:\n  attestations:\n    - name: scan\n      type: snyk\n');
const PR_IF_HIGH = policy(
  'artifacts:\n  attestations:\n    - type: pull_request\n      if: ${{ flow.tags.risk == "high" }}\n',
);
const PROVENANCE_EXCEPT_DATADOG = policy(
  'artifacts:\n  provenance:\n    required: true\n    exceptions:\n      - if: ${{ matches(artifact.name, "^registry/pay") }}\n',
);
const DECISION = policy('artifacts:\n  attestations:\n    - type: decision\n      for_control: CTL-1\n');

describe('artifact compliance against policies (section 6)', () => {
  it.each([
    {
      rule: 'no policy attached: compliance is unknown',
      policies: [],
      records: [],
      allow: false,
      compliant: null,
    },
    {
      rule: 'provenance required, none known: non-compliant',
      policies: [PROVENANCE],
      records: [],
      allow: false,
      compliant: false,
    },
    {
      rule: 'provenance required, reported in a flow: compliant',
      policies: [PROVENANCE],
      records: [record()],
      allow: false,
      compliant: true,
    },
    {
      rule: 'an exception that holds waives the rule',
      policies: [PROVENANCE_EXCEPT_DATADOG],
      records: [],
      allow: false,
      compliant: true,
    },
    {
      rule: 'allow-listed wins over failing policies',
      policies: [PROVENANCE],
      records: [],
      allow: true,
      compliant: true,
    },
    {
      rule: 'trail compliance required, trail incomplete: non-compliant',
      policies: [TRAIL],
      records: [record({ trailCompliance: 'INCOMPLETE', artifactCompliance: 'INCOMPLETE' })],
      allow: false,
      compliant: false,
    },
    {
      rule: 'a rule is satisfied if any flow context satisfies it',
      policies: [TRAIL],
      records: [
        record({ trailCompliance: 'NON-COMPLIANT' }),
        record({ flowName: 'promotion', trailCompliance: 'COMPLIANT' }),
      ],
      allow: false,
      compliant: true,
    },
    {
      rule: 'a required attestation missing: non-compliant',
      policies: [SNYK],
      records: [record()],
      allow: false,
      compliant: false,
    },
    {
      rule: 'a required attestation present and compliant: compliant',
      policies: [SNYK],
      records: [
        record({ attestations: [{ name: 'scan', type: 'snyk', isCompliant: true, scope: 'artifact' }] }),
      ],
      allow: false,
      compliant: true,
    },
    {
      rule: 'a required attestation present but failing: non-compliant',
      policies: [SNYK],
      records: [
        record({ attestations: [{ name: 'scan', type: 'snyk', isCompliant: false, scope: 'artifact' }] }),
      ],
      allow: false,
      compliant: false,
    },
    {
      rule: 'a rule whose if is false does not apply',
      policies: [PR_IF_HIGH],
      records: [record()],
      allow: false,
      compliant: true,
    },
    {
      rule: 'a rule whose if is true applies',
      policies: [PR_IF_HIGH],
      records: [record({ flowTags: { risk: 'high' } })],
      allow: false,
      compliant: false,
    },
    {
      rule: 'a decision counts only for its control',
      policies: [DECISION],
      records: [
        record({
          attestations: [
            { name: 'gate', type: 'decision', isCompliant: true, scope: 'trail', control: 'CTL-2' },
          ],
        }),
      ],
      allow: false,
      compliant: false,
    },
    {
      rule: 'every attached policy must pass',
      policies: [PROVENANCE, SNYK],
      records: [record()],
      allow: false,
      compliant: false,
    },
  ])('$rule', ({ policies, records, allow, compliant }) => {
    expect(evaluateArtifactAgainstPolicies(artifact, records, policies, allow).compliant).toBe(compliant);
  });

  it('records per-rule results with one resolution per flow context, as the reference shows', () => {
    const exceptPromotion = policy(
      'artifacts:\n  provenance:\n    required: true\n    exceptions:\n      - if: ${{ flow.tags.kind != "build" }}\n',
      'build-process',
      6,
    );
    const verdict = evaluateArtifactAgainstPolicies(
      artifact,
      [record(), record({ flowName: 'production-promotion', trailName: 'promotion-one-43', flowTags: {} })],
      [exceptPromotion],
      false,
    );
    expect(verdict.decisions[0]).toMatchObject({
      policy_name: 'build-process',
      policy_version: 6,
      status: 'COMPLIANT',
    });
    expect(verdict.decisions[0]!.rule_evaluations[0]).toEqual({
      rule: {
        type: 'provenance',
        definition: { required: true, exceptions: [{ if: { text: 'flow.tags.kind != "build"' } }] },
      },
      satisfied: true,
      ignored: false,
      resolutions: [
        {
          type: 'rule_satisfied',
          context: { flow_name: 'payments-ci', trail_name: 'abc123', artifact_status: null },
        },
        {
          type: 'rule_not_applicable',
          context: {
            flow_name: 'production-promotion',
            trail_name: 'promotion-one-43',
            artifact_status: null,
          },
        },
      ],
    });
    expect(verdict.decisions[0]!.rule_evaluations[1]).toMatchObject({ satisfied: null, ignored: true });
  });

  it('explains why an artifact is not compliant', () => {
    const verdict = evaluateArtifactAgainstPolicies(artifact, [], [PROVENANCE], false);
    expect(verdict.reasons).toEqual(["policy 'prod' v1: provenance: no_provenance"]);
  });
});

describe('environment compliance (section 6)', () => {
  it.each([
    { policies: 0, artifacts: [true, false], expected: null },
    { policies: 1, artifacts: [], expected: true },
    { policies: 1, artifacts: [true, true], expected: true },
    { policies: 2, artifacts: [true, false], expected: false },
  ])('$policies policies over $artifacts is $expected', ({ policies, artifacts, expected }) => {
    expect(environmentCompliance(policies, artifacts)).toBe(expected);
  });
});
