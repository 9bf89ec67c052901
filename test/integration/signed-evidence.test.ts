/**
 * Signed evidence as a client sees it: an attestation whose evidence file is a Sigstore bundle
 * or a DSSE envelope shows `signature` (verified, kind, identity, issuer, reason) on every read,
 * the file itself is kept and downloadable, and a file that is not signed evidence shows none.
 * The trust material is private (test/fixtures/sigstore), given through the `_FILE` settings.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import { tgz } from '../helpers/tar.js';
import { runAdmin } from '../../services/api/src/admin-commands.js';
import { buildSignatureTrust } from '../../services/api/src/workers/signed-evidence.mjs';
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

const ORG = 'acme';
const FLOW = 'shop';
const TRAIL = 'build';
const A = fp('a1');
const OTHER = fp('b2');

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

async function attest(
  name: string,
  file: { filename: string; content: Buffer | string } | null,
  fingerprint = A,
) {
  const parts = [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: name,
        is_compliant: true,
        artifact_fingerprint: fingerprint,
      }),
    },
    ...(file ? [{ name: 'attachment_file', ...file }] : []),
  ];
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/generic`, parts);
  expect(r.status, r.body).toBe(201);
  const got = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/${name}`);
  expect(got.status).toBe(200);
  return got.json[0];
}

const json = (value: unknown, filename = 'provenance.sigstore.json') => ({
  filename,
  content: JSON.stringify(value),
});

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-sigstore-'));
  writeFileSync(join(dir, 'trusted_root.json'), trustedRoot());
  writeFileSync(join(dir, 'keys.json'), publicKeys());
  t = await createTestApp({
    env: {
      VERITY_SIGSTORE_TRUSTED_ROOT_FILE: join(dir, 'trusted_root.json'),
      VERITY_SIGSTORE_PUBLIC_KEYS_FILE: join(dir, 'keys.json'),
    },
  });
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  for (const fingerprint of [A, OTHER]) {
    const sha = 'a'.repeat(40);
    const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
      fingerprint,
      filename: `registry.example/shop:${fingerprint.slice(0, 4)}`,
      git_commit: sha,
      git_commit_info: {
        sha1: sha,
        message: 'm',
        author: 'Dev <d@example.com>',
        branch: 'main',
        timestamp: 1,
      },
      build_url: 'https://ci.example/1',
      commit_url: `https://git.example/${sha}`,
      trail_name: TRAIL,
    });
    expect(r.status, r.body).toBe(201);
  }
});
afterAll(async () => t?.close());

describe('Sigstore bundles on arrival', () => {
  it('shows a verified bundle with its signer, keeps the file, and shows it on every read', async () => {
    const file = json(bundle(statement(A)));
    const a = await attest('provenance', file);
    expect(a.signature).toEqual({
      verified: true,
      kind: 'sigstore-bundle',
      identity: IDENTITY,
      issuer: ISSUER,
      reason: null,
    });
    expect(a.is_compliant).toBe(true);
    expect(a.evidence_file).toMatchObject({
      filename: 'provenance.sigstore.json',
      size: Buffer.byteLength(file.content),
    });
    const download = await t.app.inject({
      url: new URL(a.evidence_file.download_url).pathname,
      headers: { authorization: `Bearer ${await t.seedKey(ORG, 'reader')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.body).toBe(file.content);
    const byArtifact = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/artifact/${A}/provenance`);
    expect(byArtifact.json[0].signature).toEqual(a.signature);
  });

  it('says why a bundle whose payload changed after signing does not verify', async () => {
    const a = await attest('changed', json(bundle(statement(A), { tamperedPayload: statement(A, OTHER) })));
    expect(a.signature).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(a.signature.reason).toMatch(/DSSE payload hash mismatch/);
  });

  it('says why a bundle about another artifact does not verify', async () => {
    const a = await attest('elsewhere', json(bundle(statement(OTHER))));
    expect(a.signature).toEqual({
      verified: false,
      kind: 'sigstore-bundle',
      identity: IDENTITY,
      issuer: ISSUER,
      reason: `no in-toto subject has the artifact's fingerprint ${A} (subjects: sha256:${OTHER})`,
    });
  });

  it('says why a certificate from a CA outside the trusted root does not verify', async () => {
    const a = await attest('untrusted', json(bundle(statement(A), { untrusted: true })));
    expect(a.signature).toMatchObject({ verified: false, identity: null, issuer: null });
    expect(a.signature.reason).toMatch(
      /certificate error: Failed to verify certificate chain: no valid certificate path found/,
    );
  });

  it('stores a malformed or oversize bundle as evidence, unverified, saying why', async () => {
    const malformed = await attest(
      'malformed',
      json({ mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json', dsseEnvelope: 'x' }),
    );
    expect(malformed.signature).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(malformed.signature.reason).toMatch(/^malformed bundle/);
    const broken = await attest('broken', { filename: 'release.sigstore.json', content: '{"mediaType": ' });
    expect(broken.signature.reason).toMatch(/^the file is not JSON/);
    const big = JSON.stringify({ ...bundle(statement(A)), padding: 'x'.repeat(1024 * 1024) });
    const oversize = await attest('oversize', { filename: 'bundle.json', content: big });
    expect(oversize.signature).toMatchObject({ verified: false, kind: 'sigstore-bundle' });
    expect(oversize.signature.reason).toBe(
      `the file is ${Buffer.byteLength(big)} bytes, more than the 1048576 read as signed evidence`,
    );
    expect(oversize.evidence_file.size).toBe(Buffer.byteLength(big));
  });

  it('finds a bundle among the attachments the CLI tars into evidence.tgz', async () => {
    const archive = await tgz([
      ['report.xml', '<testsuites/>'],
      ['provenance.sigstore.json', JSON.stringify(bundle(statement(A)))],
    ]);
    const a = await attest('archived', { filename: 'evidence.tgz', content: archive });
    expect(a.signature).toMatchObject({ verified: true, kind: 'sigstore-bundle', identity: IDENTITY });
    const bad = await tgz([['att.intoto.json', JSON.stringify(envelope(statement(A), { keyid: 'ci-key' }))]]);
    const b = await attest('archived-bad', { filename: 'evidence.tgz', content: bad });
    expect(b.signature).toMatchObject({ verified: false, kind: 'dsse' });
    expect(b.signature.reason).toBe(
      "evidence.tgz:att.intoto.json: the envelope's key id 'ci-key' is not among the trusted keys",
    );
    const none = await tgz([['report.xml', '<testsuites/>']]);
    expect(await attest('archived-none', { filename: 'evidence.tgz', content: none })).not.toHaveProperty(
      'signature',
    );
  });

  it('shows no signature for evidence that is not signed, nor for an attestation without a file', async () => {
    expect(await attest('report', { filename: 'report.json', content: '{"results":[]}' })).not.toHaveProperty(
      'signature',
    );
    expect(await attest('plain', null)).not.toHaveProperty('signature');
  });
});

describe('keyed DSSE envelopes on arrival', () => {
  it('verifies an envelope signed with a configured key, naming the key', async () => {
    const a = await attest('keyed', json(envelope(statement(A)), 'statement.intoto.json'));
    expect(a.signature).toEqual({
      verified: true,
      kind: 'dsse',
      identity: KEY_ID,
      issuer: null,
      reason: null,
    });
  });

  it('says why an envelope with a changed payload or an unknown key does not verify', async () => {
    const changed = await attest(
      'keyed-changed',
      json(envelope(statement(A), { tamperedPayload: statement(OTHER) })),
    );
    expect(changed.signature).toMatchObject({ verified: false, kind: 'dsse' });
    expect(changed.signature.reason).toBe(
      'signature verification failed: no trusted key verifies the envelope',
    );
    const unknown = await attest('keyed-unknown', json(envelope(statement(A), { keyid: 'ci-key' })));
    expect(unknown.signature.reason).toBe("the envelope's key id 'ci-key' is not among the trusted keys");
  });
});

describe('environment policies requiring a signature', () => {
  const policy = (signers: string) => `${POLICY_SCHEMA}artifacts:\n  signature:\n    signers:\n${signers}`;
  const workflow = `      - issuer: ${ISSUER}\n        identity: ^https://github\\.com/acme/shop/\\.github/workflows/release\\.yml@refs/heads/main$\n`;
  let key: string;

  beforeAll(async () => {
    key = await t.seedKey(ORG, 'admin');
    expect((await putPolicy(t.app, key, ORG, 'signed-by-ci', policy(workflow))).status).toBe(201);
    expect(
      (
        await putPolicy(
          t.app,
          key,
          ORG,
          'signed-elsewhere',
          policy(`      - issuer: ${ISSUER}\n        identity: ^https://github\\.com/other/\n`),
        )
      ).status,
    ).toBe(201);
    expect(
      (await putPolicy(t.app, key, ORG, 'signed-by-key', policy(`      - key: ${KEY_ID}\n`))).status,
    ).toBe(201);
    expect(
      (await cli.json('PUT', `/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' }))
        .status,
    ).toBe(201);
    expect(
      (
        await cli.json('POST', `/api/v2/environments/${ORG}/prod/policies`, {
          policy_names: ['signed-by-ci'],
        })
      ).status,
    ).toBe(200);
  });

  it('keeps an artifact with a verified signature by a listed signer compliant, and says why another is not', async () => {
    const r = await cli.json('PUT', `/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: [
        ...deployment('shop', 'registry/shop:1', A, 1),
        ...deployment('cart', 'registry/cart:1', OTHER, 1),
      ],
    });
    expect(r.json).toBe('Snapshot #1 created');
    const snap = (await cli.get(`/api/v2/snapshots/${ORG}/prod/-1`)).json;
    expect(snap.compliant).toBe(false);
    const shop = snap.artifacts.find((a: any) => a.fingerprint === A);
    const cart = snap.artifacts.find((a: any) => a.fingerprint === OTHER);
    expect(shop.compliant).toBe(true);
    expect(cart.compliant).toBe(false);
    expect(cart.reasons_for_incompliance).toEqual([
      "policy 'signed-by-ci' v1: signature: missing_signature in flow 'shop' (no verified signature by an allowed signer; none verified)",
    ]);
    const rule = cart.policy_decisions[0].rule_evaluations.find((e: any) => e.rule.type === 'signature');
    expect(rule).toMatchObject({ satisfied: false, ignored: false });
    expect(rule.rule.definition.signers).toEqual([
      {
        issuer: ISSUER,
        identity: '^https://github\\.com/acme/shop/\\.github/workflows/release\\.yml@refs/heads/main$',
      },
    ]);
  });

  it('names the verified signatures an artifact does carry when none is by a listed signer', async () => {
    const r = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${A}?policy_name=signed-elsewhere`);
    expect(r.status, r.body).toBe(200);
    expect(r.json.compliant).toBe(false);
    const [decision] = r.json.policy_evaluations;
    expect(decision.status).toBe('NON-COMPLIANT');
    const rule = decision.rule_evaluations.find((e: any) => e.rule.type === 'signature');
    expect(rule.resolutions[0].type).toBe('missing_signature');
    expect([...rule.resolutions[0].context.signatures_found].sort()).toEqual([
      `'${IDENTITY}' (${ISSUER})`,
      `key '${KEY_ID}'`,
    ]);
  });

  it('accepts a keyed signer by its key id', async () => {
    const r = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${A}?policy_name=signed-by-key`);
    expect(r.json.compliant).toBe(true);
    const other = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${OTHER}?policy_name=signed-by-key`);
    expect(other.json.compliant).toBe(false);
  });

  it('turns an artifact compliant once a verified signature arrives for it', async () => {
    const before = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${OTHER}?environment_name=prod`);
    expect(before.json.compliant).toBe(false);
    expect((await attest('cart-provenance', json(bundle(statement(OTHER))), OTHER)).signature.verified).toBe(
      true,
    );
    const after = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${OTHER}?environment_name=prod`);
    expect(after.json.compliant).toBe(true);
  });

  it('refuses a signer whose identity pattern RE2 cannot run, or that names neither issuer nor key', async () => {
    const lookahead = await putPolicy(
      t.app,
      key,
      ORG,
      'bad',
      policy(`      - issuer: ${ISSUER}\n        identity: ^(?!evil)\n`),
    );
    expect(lookahead.status).toBe(400);
    expect(lookahead.json.message).toMatch(
      /artifacts\.signature\.signers\[0\]\.identity: invalid pattern: .*RE2 syntax/,
    );
    const neither = await putPolicy(t.app, key, ORG, 'bad', policy(`      - identity: ^x$\n`));
    expect(neither.status).toBe(400);
    expect(neither.json.message).toMatch(/artifacts\.signature\.signers\[0\]/);
    expect((await cli.get(`/api/v2/policies/${ORG}/bad`)).status).toBe(404);
  });
});

describe('verifying again from the kept files (admin command)', () => {
  const get = async (name: string) =>
    (await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/${name}`)).json[0];

  it('replaces every stored verification with one made with the trust material given now', async () => {
    const withoutKeys = buildSignatureTrust(trustedRoot(), undefined);
    const lines = await runAdmin(t.db.db, ['signatures', 'verify', ORG], new Date(), withoutKeys);
    const keyed = await get('keyed');
    expect(lines).toContain(
      `${keyed.attestation_id} ${FLOW}/${TRAIL}/keyed: not verified: no public keys are configured (VERITY_SIGSTORE_PUBLIC_KEYS_FILE): a DSSE envelope cannot be verified`,
    );
    const provenance = await get('provenance');
    expect(lines).toContain(
      `${provenance.attestation_id} ${FLOW}/${TRAIL}/provenance: verified by ${IDENTITY} (${ISSUER})`,
    );
    expect(lines.at(-1)).toBe('3 verified, 10 not verified');
    expect(keyed.signature).toMatchObject({ verified: false, kind: 'dsse', identity: null });
    expect(provenance.signature.verified).toBe(true);
    // And back, with the keys.
    const full = buildSignatureTrust(trustedRoot(), publicKeys());
    await runAdmin(
      t.db.db,
      ['signatures', 'verify', ORG, '--attestation', keyed.attestation_id],
      new Date(),
      full,
    );
    expect((await get('keyed')).signature).toEqual({
      verified: true,
      kind: 'dsse',
      identity: KEY_ID,
      issuer: null,
      reason: null,
    });
  });

  it('says so for an attestation without signed evidence, and stores nothing for it', async () => {
    const report = await get('report');
    const lines = await runAdmin(t.db.db, [
      'signatures',
      'verify',
      ORG,
      '--attestation',
      report.attestation_id,
    ]);
    expect(lines).toEqual([
      `${report.attestation_id}: no signed evidence (the file is not a bundle or envelope)`,
      '0 verified, 0 not verified',
    ]);
    expect(await get('report')).not.toHaveProperty('signature');
    await expect(runAdmin(t.db.db, ['signatures', 'verify', 'nobody'])).rejects.toThrow(
      "organization 'nobody' does not exist",
    );
  });
});
