/**
 * Signed evidence as the verifier judges it: bundles and envelopes built over private trust
 * material (test/helpers/sigstore.ts) verify, and each way of breaking one fails with its reason.
 */
import { describe, expect, it } from 'vitest';
import {
  buildSignatureTrust,
  MAX_SIGNED_EVIDENCE_BYTES,
  SignatureTrustError,
  verifySignedEvidence,
} from '../../services/api/src/workers/signed-evidence.mjs';
import {
  bundle,
  envelope,
  IDENTITY,
  ISSUER,
  KEY_ID,
  publicKeys,
  statement,
  trustedRoot,
} from '../helpers/sigstore.js';

const FP = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const trust = buildSignatureTrust(trustedRoot(), publicKeys());
const file = (json: unknown, filename = 'provenance.sigstore.json') => ({
  filename,
  data: Buffer.from(typeof json === 'string' ? json : JSON.stringify(json)),
});

describe('Sigstore bundles', () => {
  it('verifies a bundle whose statement names the artifact, with the signer identity and issuer', () => {
    expect(verifySignedEvidence(trust, file(bundle(statement(OTHER, FP))), FP)).toEqual({
      verified: true,
      kind: 'sigstore-bundle',
      identity: IDENTITY,
      issuer: ISSUER,
      reason: null,
    });
  });

  it('finds a bundle by its media type whatever the file is called', () => {
    expect(verifySignedEvidence(trust, file(bundle(statement(FP)), 'evidence'), FP)?.verified).toBe(true);
  });

  it('refuses a bundle whose payload changed after signing', () => {
    const r = verifySignedEvidence(
      trust,
      file(bundle(statement(FP), { tamperedPayload: statement(FP, OTHER) })),
      FP,
    );
    expect(r).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(r!.reason).toMatch(/tlog body error: DSSE payload hash mismatch/);
  });

  it('refuses a bundle whose statement is about another artifact', () => {
    const r = verifySignedEvidence(trust, file(bundle(statement(OTHER))), FP);
    expect(r).toMatchObject({ verified: false, identity: IDENTITY, issuer: ISSUER });
    expect(r!.reason).toBe(
      `no in-toto subject has the artifact's fingerprint ${FP} (subjects: sha256:${OTHER})`,
    );
  });

  it('refuses a bundle when the attestation names no artifact', () => {
    const r = verifySignedEvidence(trust, file(bundle(statement(FP))), null);
    expect(r!.reason).toMatch(/names no artifact fingerprint/);
  });

  it('refuses a certificate from a CA the root does not list', () => {
    const r = verifySignedEvidence(trust, file(bundle(statement(FP), { untrusted: true })), FP);
    expect(r).toMatchObject({ verified: false, identity: null });
    expect(r!.reason).toMatch(/^certificate error: Failed to verify certificate chain/);
  });

  it('refuses a signed payload that is not an in-toto statement', () => {
    const r = verifySignedEvidence(trust, file(bundle(Buffer.from('{}'), { payloadType: 'text/plain' })), FP);
    expect(r!.reason).toMatch(/not an in-toto statement/);
  });

  it('says a bundle cannot be verified without a trusted root', () => {
    const r = verifySignedEvidence(
      buildSignatureTrust(undefined, undefined),
      file(bundle(statement(FP))),
      FP,
    );
    expect(r!.reason).toMatch(/no trusted root is configured \(VERITY_SIGSTORE_TRUSTED_ROOT_FILE\)/);
  });

  it('reports a malformed bundle and an oversize one, and ignores files that are not signed evidence', () => {
    const malformed = verifySignedEvidence(
      trust,
      file({ mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json', verificationMaterial: 7 }),
      FP,
    );
    expect(malformed).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(malformed!.reason).toMatch(/^malformed bundle/);
    expect(verifySignedEvidence(trust, file('{not json', 'x.sigstore.json'), FP)!.reason).toMatch(/not JSON/);
    const big = JSON.stringify({ ...bundle(statement(FP)), padding: 'x'.repeat(MAX_SIGNED_EVIDENCE_BYTES) });
    expect(verifySignedEvidence(trust, file(big, 'evidence'), FP)!.reason).toMatch(
      /more than the 1048576 read/,
    );
    expect(verifySignedEvidence(trust, file({ results: [] }, 'report.json'), FP)).toBeNull();
    expect(verifySignedEvidence(trust, file('plain text', 'notes.txt'), FP)).toBeNull();
  });
});

describe('keyed DSSE envelopes', () => {
  it('verifies an envelope signed with a configured key; the identity is the key id', () => {
    expect(verifySignedEvidence(trust, file(envelope(statement(FP)), 'att.intoto.json'), FP)).toEqual({
      verified: true,
      kind: 'dsse',
      identity: KEY_ID,
      issuer: null,
      reason: null,
    });
  });

  it('tries every key for an envelope that names none', () => {
    expect(verifySignedEvidence(trust, file(envelope(statement(FP), { keyid: '' })), FP)?.verified).toBe(
      true,
    );
  });

  it('refuses a changed payload, an unknown key id and a signature by another key', () => {
    const changed = verifySignedEvidence(
      trust,
      file(envelope(statement(FP), { tamperedPayload: statement(FP, OTHER) })),
      FP,
    );
    expect(changed).toMatchObject({ verified: false, kind: 'dsse' });
    expect(changed!.reason).toMatch(/no trusted key verifies the envelope/);
    const unknown = verifySignedEvidence(trust, file(envelope(statement(FP), { keyid: 'nobody' })), FP);
    expect(unknown!.reason).toBe("the envelope's key id 'nobody' is not among the trusted keys");
    const other = verifySignedEvidence(trust, file(envelope(statement(FP), { otherKey: true })), FP);
    expect(other!.reason).toMatch(/no trusted key verifies the envelope/);
  });
});

describe('settings', () => {
  it('refuses a trusted root or keys file it cannot use, saying why', () => {
    expect(() => buildSignatureTrust('{', undefined)).toThrow(SignatureTrustError);
    expect(() => buildSignatureTrust('{}', undefined)).toThrow(/lists no certificate authority/);
    expect(() => buildSignatureTrust(undefined, '{"k":"not a key"}')).toThrow(
      /public key 'k' is not a PEM public key/,
    );
    expect(() => buildSignatureTrust(undefined, '[]')).toThrow(/JSON object of key id to PEM/);
  });
});
