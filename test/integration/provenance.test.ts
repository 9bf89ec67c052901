/**
 * The provenance port over the evidence: `find` batches fingerprints across flows with their
 * stored compliance and effective attestations; `recordRuntimeEvents` writes starts and stops into
 * the latest trail of each flow, which the artifact record, the trail and search then show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let orgId: string;
const FP = '1f'.repeat(32);
const UNKNOWN = '2e'.repeat(32);

const report = (flow: string, trail: string, name = 'api') =>
  cli.json('POST', `/api/v2/artifacts/acme/${flow}`, {
    fingerprint: FP,
    filename: `registry/${name}:1`,
    git_commit: 'a'.repeat(40),
    build_url: `https://ci/${flow}`,
    commit_url: 'https://git/c',
    template_reference_name: name,
    trail_name: trail,
  });

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  orgId = (await orgsRepository.findByName(t.db.db, 'acme'))!.id;
  await cli.json('PUT', '/api/v2/flows/acme', { name: 'build', description: '' });
  await cli.json('PUT', '/api/v2/flows/acme', { name: 'release', description: '' });
  await cli.json('PATCH', '/api/v2/tags/acme/flow/release', { set_tags: { stage: 'prod' }, remove_tags: [] });
  expect((await report('build', 'old')).status).toBe(201);
  t.clock.advance(1000);
  expect((await report('build', 'new')).status).toBe(201);
  expect((await report('release', 'r1')).status).toBe(201);
  await cli.multipart('POST', '/api/v2/attestations/acme/build/trail/new/generic', [
    {
      name: 'data_json',
      value: JSON.stringify({ attestation_name: 'scan', artifact_fingerprint: FP, is_compliant: false }),
    },
  ]);
  await cli.multipart('POST', '/api/v2/attestations/acme/build/trail/new/generic', [
    { name: 'data_json', value: JSON.stringify({ attestation_name: 'lint', is_compliant: true }) },
  ]);
});
afterAll(async () => t?.close());

describe('provenance port', () => {
  it('finds one record per flow, from its latest trail, with compliance and effective attestations', async () => {
    const found = await t.app.provenance.find(t.db.db, orgId, [FP, UNKNOWN, FP]);
    expect(found.has(UNKNOWN)).toBe(false);
    const records = found.get(FP)!;
    expect(records.map((r) => [r.flowName, r.trailName]).sort()).toEqual([
      ['build', 'new'],
      ['release', 'r1'],
    ]);
    const build = records.find((r) => r.flowName === 'build')!;
    expect(build).toMatchObject({
      fingerprint: FP,
      artifactName: 'registry/api:1',
      templateReferenceName: 'api',
      gitCommit: 'a'.repeat(40),
      buildUrl: 'https://ci/build',
      artifactCompliance: 'NON-COMPLIANT',
      trailCompliance: 'NON-COMPLIANT',
    });
    expect(build.htmlUrl).toMatch(/^http:\/\/verity\.test\/acme\/flows\/build\/artifacts\//);
    expect(build.attestations.map((a) => [a.name, a.scope, a.isCompliant]).sort()).toEqual([
      ['lint', 'trail', true],
      ['scan', 'artifact', false],
    ]);
    const release = records.find((r) => r.flowName === 'release')!;
    expect(release.flowTags).toEqual({ stage: 'prod' });
    expect(release.artifactCompliance).toBe('COMPLIANT');
  });

  it('answers thousands of fingerprints in one call', async () => {
    const many = Array.from({ length: 6000 }, (_, i) => i.toString(16).padStart(64, '0'));
    const found = await t.app.provenance.find(t.db.db, orgId, [...many, FP]);
    expect([...found.keys()]).toEqual([FP]);
  });

  it('writes runtime events into the latest trail of each flow; the artifact shows running, exited and history', async () => {
    const at = t.clock.now();
    await t.app.provenance.recordRuntimeEvents(t.db.db, orgId, [
      {
        fingerprint: FP,
        type: 'artifact_started_running',
        environmentName: 'prod',
        snapshotIndex: 3,
        instanceCount: 2,
        at,
      },
      {
        fingerprint: FP,
        type: 'artifact_started_running',
        environmentName: 'staging',
        snapshotIndex: 7,
        instanceCount: 1,
        at,
      },
      {
        fingerprint: UNKNOWN,
        type: 'artifact_started_running',
        environmentName: 'prod',
        snapshotIndex: 3,
        instanceCount: 1,
        at,
      },
    ]);
    t.clock.advance(1000);
    await t.app.provenance.recordRuntimeEvents(t.db.db, orgId, [
      {
        fingerprint: FP,
        type: 'artifact_stopped_running',
        environmentName: 'staging',
        snapshotIndex: 8,
        instanceCount: 0,
        at: t.clock.now(),
      },
    ]);
    const artifact = (await cli.get(`/api/v2/artifacts/acme/build/fingerprint/${FP}`)).json;
    expect(artifact.trail_name).toBe('new');
    expect(artifact.running).toEqual([{ environment_name: 'prod', snapshot_index: 3 }]);
    expect(artifact.exited).toEqual([{ environment_name: 'staging', snapshot_index: 8 }]);
    expect(artifact.history.map((h: any) => h.event)).toEqual(
      expect.arrayContaining([
        'Started running in prod#3',
        'Started running in staging#7',
        'Exited from staging#8',
      ]),
    );
    const older = (await cli.get(`/api/v2/artifacts/acme/build/fingerprint/${FP}?trail=old`)).json;
    expect(older.running).toEqual([]);
    const trail = (await cli.get('/api/v2/trails/acme/build/new')).json;
    const started = trail.events.filter((e: any) => e.type === 'artifact_started_running');
    expect(started).toEqual([
      expect.objectContaining({
        environment_name: 'prod',
        snapshot_index: 3,
        replica_number: 2,
        artifact_fingerprint: FP,
      }),
      expect.objectContaining({ environment_name: 'staging', snapshot_index: 7 }),
    ]);
    expect((await cli.get('/api/v2/trails/acme/release/r1')).json.events.map((e: any) => e.type)).toContain(
      'artifact_stopped_running',
    );
    const found = (await cli.get(`/api/v2/search/acme/sha/${FP}`)).json;
    const inBuild = found.artifacts.find((a: any) => a.flow === 'build' && a.trail === 'new');
    expect(inBuild.running_in).toEqual(['prod']);
    expect(inBuild.exited_from).toEqual(['staging']);
  });

  it('answers endpoint 1 to HTTP Basic with the key as username or password, and other routes only to Bearer', async () => {
    const key = await t.seedKey('acme', 'reader');
    const basic = (user: string, pass: string) =>
      `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    for (const authorization of [basic(key, ''), basic('anything', key)]) {
      const r = await t.app.inject({
        url: `/api/v2/artifacts/acme/build/fingerprint/${FP}`,
        headers: { authorization },
      });
      expect(r.statusCode).toBe(200);
    }
    const other = await t.app.inject({
      url: '/api/v2/trails/acme/build/new',
      headers: { authorization: basic(key, '') },
    });
    expect(other.statusCode).toBe(401);
  });

  it('asserts across every flow holding the fingerprint, or the one named', async () => {
    const all = (await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}`)).json;
    expect(all.compliant).toBe(false);
    expect(all.flows.map((f: any) => [f.flow, f.compliant]).sort()).toEqual([
      ['build', false],
      ['release', true],
    ]);
    const release = (await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?flow_name=release`)).json;
    expect(release.compliant).toBe(true);
    const env = await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?environment_name=prod`);
    expect(env.status).toBe(400);
    expect(env.json.errors).toEqual({ 'query.environment_name': 'not yet supported' });
    const policy = await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?policy_name=a&policy_name=b`);
    expect(policy.status).toBe(400);
    expect(policy.json.message).toMatch(/policy scope/);
    const none = await cli.get(`/api/v2/asserts/acme/fingerprint/${UNKNOWN}`);
    expect(none.status).toBe(404);
    expect((await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?flow_name=ghost`)).status).toBe(404);
  });
});
