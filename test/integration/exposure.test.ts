/**
 * Exposure as a client sees it: SBOMs (CycloneDX and SPDX, attached raw, inside the CLI's
 * `evidence.tgz`, or as a custom attestation's data) indexed by package URL, and
 * `GET /exposure/{org}` answering which artifacts held a package and where and when they ran,
 * agreeing with the artifact record and search.
 */
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import type { ExposureArtifact, ExposureComponent, ExposureEnvironment } from '../suite/wire.js';

const ORG = 'acme';
const OTHER = 'globex';
const FLOW = 'shop';
const A = fp('a1');
const B = fp('b2');
const C = fp('c3');
const STRANGER = fp('e5');
const commit = (c: string) => c.repeat(40).slice(0, 40);
const HOUR = 3_600_000;

const cyclonedx = (components: unknown[], specVersion = '1.5') =>
  JSON.stringify({ bomFormat: 'CycloneDX', specVersion, version: 1, components });
const spdx = (purls: string[]) => ({
  spdxVersion: 'SPDX-2.3',
  SPDXID: 'SPDXRef-DOCUMENT',
  name: 'shop',
  packages: purls.map((p, i) => ({
    SPDXID: `SPDXRef-${i}`,
    name: `p${i}`,
    externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: p }],
  })),
});

