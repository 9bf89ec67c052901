/**
 * The audit package of an environment at a snapshot (`GET /snapshots/{org}/{env}/{expression}/
 * audit_package`): what ran then, each running artifact's record, trail attestations and evidence
 * files, the policies applied with their decision, and a manifest `sha256sum -c` accepts.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import { untar } from '../helpers/tar.js';

const ORG = 'acme';
const FLOW = 'backend-ci';
const BACKEND = fp('a1');
const REDIS = fp('e5');
const SHA = '1'.repeat(40);
const TEMPLATE = `version: 1
trail:
  artifacts:
  - name: backend
    attestations:
    - name: unit-tests
      type: generic
`;
const POLICY = `${POLICY_SCHEMA}artifacts:
  provenance:
    required: true
`;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;

async function recordArtifact(fingerprint: string, trail: string, name: string) {
  const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint,
    filename: name,
    git_commit: SHA,
    build_url: `https://ci.example/runs/${trail}`,
    commit_url: `https://git.example/acme/backend/commit/${SHA}`,
    template_reference_name: 'backend',
    trail_name: trail,
  });
  expect(r.status, r.body).toBe(201);
}

async function beginTrail(name: string) {
  const r = await cli.multipart('PUT', `/api/v2/trails/${ORG}/${FLOW}`, [
    { name: 'data_json', value: JSON.stringify({ name, description: '' }) },
  ]);
  expect(r.status, r.body).toBe(201);
}

/** The package's members, after checking every line of its manifest against them. */
async function download(path: string) {
  // Every record in the transparency log first, so the package and later reads agree on log_index.
  await t.app.transparencyLog.sequence();
  const res = await t.app.inject({
    url: path,
    headers: { authorization: `Bearer ${await t.seedKey(ORG, 'reader')}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  const files = await untar(gunzipSync(res.rawPayload));
  const manifest = files.get('MANIFEST.sha256')!.toString().trim().split('\n');
  expect(manifest).toHaveLength(files.size - 1);
  for (const line of manifest) {
    const [sum, name] = line.split('  ');
    expect(createHash('sha256').update(files.get(name!)!).digest('hex'), name).toBe(sum);
  }
  return { files, disposition: res.headers['content-disposition'] };
}

beforeAll(async () => {
  t = await createTestApp();
  const key = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, key);
  reader = cliClient(t.app, await t.seedKey(ORG, 'reader'));
  const flow = await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ name: FLOW, description: '' }) },
    { name: 'template_file', filename: 'template.yml', content: TEMPLATE },
  ]);
  expect(flow.status, flow.body).toBe(201);
  await beginTrail('build-1');
  await recordArtifact(BACKEND, 'build-1', 'registry.example/acme/backend:1');
  const attested = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/build-1/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: 'unit-tests',
        artifact_fingerprint: BACKEND,
        is_compliant: true,
      }),
    },
    { name: 'attachment_file', filename: 'results.txt', content: 'all 12 tests passed\n' },
  ]);
  expect(attested.status, attested.body).toBe(201);
  for (const env of ['prod', 'big']) {
    expect((await cli.json('PUT', `/api/v2/environments/${ORG}`, { name: env, type: 'K8S' })).status).toBe(
      201,
    );
  }
  expect((await putPolicy(t.app, key, ORG, 'provenance', POLICY)).status).toBe(201);
  expect(
    (await cli.json('POST', `/api/v2/environments/${ORG}/prod/policies`, { policy_names: ['provenance'] }))
      .status,
  ).toBe(200);
  const reported = await cli.json('PUT', `/api/v2/environments/${ORG}/prod/report/K8S`, {
    artifacts: [
      ...deployment('backend', 'registry.example/acme/backend:1', BACKEND, 2),
      ...deployment('redis', 'docker.io/redis:7', REDIS, 1),
    ],
  });
  expect(reported.json).toBe('Snapshot #1 created');
  // snapshot 2, an hour later: redis stopped, backend alone
  t.clock.advance(3_600_000);
  expect(
    (
      await cli.json('PUT', `/api/v2/environments/${ORG}/prod/report/K8S`, {
        artifacts: deployment('backend', 'registry.example/acme/backend:1', BACKEND, 2),
      })
    ).json,
  ).toBe('Snapshot #2 created');
});
afterAll(async () => t?.close());

describe('the audit package of a snapshot', () => {
  it('holds the snapshot, the policies with their decision, and per running artifact its record and evidence', async () => {
    const { files, disposition } = await download(`/api/v2/snapshots/${ORG}/prod/1/audit_package`);
    expect(disposition).toBe('attachment; filename="prod-snapshot-1-audit-package.tar.gz"');
    const trailDir = `artifacts/002-registry.example_acme_backend_1/${FLOW}-build-1`;
    // The transparency log's proofs (log/...) are checked in transparency-log-verify.test.ts.
    expect([...files.keys()].filter((n) => !n.startsWith('log/')).sort()).toEqual(
      [
        'MANIFEST.sha256',
        'artifacts/002-registry.example_acme_backend_1/running.json',
        `${trailDir}/artifact.json`,
        `${trailDir}/attestations/001-unit-tests/attestation.json`,
        `${trailDir}/attestations/001-unit-tests/evidence/results.txt`,
        `${trailDir}/compliance.json`,
        'artifacts/001-docker.io_redis_7/running.json',
        'policies.json',
        'snapshot.json',
      ].sort(),
    );
    const snapshot = JSON.parse(files.get('snapshot.json')!.toString());
    expect(snapshot).toEqual((await reader.get(`/api/v2/snapshots/${ORG}/prod/1`)).json);
    expect(snapshot.compliance_state).toBe('NON-COMPLIANT');
    const policies = JSON.parse(files.get('policies.json')!.toString());
    expect(policies).toEqual([
      expect.objectContaining({
        name: 'provenance',
        version: 1,
        decision: 'fail',
        failing_artifacts: [REDIS],
      }),
    ]);
    // the policy's text as applied, as the snapshot shows it
    expect(policies[0].policy_dump).not.toBeNull();
    expect(policies[0].policy_dump).toEqual(snapshot.applied_policies[0].policy_dump);
    const redis = JSON.parse(files.get('artifacts/001-docker.io_redis_7/running.json')!.toString());
    expect(redis).toMatchObject({ fingerprint: REDIS, compliant: false, flows: [] });
    expect(redis.reasons_for_incompliance.length).toBeGreaterThan(0);
    expect(files.get(`${trailDir}/attestations/001-unit-tests/evidence/results.txt`)!.toString()).toBe(
      'all 12 tests passed\n',
    );
    expect(JSON.parse(files.get(`${trailDir}/artifact.json`)!.toString())).toMatchObject({
      fingerprint: BACKEND,
      trail_name: 'build-1',
    });
  });

  it('takes any snapshot expression: a later snapshot lists only what ran then', async () => {
    const latest = await download(`/api/v2/snapshots/${ORG}/prod/-1/audit_package`);
    expect(latest.disposition).toBe('attachment; filename="prod-snapshot-2-audit-package.tar.gz"');
    expect([...latest.files.keys()].some((k) => k.includes('redis'))).toBe(false);
    const policies = JSON.parse(latest.files.get('policies.json')!.toString());
    expect(policies).toEqual([
      expect.objectContaining({ name: 'provenance', decision: 'pass', failing_artifacts: [] }),
    ]);
    const taken = (await reader.get(`/api/v2/snapshots/${ORG}/prod/1`)).json.timestamp as number;
    // half an hour after snapshot 1 was taken, before snapshot 2
    const at = new Date((taken + 1800) * 1000).toISOString().slice(0, 19);
    const first = await download(
      `/api/v2/snapshots/${ORG}/prod/${encodeURIComponent(`@{${at}}`)}/audit_package`,
    );
    expect(JSON.parse(first.files.get('snapshot.json')!.toString()).index).toBe(1);
  });

  it('says clearly what is wrong: unknown environment or snapshot, a bad expression, no key', async () => {
    const ghost = await reader.get(`/api/v2/snapshots/${ORG}/ghost/1/audit_package`);
    expect(ghost.status).toBe(404);
    expect(ghost.json.message).toBe(`Environment named 'ghost' does not exist for organization '${ORG}'`);
    const far = await reader.get(`/api/v2/snapshots/${ORG}/prod/9/audit_package`);
    expect(far.status).toBe(404);
    expect(far.json.message).toContain("resolves to 'prod#9'");
    const bad = await reader.get(`/api/v2/snapshots/${ORG}/prod/yesterday/audit_package`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("'yesterday' is not a snapshot expression");
    const none = await t.app.inject({ url: `/api/v2/snapshots/${ORG}/prod/1/audit_package` });
    expect(none.statusCode).toBe(401);
    const empty = await reader.get(`/api/v2/snapshots/${ORG}/big/1/audit_package`);
    expect(empty.status).toBe(404);
  });

  it('refuses, with the reason, a snapshot running more artifact records than one package holds', async () => {
    await beginTrail('build-many');
    const pods = [];
    for (let i = 0; i < 201; i++) {
      const fingerprint = createHash('sha256').update(`many-${i}`).digest('hex');
      await recordArtifact(fingerprint, 'build-many', `registry.example/acme/many:${i}`);
      pods.push(...deployment(`many${i}`, `registry.example/acme/many:${i}`, fingerprint, 1));
    }
    const reported = await cli.json('PUT', `/api/v2/environments/${ORG}/big/report/K8S`, { artifacts: pods });
    expect(reported.json).toBe('Snapshot #1 created');
    const refused = await reader.get(`/api/v2/snapshots/${ORG}/big/1/audit_package`);
    expect(refused.status).toBe(400);
    expect(refused.json.message).toBe(
      "Snapshot 1 of 'big' runs 201 artifact records; one package holds at most 200: download the audit package of each artifact instead",
    );
  });
});
