/**
 * SBOM indexing within its bounds, as a client sees it: one attestation indexes at most
 * `VERITY_SBOM_MAX_COMPONENTS` components over all its documents and at most
 * `VERITY_SBOM_MAX_VERSIONS` versions of one package, is stored (201) past them, and says in
 * `sbom_index` what was left out; nested components of any size are walked without failing it.
 * Large documents are generated here and sent gzipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { fp } from '../helpers/runtime.js';
import { tgz } from '../helpers/tar.js';

const ORG = 'acme';
const FLOW = 'shop';
const TRAIL = 'build';
const A = fp('a1');

const cyclonedx = (components: unknown[]) =>
  JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', version: 1, components });

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

async function attest(name: string, file: { filename: string; content: Buffer | string }) {
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({ attestation_name: name, is_compliant: true, artifact_fingerprint: A }),
    },
    { name: 'attachment_file', ...file },
  ]);
  expect(r.status, r.body).toBe(201);
  const got = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/${name}`);
  return got.json[0].sbom_index;
}

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  const sha = 'a'.repeat(40);
  const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint: A,
    filename: 'registry.example/shop:a',
    git_commit: sha,
    git_commit_info: { sha1: sha, message: 'm', author: 'Dev <d@example.com>', branch: 'main', timestamp: 1 },
    build_url: 'https://ci.example/1',
    commit_url: `https://git.example/${sha}`,
    trail_name: TRAIL,
  });
  expect(r.status, r.body).toBe(201);
});
afterAll(async () => t?.close());

describe('SBOM bounds per attestation', () => {
  it('indexes at most the bound over all documents of an archive, and says what it left out', async () => {
    // 20 documents of 50,000 distinct components each: 1,000,000 (28 MB) in a small upload.
    const name = (d: number, i: number) => `pkg:npm/${d.toString(36)}-${i.toString(36)}@1`;
    const docs: Array<[string, string]> = [];
    for (let d = 0; d < 20; d++) {
      docs.push([
        `sbom-${d}.cdx.json`,
        cyclonedx(Array.from({ length: 50_000 }, (_, i) => ({ purl: name(d, i) }))),
      ]);
    }
    const data = await tgz(docs);
    expect(data.length).toBeLessThan(8 * 1024 * 1024);
    const index = await attest('bom20', { filename: 'evidence.tgz', content: data });
    expect(index).toMatchObject({ indexed: true, components: 20_000, skipped: 30_000 });
    expect(index.reason).toMatch(/30000 past the bound of 20000 components per attestation/);
    expect(index.documents).toHaveLength(20);
    expect(index.documents[0]).toMatchObject({ components: 20_000, reason: null });
    for (const d of index.documents.slice(1)) {
      expect(d).toMatchObject({
        components: 0,
        reason: expect.stringMatching(/^not read: .*20000 components/),
      });
    }
    const exposed = await cli.get(`/api/v2/exposure/${ORG}?purl=${encodeURIComponent(name(0, 19_999))}`);
    expect(exposed.json.artifacts.map((a: any) => a.fingerprint)).toEqual([A]);
    const past = await cli.get(`/api/v2/exposure/${ORG}?purl=${encodeURIComponent(name(0, 20_000))}`);
    expect(past.json.artifacts).toEqual([]);
  });

  it('indexes at most the bound of versions of one package', async () => {
    const components = Array.from({ length: 150 }, (_, i) => ({ purl: `pkg:npm/many@${i}.0.0` }));
    components.push({ purl: 'pkg:npm/other@1.0.0' });
    const index = await attest('versions', { filename: 'bom.json', content: cyclonedx(components) });
    expect(index).toMatchObject({ indexed: true, components: 101, skipped: 50 });
    expect(index.reason).toMatch(/50 past the bound of 100 versions of one package per attestation/);
  });

  it('stores an SBOM with a nested components array of 200,000 and indexes what it holds', async () => {
    const nested = cyclonedx([
      { purl: 'pkg:npm/z@1', components: Array.from({ length: 200_000 }, () => ({})) },
    ]);
    const index = await attest('nested', { filename: 'bom.json', content: nested });
    expect(index).toMatchObject({ indexed: true, components: 1, skipped: 0, reason: null });
  });

  it('walks components nested 20,000 deep', async () => {
    const depth = 20_000;
    const deep =
      '{"bomFormat":"CycloneDX","specVersion":"1.5","components":[' +
      '{"name":"level","components":['.repeat(depth) +
      '{"purl":"pkg:npm/deep@1"}' +
      ']}'.repeat(depth) +
      ']}';
    const index = await attest('deep', { filename: 'bom.json', content: deep });
    expect(index).toMatchObject({ indexed: true, components: 1, reason: null });
  });
});
