/**
 * The provenance port over the evidence: `find` batches fingerprints across flows with their
 * stored compliance and effective attestations; `recordRuntimeEvents` writes starts and stops into
 * the latest trail of each flow, which the artifact record, the trail and search then show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import type {
  AssertFlow,
  HistoryEntry,
  PolicyDecision,
  RuleEvaluation,
  RuleResolution,
  SearchArtifact,
  TrailEvent,
} from '../suite/wire.js';

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
    expect(artifact.history.map((h: HistoryEntry) => h.event)).toEqual(
      expect.arrayContaining([
        'Started running in prod#3',
        'Started running in staging#7',
        'Exited from staging#8',
      ]),
    );
    const older = (await cli.get(`/api/v2/artifacts/acme/build/fingerprint/${FP}?trail=old`)).json;
    expect(older.running).toEqual([]);
    const trail = (await cli.get('/api/v2/trails/acme/build/new')).json;
    const started = trail.events.filter((e: TrailEvent) => e.type === 'artifact_started_running');
    expect(started).toEqual([
      expect.objectContaining({
        environment_name: 'prod',
        snapshot_index: 3,
        replica_number: 2,
        artifact_fingerprint: FP,
      }),
      expect.objectContaining({ environment_name: 'staging', snapshot_index: 7 }),
    ]);
    expect(
      (await cli.get('/api/v2/trails/acme/release/r1')).json.events.map((e: TrailEvent) => e.type),
    ).toContain('artifact_stopped_running');
    const found = (await cli.get(`/api/v2/search/acme/sha/${FP}`)).json;
    const inBuild = found.artifacts.find((a: SearchArtifact) => a.flow === 'build' && a.trail === 'new');
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
    expect(all.flows.map((f: AssertFlow) => [f.flow, f.compliant]).sort()).toEqual([
      ['build', false],
      ['release', true],
    ]);
    const release = (await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?flow_name=release`)).json;
    expect(release.compliant).toBe(true);
    const none = await cli.get(`/api/v2/asserts/acme/fingerprint/${UNKNOWN}`);
    expect(none.status).toBe(404);
    expect((await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}?flow_name=ghost`)).status).toBe(404);
  });
});

describe('asserts in environment and policy scope, with real evidence', () => {
  const assert = (query: string, fp = FP) => cli.get(`/api/v2/asserts/acme/fingerprint/${fp}?${query}`);
  const key = () => t.seedKey('acme', 'admin');

  beforeAll(async () => {
    const k = await key();
    // build/new has 'scan' non-compliant; release/r1 has nothing failing.
    expect(
      (
        await putPolicy(
          t.app,
          k,
          'acme',
          'needs-scan',
          `${POLICY_SCHEMA}artifacts:\n  attestations:\n    - name: scan\n      type: generic\n`,
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await putPolicy(
          t.app,
          k,
          'acme',
          'needs-provenance',
          `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`,
        )
      ).status,
    ).toBe(201);
    for (const env of ['prod', 'bare']) {
      expect(
        (await cli.json('PUT', '/api/v2/environments/acme', { name: env, type: 'K8S', description: '' }))
          .status,
      ).toBe(201);
    }
    expect(
      (await cli.json('POST', '/api/v2/environments/acme/prod/policies', { policy_names: ['needs-scan'] }))
        .status,
    ).toBe(200);
  });

  it('evaluates the attached policies against the evidence of every flow', async () => {
    const r = await assert('environment_name=prod');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      fingerprint: FP,
      scope: 'environment',
      environment: 'prod',
      // The scan attested in build/new is non-compliant, and a rule holds if any flow satisfies it:
      // release/r1 has no scan at all.
      compliant: false,
      allow_listing: null,
    });
    expect(r.json.policy_evaluations).toHaveLength(1);
    const [decision] = r.json.policy_evaluations;
    expect(decision).toMatchObject({ policy_name: 'needs-scan', policy_version: 1, status: 'NON-COMPLIANT' });
    const rule = decision.rule_evaluations.find((e: RuleEvaluation) => e.rule.type === 'attestation');
    expect(rule).toMatchObject({ satisfied: false, ignored: false });
    expect(rule.resolutions.map((x: RuleResolution) => [x.type, x.context.flow_name]).sort()).toEqual([
      ['missing_attestation', 'release'],
      ['non_compliant_attestation', 'build'],
    ]);
    expect(r.json.flows.map((f: AssertFlow) => f.flow).sort()).toEqual(['build', 'release']);
    expect(typeof r.json.html_url).toBe('string');
  });

  it('turns compliant when the evidence does, on the next assert', async () => {
    await cli.multipart('POST', '/api/v2/attestations/acme/build/trail/new/generic', [
      {
        name: 'data_json',
        value: JSON.stringify({ attestation_name: 'scan', artifact_fingerprint: FP, is_compliant: true }),
      },
    ]);
    const r = await assert('environment_name=prod');
    expect(r.json.compliant).toBe(true);
    expect(r.json.policy_evaluations[0].status).toBe('COMPLIANT');
  });

  it('lets the allowlist of the environment win, and says so', async () => {
    expect((await assert('environment_name=prod', UNKNOWN)).json.compliant).toBe(false);
    const allowed = await cli.json('PUT', '/api/v2/allowlists/acme/prod', {
      artifact_fingerprint: UNKNOWN,
      artifact_name: 'third-party',
      description: 'vendor image',
    });
    expect(allowed.status).toBe(201);
    const r = await assert('environment_name=prod', UNKNOWN);
    expect(r.json.compliant).toBe(true);
    expect(r.json.allow_listing).toMatchObject({
      description: 'vendor image',
      timestamp: expect.any(Number),
    });
    expect(r.json.flows).toEqual([]);
  });

  it('evaluates the named policies in policy scope', async () => {
    const unknown = await assert('policy_name=needs-provenance', UNKNOWN);
    expect(unknown.status).toBe(200);
    expect(unknown.json).toMatchObject({
      scope: 'policy',
      environment: null,
      compliant: false,
      allow_listing: null,
    });
    expect(unknown.json.policy_evaluations[0].rule_evaluations[0].resolutions[0].type).toBe('no_provenance');
    const both = await assert('policy_name=needs-provenance&policy_name=needs-scan');
    expect(both.json.compliant).toBe(true);
    expect(both.json.policy_evaluations.map((d: PolicyDecision) => d.policy_name)).toEqual([
      'needs-provenance',
      'needs-scan',
    ]);
    // flow_name narrows the evidence to one flow: release has no scan.
    expect((await assert('policy_name=needs-scan&flow_name=release')).json.compliant).toBe(false);
  });

  it('answers 404, 400 and 403 clearly, and keeps organizations apart', async () => {
    const ghostEnv = await assert('environment_name=ghost');
    expect(ghostEnv.status).toBe(404);
    expect(ghostEnv.json.message).toBe("Environment named 'ghost' does not exist for organization 'acme'");
    const ghostPolicy = await assert('policy_name=needs-scan&policy_name=ghost');
    expect(ghostPolicy.status).toBe(404);
    expect(ghostPolicy.json.message).toBe("Policy 'ghost' does not exist in organization 'acme'");
    const bare = await assert('environment_name=bare');
    expect(bare.status).toBe(400);
    expect(bare.json.errors).toEqual({ 'query.environment_name': 'has no policies attached' });
    const both = await assert('environment_name=prod&policy_name=needs-scan');
    expect(both.status).toBe(400);
    const other = cliClient(t.app, await t.seedKey('globex', 'admin'));
    expect((await other.get(`/api/v2/asserts/acme/fingerprint/${FP}?environment_name=prod`)).status).toBe(
      403,
    );
    expect((await other.get(`/api/v2/asserts/globex/fingerprint/${FP}?policy_name=needs-scan`)).status).toBe(
      404,
    );
  });
});
