/**
 * The policy rule `artifacts.signature`: parsed and checked when saved (RE2 identity patterns,
 * issuer or key), absent from policies that do not name it, and evaluated over the verified
 * signatures of the artifact's fingerprint, with exceptions and a reason naming what was found.
 */
import { describe, expect, it } from 'vitest';
import {
  evaluateArtifactAgainstPolicies,
  type PolicyVersion,
  type ProvenanceLike,
} from '../../services/api/src/domain/policy-evaluation.js';
import { parsePolicyYaml, policyDump } from '../../services/api/src/domain/policy.js';

const SCHEMA = '_schema: https://docs.kosli.com/schemas/policy/v1\n';
const GHA = 'https://token.actions.githubusercontent.com';
const WORKFLOW = 'https://github.com/acme/shop/.github/workflows/release.yml@refs/heads/main';
const artifact = { name: 'registry/shop:1', fingerprint: 'e'.repeat(64) };

function policy(yaml: string): PolicyVersion {
  const parsed = parsePolicyYaml(`${SCHEMA}${yaml}`);
  if (!parsed.ok) {
    throw new Error(JSON.stringify(parsed.problems));
  }
  return { id: 'p', name: 'signed', version: 3, policy: parsed.policy };
}

function record(signatures: ProvenanceLike['signatures'], flowName = 'shop-ci'): ProvenanceLike {
  return {
    fingerprint: artifact.fingerprint,
    flowName,
    flowTags: { team: 'shop' },
    trailName: 't1',
    artifactCompliance: 'COMPLIANT',
    trailCompliance: 'COMPLIANT',
    attestations: [],
    signatures,
  };
}

const SIGNED = `artifacts:
  signature:
    signers:
      - issuer: ${GHA}
        identity: ^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/heads/main$
      - key: release-key
    exceptions:
      - if: \${{ flow.tags.team == "vendor" }}
`;

describe('parsing the signature rule', () => {
  it('keeps policies without it as they were', () => {
    const p = policy('artifacts:\n  provenance:\n    required: true\n').policy;
    expect(p).not.toHaveProperty('signature');
    expect(policyDump(p).artifacts).not.toHaveProperty('signature');
  });

  it('reads signers and exceptions, and dumps them', () => {
    const p = policy(SIGNED).policy;
    expect(p.signature).toEqual({
      signers: [
        {
          issuer: GHA,
          identity: '^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/heads/main$',
        },
        { key: 'release-key' },
      ],
      exceptions: [{ text: 'flow.tags.team == "vendor"' }],
    });
    expect((policyDump(p).artifacts as any).signature.exceptions).toEqual([
      { if_condition: { text: 'flow.tags.team == "vendor"' } },
    ]);
  });

  it.each([
    [
      'an identity pattern RE2 cannot run',
      `      - issuer: ${GHA}\n        identity: (a)\\1\n`,
      /signers\[0\]\.identity: invalid pattern/,
    ],
    ['an identity without its issuer', '      - identity: ^x$\n', /artifacts\.signature\.signers\[0\]/],
    [
      'a signer naming both a key and an issuer',
      `      - key: k\n        issuer: ${GHA}\n`,
      /artifacts\.signature\.signers\[0\]/,
    ],
  ])('refuses %s, naming the place', (_what, signers, message) => {
    const parsed = parsePolicyYaml(`${SCHEMA}artifacts:\n  signature:\n    signers:\n${signers}`);
    expect(parsed.ok).toBe(false);
    expect((!parsed.ok ? parsed.problems : []).map((p) => `${p.path}: ${p.message}`).join('\n')).toMatch(
      message,
    );
  });

  it('refuses an empty list of signers', () => {
    const parsed = parsePolicyYaml(`${SCHEMA}artifacts:\n  signature:\n    signers: []\n`);
    expect(parsed.ok).toBe(false);
  });
});

describe('evaluating the signature rule', () => {
  const signed = policy(SIGNED);

  it('is satisfied by a verified signature of a listed issuer whose identity matches, or of a listed key', () => {
    const byCi = evaluateArtifactAgainstPolicies(
      artifact,
      [record([{ kind: 'sigstore-bundle', identity: WORKFLOW, issuer: GHA }])],
      [signed],
      false,
    );
    expect(byCi).toMatchObject({ compliant: true, reasons: [] });
    const byKey = evaluateArtifactAgainstPolicies(
      artifact,
      [record([{ kind: 'dsse', identity: 'release-key', issuer: null }])],
      [signed],
      false,
    );
    expect(byKey.compliant).toBe(true);
  });

  it('is not satisfied by the right identity from another issuer, nor a key id posing as a certificate identity', () => {
    const other = evaluateArtifactAgainstPolicies(
      artifact,
      [
        record([
          { kind: 'sigstore-bundle', identity: WORKFLOW, issuer: 'https://accounts.google.com' },
          { kind: 'sigstore-bundle', identity: 'release-key', issuer: GHA },
        ]),
      ],
      [signed],
      false,
    );
    expect(other.compliant).toBe(false);
    expect(other.reasons).toEqual([
      `policy 'signed' v3: signature: missing_signature in flow 'shop-ci' (no verified signature by an allowed signer; verified signatures: '${WORKFLOW}' (https://accounts.google.com), 'release-key' (${GHA}))`,
    ]);
  });

  it('fails without provenance, and says none verified', () => {
    const none = evaluateArtifactAgainstPolicies(artifact, [], [signed], false);
    expect(none.reasons).toEqual([
      "policy 'signed' v3: signature: missing_signature (no verified signature by an allowed signer; none verified)",
    ]);
  });

  it('does not apply where an exception holds', () => {
    const vendor = { ...record([]), flowTags: { team: 'vendor' } };
    const v = evaluateArtifactAgainstPolicies(artifact, [vendor], [signed], false);
    expect(v.compliant).toBe(true);
    expect(v.decisions[0]!.rule_evaluations.find((r) => r.rule.type === 'signature')).toMatchObject({
      ignored: true,
      satisfied: null,
    });
  });
});
