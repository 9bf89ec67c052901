/**
 * Bundles signed by real Sigstore infrastructure (the public conformance suite's, with the trusted
 * root they were made under) verify; the same bundle changed, naming another artifact, or judged
 * against another root does not, and the reason says why.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildSignatureTrust,
  verifySignedEvidence,
} from '../../services/api/src/workers/signed-evidence.mjs';
import { publicKeys, trustedRoot } from '../helpers/sigstore.js';

const dir = new URL('../fixtures/sigstore/conformance/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir));
const conformanceTrust = buildSignatureTrust(read('trusted_root.json').toString('utf8'), '{}');
const good = read('intoto-with-custom-trust-root.sigstore.json');
const goodJson = JSON.parse(good.toString('utf8')) as {
  dsseEnvelope: { payload: string };
};
const statement = JSON.parse(Buffer.from(goodJson.dsseEnvelope.payload, 'base64').toString('utf8')) as {
  subject: Array<{ digest: { sha256: string } }>;
};
const FP = statement.subject[0]!.digest.sha256;
const file = (data: Buffer) => ({ filename: 'provenance.sigstore.json', data });

describe('Sigstore conformance bundles', () => {
  it('verifies a GitHub Actions keyless bundle against its trusted root, naming the signer', () => {
    expect(verifySignedEvidence(conformanceTrust, file(good), FP)).toEqual({
      verified: true,
      kind: 'sigstore-bundle',
      identity:
        'https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main',
      issuer: 'https://token.actions.githubusercontent.com',
      reason: null,
    });
  });

  it('refuses the same bundle with a changed payload', () => {
    const changed = structuredClone(goodJson);
    const payload = JSON.parse(Buffer.from(changed.dsseEnvelope.payload, 'base64').toString());
    payload.predicate = { ...(payload.predicate ?? {}), changed: true };
    changed.dsseEnvelope.payload = Buffer.from(JSON.stringify(payload)).toString('base64');
    const result = verifySignedEvidence(conformanceTrust, file(Buffer.from(JSON.stringify(changed))), FP);
    expect(result.verified).toBe(false);
    expect(result.reason).toMatch(/signature|digest|mismatch/i);
  });

  it('refuses it for an artifact its statement does not name', () => {
    const result = verifySignedEvidence(conformanceTrust, file(good), 'c'.repeat(64));
    expect(result.verified).toBe(false);
    expect(result.reason).toContain(FP);
  });

  it('refuses it against a trusted root that did not issue its certificate', () => {
    const other = buildSignatureTrust(trustedRoot(), publicKeys());
    const result = verifySignedEvidence(other, file(good), FP);
    expect(result.verified).toBe(false);
    // The first check that fails is the first one bound to the root: the log's signed timestamp.
    expect(result.reason).toMatch(/^(timestamp|certificate) error/);
  });

  it('refuses a bundle whose certificate was not valid when it was logged', () => {
    const expired = read('intoto-expired-certificate.sigstore.json');
    const result = verifySignedEvidence(conformanceTrust, file(expired), FP);
    expect(result).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(result.reason).toMatch(/certificate is not valid or expired/);
  });
});