/** A gzipped tar as the CLI builds `evidence.tgz` from several attachments. */
async function tgz(files: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) {
    pack.entry({ name }, content);
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  const gz = pack.pipe(createGzip());
  for await (const c of gz) {
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;
let other: ReturnType<typeof cliClient>;
let t0: number;

async function recordArtifact(
  c: ReturnType<typeof cliClient>,
  org: string,
  fingerprint: string,
  trail: string,
) {
  const sha = commit(fingerprint[0]!);
  const r = await c.json('POST', `/api/v2/artifacts/${org}/${FLOW}`, {
    fingerprint,
    filename: `registry.example/shop:${fingerprint.slice(0, 4)}`,
    git_commit: sha,
    git_commit_info: { sha1: sha, message: 'm', author: 'Dev <d@example.com>', branch: 'main', timestamp: 1 },
    build_url: 'https://ci.example/1',
    commit_url: `https://git.example/${sha}`,
    trail_name: trail,
  });
  expect(r.status, r.body).toBe(201);
}

async function attest(
  c: ReturnType<typeof cliClient>,
  org: string,
  trail: string,
  name: string,
  file: { filename: string; content: Buffer | string },
  fingerprint?: string,
) {
  const r = await c.multipart('POST', `/api/v2/attestations/${org}/${FLOW}/trail/${trail}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: name,
        is_compliant: true,
        user_data: {},
        ...(fingerprint ? { artifact_fingerprint: fingerprint } : {}),
      }),
    },
    { name: 'attachment_file', ...file },
  ]);
  expect(r.status, r.body).toBe(201);
}

const attestation = async (trail: string, name: string) =>
  (await reader.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${trail}/${name}`)).json[0];
const exposure = async (query: string, c = reader, org = ORG) => c.get(`/api/v2/exposure/${org}?${query}`);
const report = (env: string, artifacts: unknown[]) =>
  cli.json('PUT', `/api/v2/environments/${ORG}/${env}/report/K8S`, { artifacts });
const at = (hours: number) => (t0 + hours * HOUR) / 1000;

beforeAll(async () => {
  t = await createTestApp();
  t0 = t.clock.now().getTime();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  reader = cliClient(t.app, await t.seedKey(ORG, 'reader'));
  other = cliClient(t.app, await t.seedKey(OTHER, 'admin'));

  // A: CycloneDX attached raw to the artifact (nested components, a qualifier, a bad purl).
  await recordArtifact(cli, ORG, A, 'build-a');
  await attest(
    cli,
    ORG,
    'build-a',
    'sbom',
    {
      filename: 'bom.txt',
      content: cyclonedx([
        { name: 'lodash', purl: 'pkg:npm/lodash@4.17.20' },
        { name: 'app', components: [{ name: 'core', purl: 'pkg:npm/%40angular/core@17.0.0?arch=x64' }] },
        { name: 'broken', purl: 'not-a-purl' },
      ]),
    },
    A,
  );
  // B: SPDX as a trail-level custom attestation's data: bound to the trail's artifacts.
  await recordArtifact(cli, ORG, B, 'build-b');
  expect(
    (
      await cli.multipart('POST', `/api/v2/custom-attestation-types/${ORG}`, [
        { name: 'data_json', value: JSON.stringify({ name: 'sbom', description: 'SBOM' }) },
      ])
    ).status,
  ).toBe(201);
  const custom = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/build-b/custom`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: 'sbom',
        type_name: 'sbom',
        attestation_data: spdx(['pkg:npm/lodash@4.17.20', 'pkg:pypi/Django@4.2']),
      }),
    },
  ]);
  expect(custom.status, custom.body).toBe(201);
  // C: CycloneDX 1.6 inside the CLI's evidence.tgz, next to a file that is no SBOM.
  await recordArtifact(cli, ORG, C, 'build-c');
  await attest(
    cli,
    ORG,
    'build-c',
    'sbom',
    {
      filename: 'evidence.tgz',
      content: await tgz({
        'reports/junit.xml': '<testsuite name="x"/>',
        'reports/sbom.cdx.json': cyclonedx([{ name: 'lodash', purl: 'pkg:npm/lodash@4.17.21' }], '1.6'),
      }),
    },
    C,
  );
  // Another organization holds the same package and the same fingerprint.
  await recordArtifact(other, OTHER, A, 'build-x');
  await attest(
    other,
    OTHER,
    'build-x',
    'sbom',
    { filename: 'bom.json', content: cyclonedx([{ name: 'lodash', purl: 'pkg:npm/lodash@4.17.20' }]) },
    A,
  );

  // prod requires provenance: a stranger running there makes it non-compliant for an hour.
  expect(
    (
      await putPolicy(
        t.app,
        await t.seedKey(ORG, 'admin'),
        ORG,
        'prov',
        `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`,
      )
    ).status,
  ).toBe(201);
  for (const env of ['prod', 'staging']) {
    expect(
      (await cli.json('PUT', `/api/v2/environments/${ORG}`, { name: env, type: 'K8S', description: '' }))
        .status,
    ).toBe(201);
  }
  expect(
    (await cli.json('POST', `/api/v2/environments/${ORG}/prod/policies`, { policy_names: ['prov'] })).status,
  ).toBe(200);
  const prodA = deployment('shop', 'registry.example/shop:a', A, 1);
  expect((await report('prod', prodA)).json).toBe('Snapshot #1 created'); // t0
  t.clock.advance(HOUR / 2);
  expect((await report('staging', [...prodA, ...deployment('web', 'registry.example/web', B, 1)])).json).toBe(
    'Snapshot #1 created',
  );
  t.clock.advance(HOUR / 2);
  expect((await report('prod', [...prodA, ...deployment('x', 'registry.example/x', STRANGER, 1)])).json).toBe(
    'Snapshot #2 created',
  ); // t0 + 1h
  t.clock.advance(HOUR);
  expect((await report('prod', prodA)).json).toBe('Snapshot #3 created'); // t0 + 2h
  t.clock.advance(HOUR);
  expect((await report('prod', [])).json).toBe('Snapshot #4 created'); // t0 + 3h
});
afterAll(async () => t?.close());

describe('SBOM indexing', () => {
  it('records on the attestation what was indexed from each carrier and format', async () => {
    expect((await attestation('build-a', 'sbom')).sbom_index).toEqual({
      indexed: true,
      components: 2,
      skipped: 0,
      reason: null,
      documents: [
        {
          source: 'bom.txt',
          format: 'CycloneDX',
          spec_version: '1.5',
          components: 2,
          skipped: 1,
          reason: null,
        },
      ],
    });
    expect((await attestation('build-b', 'sbom')).sbom_index).toMatchObject({
      indexed: true,
      components: 2,
      documents: [{ source: 'attestation_data', format: 'SPDX', spec_version: 'SPDX-2.3', components: 2 }],
    });
    expect((await attestation('build-c', 'sbom')).sbom_index).toMatchObject({
      indexed: true,
      components: 1,
      documents: [{ source: 'evidence.tgz:reports/sbom.cdx.json', format: 'CycloneDX', spec_version: '1.6' }],
    });
  });

  it('stores a malformed SBOM as evidence and says why it was not indexed', async () => {
    await attest(
      cli,
      ORG,
      'build-a',
      'bad-shape',
      {
        filename: 'bom.json',
        content: JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', components: { lodash: 1 } }),
      },
      A,
    );
    await attest(
      cli,
      ORG,
      'build-a',
      'truncated',
      { filename: 'bom.json', content: '{"bomFormat": "CycloneDX", "compo' },
      A,
    );
    await attest(cli, ORG, 'build-a', 'old', { filename: 'bom.json', content: cyclonedx([], '1.2') }, A);
    const shape = await attestation('build-a', 'bad-shape');
    expect(shape.evidence_file).toMatchObject({ filename: 'bom.json' });
    expect(shape.sbom_index).toMatchObject({
      indexed: false,
      components: 0,
      reason: 'CycloneDX "components" is not an array',
    });
    const truncated = await attestation('build-a', 'truncated');
    expect(truncated.evidence_file).not.toBeNull();
    expect(truncated.sbom_index.indexed).toBe(false);
    expect(truncated.sbom_index.reason).toMatch(/^not valid JSON/);
    expect((await attestation('build-a', 'old')).sbom_index.reason).toMatch(
      /specVersion "1.2" is not supported/,
    );
  });

  it('binds a trail-level SBOM to artifacts reported to the trail later', async () => {
    const D = fp('d4');
    const begun = await cli.multipart('PUT', `/api/v2/trails/${ORG}/${FLOW}`, [
      { name: 'data_json', value: JSON.stringify({ name: 'build-d', description: '' }) },
    ]);
    expect(begun.status, begun.body).toBe(201);
    // Nothing in the trail changes state: without an SBOM this would be a batched report.
    const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/build-d/custom`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          attestation_name: 'sbom',
          type_name: 'sbom',
          attestation_data: spdx(['pkg:npm/express@4.18.2']),
        }),
      },
    ]);
    expect(r.status, r.body).toBe(201);
    expect((await attestation('build-d', 'sbom')).sbom_index).toMatchObject({ indexed: true, components: 1 });
    expect((await exposure('purl=pkg:npm/express')).json.artifacts).toEqual([]);
    await recordArtifact(cli, ORG, D, 'build-d');
    expect((await exposure('purl=pkg:npm/express')).json.artifacts).toEqual([
      expect.objectContaining({
        fingerprint: D,
        trail: 'build-d',
        components: [expect.objectContaining({ purl: 'pkg:npm/express@4.18.2', attestation_name: 'sbom' })],
        components_total: 1,
        components_truncated: false,
      }),
    ]);
  });

  it('leaves attestations without an SBOM as they were', async () => {
    await attest(cli, ORG, 'build-a', 'plain', { filename: 'notes.json', content: '{"ok": true}' }, A);
    expect((await attestation('build-a', 'plain')).sbom_index).toBeUndefined();
  });
});

