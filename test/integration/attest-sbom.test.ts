/**
 * `kosli attest sbom` (reference/peers-2026-11b.md 1.3): the `sbom` system type at
 * POST /attestations/{org}/{flow}/trail/{trail}/system, multipart with the CLI's summary in
 * data_json and the raw SBOM as attachment_file. The summary is stored as sent, the file is kept
 * (its SHA-256 must be the summary's original_fingerprint), and the SBOM's components feed the
 * exposure index like any other SBOM.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const ORG = 'acme';
const FLOW = 'shop';
const TRAIL = 'build-7';
const FP = 'd'.repeat(64);

const SBOM = JSON.stringify({
  bomFormat: 'CycloneDX',
  specVersion: '1.6',
  version: 1,
  metadata: {
    timestamp: '2026-09-01T10:00:00Z',
    tools: { components: [{ name: 'syft', version: '1.50.0' }] },
    component: { name: 'shop', version: '1.2.3' },
  },
  components: [
    { name: 'lodash', version: '4.17.20', purl: 'pkg:npm/lodash@4.17.20' },
    { name: 'openssl', version: '3.0.7', purl: 'pkg:deb/debian/openssl@3.0.7' },
  ],
});
const SHA = createHash('sha256').update(SBOM).digest('hex');

const summary = (overrides: Record<string, unknown> = {}) => ({
  format: 'cyclonedx-1.6',
  original_fingerprint: SHA,
  document: {
    created_at: '2026-09-01T10:00:00Z',
    tools: ['syft-1.50.0'],
    subject: { name: 'shop', version: '1.2.3', purl: null, sha256: null },
    package_count: 2,
  },
  ...overrides,
});

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

/** The request `kosli attest sbom` sends. */
const attestSbom = (
  data: Record<string, unknown>,
  file: { filename: string; content: string } | null = { filename: 'sbom.cdx.json', content: SBOM },
) =>
  cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/system`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: 'sbom',
        artifact_fingerprint: FP,
        annotations: { sbom_format: 'cyclonedx-1.6', sbom_sha256: SHA },
        user_data: {},
        description: '',
        type_name: 'sbom',
        attestation_data: summary(),
        ...data,
      }),
    },
    ...(file ? [{ name: 'attachment_file', ...file }] : []),
  ]);

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: FLOW, description: '' })).status).toBe(201);
  expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${FLOW}`, { name: TRAIL })).status).toBe(201);
  const art = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint: FP,
    filename: 'registry.example/shop:1.2.3',
    build_url: 'https://ci.example/7',
    commit_url: 'https://git.example/c/7',
    trail_name: TRAIL,
  });
  expect(art.status, art.body).toBe(201);
});
afterAll(async () => t?.close());

describe('kosli attest sbom', () => {
  it('201: the summary is stored as sent and the raw SBOM kept', async () => {
    const r = await attestSbom({});
    expect(r.status, r.body).toBe(201);
    const [a] = (await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/sbom`)).json;
    expect(a).toMatchObject({
      attestation_type: 'sbom',
      is_compliant: true,
      type_name: 'sbom',
      attestation_data: summary(),
      artifact_fingerprint: FP,
      annotations: { sbom_format: 'cyclonedx-1.6', sbom_sha256: SHA },
    });
    expect(a.evidence_file).toMatchObject({ sha256: SHA });
    expect(a.sbom_index).toMatchObject({ indexed: true, components: 2 });
    const file = await cli.get(
      `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/attestation/${a.attestation_id}/evidence`,
    );
    expect(file.status).toBe(200);
    expect(file.body).toBe(SBOM);
  });

  it("the SBOM's components feed the exposure index", async () => {
    const r = await cli.get(`/api/v2/exposure/${ORG}?purl=${encodeURIComponent('pkg:deb/debian/openssl')}`);
    expect(r.status, r.body).toBe(200);
    expect(r.json.artifacts).toEqual([
      expect.objectContaining({
        fingerprint: FP,
        trail: TRAIL,
        components: [
          expect.objectContaining({ purl: 'pkg:deb/debian/openssl@3.0.7', attestation_name: 'sbom' }),
        ],
      }),
    ]);
  });

  it('400: a file whose SHA-256 is not the original_fingerprint, or no file', async () => {
    const other = await attestSbom({}, { filename: 'sbom.cdx.json', content: `${SBOM}\n` });
    expect(other.status).toBe(400);
    expect(other.json.message).toMatch(
      /^The attached SBOM's SHA-256 is [0-9a-f]{64}, not the original_fingerprint/,
    );
    const none = await attestSbom({}, null);
    expect(none.status).toBe(400);
    expect(none.json.message).toBe('An sbom attestation needs the SBOM file as its attachment_file');
  });

  it('400: annotations that contradict the summary', async () => {
    const r = await attestSbom({ annotations: { sbom_format: 'spdx-2.3' } });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(
      "Annotation 'sbom_format' is 'spdx-2.3', but the SBOM summary says 'cyclonedx-1.6'",
    );
  });

  it.each([
    ['an unknown format', { format: 'spdx-3.0' }, 'data_json.attestation_data.format'],
    [
      'a created_at that is not RFC 3339',
      { document: { ...summary().document, created_at: '01/09/2026' } },
      'data_json.attestation_data.document.created_at',
    ],
    [
      'a subject sha256 that is not 64 hex',
      {
        document: { ...summary().document, subject: { name: 's', version: null, purl: null, sha256: 'abc' } },
      },
      'data_json.attestation_data.document.subject.sha256',
    ],
    ['an unknown summary field', { extra: 1 }, 'data_json.attestation_data.extra'],
  ])('400: %s', async (_what, override, field) => {
    const r = await attestSbom({ attestation_data: summary(override) });
    expect(r.status, r.body).toBe(400);
    expect(Object.keys(r.json.errors)).toContain(field);
  });

  it('400: an unknown system type names the known ones', async () => {
    const r = await attestSbom({ type_name: 'sarif' });
    expect(r.status).toBe(400);
    expect(Object.values(r.json.errors)).toContain(
      "System attestation type 'sarif' does not exist; use one of decision, sbom",
    );
  });
});