describe('GET /exposure/{org}', () => {
  it('finds every artifact holding any version of a package, with where and when it ran', async () => {
    const res = await exposure('purl=pkg:npm/lodash');
    expect(res.status, res.body).toBe(200);
    expect(res.json.truncated).toBe(false);
    expect(res.json.artifacts.map((a: ExposureArtifact) => a.fingerprint).sort()).toEqual([A, B, C]);
    const a = res.json.artifacts.find((x: ExposureArtifact) => x.fingerprint === A);
    expect(a).toMatchObject({
      name: 'registry.example/shop:a1a1',
      flow: FLOW,
      trail: 'build-a',
      commit: commit('a'),
    });
    expect(a.components).toEqual([
      expect.objectContaining({
        purl: 'pkg:npm/lodash@4.17.20',
        type: 'npm',
        namespace: null,
        name: 'lodash',
        version: '4.17.20',
        attestation_name: 'sbom',
      }),
    ]);
    expect(a.environments).toEqual([
      {
        environment_name: 'prod',
        intervals: [
          { from: at(0), to: at(1), from_snapshot: 1, to_snapshot: 2, compliant: true },
          { from: at(1), to: at(2), from_snapshot: 2, to_snapshot: 3, compliant: false },
          { from: at(2), to: at(3), from_snapshot: 3, to_snapshot: 4, compliant: true },
        ],
      },
      {
        environment_name: 'staging',
        intervals: [{ from: at(0.5), to: null, from_snapshot: 1, to_snapshot: null, compliant: null }],
      },
    ]);
    const b = res.json.artifacts.find((x: ExposureArtifact) => x.fingerprint === B);
    expect(b.components.map((c: ExposureComponent) => c.attestation_name)).toEqual(['sbom']);
    expect(b.environments).toEqual([
      {
        environment_name: 'staging',
        intervals: [{ from: at(0.5), to: null, from_snapshot: 1, to_snapshot: null, compliant: null }],
      },
    ]);
    expect(res.json.artifacts.find((x: ExposureArtifact) => x.fingerprint === C).environments).toEqual([]);
  });

  it('matches a version exactly, and normalises the purl as indexing does', async () => {
    const exact = await exposure(`purl=${encodeURIComponent('pkg:npm/lodash@4.17.21')}`);
    expect(exact.json.artifacts.map((a: ExposureArtifact) => a.fingerprint)).toEqual([C]);
    const angular = await exposure(`purl=${encodeURIComponent('pkg:NPM/%40angular/core@17.0.0')}`);
    expect(angular.json.artifacts.map((a: ExposureArtifact) => a.fingerprint)).toEqual([A]);
    expect(angular.json.artifacts[0].components[0].purl).toBe('pkg:npm/%40angular/core@17.0.0?arch=x64');
    const django = await exposure(`purl=${encodeURIComponent('pkg:pypi/django')}`);
    expect(django.json.artifacts.map((a: ExposureArtifact) => a.fingerprint)).toEqual([B]);
  });

  it('clips the intervals to from and to', async () => {
    const res = await exposure(
      `purl=pkg:npm/lodash@4.17.20&from=${at(1.5)}&to=${new Date(t0 + 2.5 * HOUR).toISOString()}`,
    );
    expect(res.status, res.body).toBe(200);
    expect(res.json.query).toMatchObject({ from: at(1.5), to: at(2.5) });
    const a = res.json.artifacts.find((x: ExposureArtifact) => x.fingerprint === A);
    expect(a.environments).toEqual([
      {
        environment_name: 'prod',
        intervals: [
          { from: at(1.5), to: at(2), from_snapshot: 2, to_snapshot: 3, compliant: false },
          { from: at(2), to: at(2.5), from_snapshot: 3, to_snapshot: 3, compliant: true },
        ],
      },
      {
        environment_name: 'staging',
        intervals: [{ from: at(1.5), to: at(2.5), from_snapshot: 1, to_snapshot: 1, compliant: null }],
      },
    ]);
    const after = await exposure(`fingerprint=${A}&from=${at(3.5)}`);
    expect(after.json.artifacts[0].environments).toEqual([
      {
        environment_name: 'staging',
        intervals: [{ from: at(3.5), to: null, from_snapshot: 1, to_snapshot: null, compliant: null }],
      },
    ]);
  });

  it('agrees with the artifact record and search on where it runs and where it exited', async () => {
    const record = (await reader.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${A}`)).json;
    expect(record.running).toEqual([{ environment_name: 'staging', snapshot_index: 1 }]);
    expect(record.exited).toEqual([{ environment_name: 'prod', snapshot_index: 4 }]);
    const found = (await reader.get(`/api/v2/search/${ORG}/sha/${A}`)).json.artifacts[0];
    expect(found).toMatchObject({ running_in: ['staging'], exited_from: ['prod'] });
    const envs = (await exposure(`fingerprint=${A}`)).json.artifacts[0].environments;
    const last = (e: ExposureEnvironment) => e.intervals[e.intervals.length - 1]!;
    expect(
      envs
        .filter((e: ExposureEnvironment) => last(e).to === null)
        .map((e: ExposureEnvironment) => ({
          environment_name: e.environment_name,
          snapshot_index: e.intervals[0]!.from_snapshot,
        })),
    ).toEqual(record.running);
    expect(
      envs
        .filter((e: ExposureEnvironment) => last(e).to !== null)
        .map((e: ExposureEnvironment) => ({
          environment_name: e.environment_name,
          snapshot_index: last(e).to_snapshot,
        })),
    ).toEqual(record.exited);
  });

  it('finds artifacts by fingerprint or commit too', async () => {
    const byCommit = await exposure(`commit=${commit('b')}`);
    expect(byCommit.json.artifacts).toEqual([
      expect.objectContaining({
        fingerprint: B,
        trail: 'build-b',
        components: [],
        environments: [expect.objectContaining({ environment_name: 'staging' })],
      }),
    ]);
    expect((await exposure(`fingerprint=${C}`)).json.artifacts).toEqual([
      expect.objectContaining({ fingerprint: C, environments: [] }),
    ]);
  });

  it('answers 200 with no artifacts for an absent component, and 400 naming purl when malformed', async () => {
    const absent = await exposure('purl=pkg:npm/left-pad');
    expect(absent.status).toBe(200);
    expect(absent.json.artifacts).toEqual([]);
    const bad = await exposure('purl=npm/lodash');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.errors)).toEqual(['query.purl']);
    const none = await exposure('from=0');
    expect(none.status).toBe(400);
    const two = await exposure(`purl=pkg:npm/lodash&fingerprint=${A}`);
    expect(two.status).toBe(400);
    expect(two.json.errors).toHaveProperty('query.fingerprint');
  });

  it("never shows another organization's data", async () => {
    const mine = await exposure('purl=pkg:npm/lodash@4.17.20', other, OTHER);
    expect(mine.json.artifacts).toEqual([
      expect.objectContaining({ fingerprint: A, trail: 'build-x', environments: [] }),
    ]);
    const theirs = await exposure('purl=pkg:npm/lodash@4.17.20', other, ORG);
    expect(theirs.status).toBe(403);
    const acme = await exposure(`fingerprint=${A}`);
    expect(acme.json.artifacts.map((a: ExposureArtifact) => a.trail)).toEqual(['build-a']);
  });
});
