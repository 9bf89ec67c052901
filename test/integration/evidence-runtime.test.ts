/**
 * The evidence and the runtime together, with the real provenance port: artifacts reported by CI
 * and pods reported by the cluster meet in snapshots, artifact records, trails, environment events
 * and notifications. The workers run inside the app (woken by commits); the test only reads what a
 * client reads, polling where the work happens after the response.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import { until } from '../helpers/wait.js';
import type {
  EnvironmentEvent,
  HistoryEntry,
  PolicyDecision,
  RuleEvaluation,
  SnapshotArtifact,
  TrailEvent,
} from '../suite/wire.js';

const ORG = 'acme';
const FLOW = 'backend-ci';
const ENV = 'prod';
const V1 = fp('a1');
const V2 = fp('b2');
const V3 = fp('c3');
const FRONT = fp('d4');
const commit = (c: string) => c.repeat(40).slice(0, 40);
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
  trail-compliance:
    required: true
  attestations:
    - name: unit-tests
      type: generic
`;

interface Received {
  path: string;
  body: any;
}
const received: Received[] = [];
let http: Server;
let base: string;
let t: TestApp;
let key: string;
let cli: ReturnType<typeof cliClient>;

const report = (artifacts: unknown[]) =>
  cli.json('PUT', `/api/v2/environments/${ORG}/${ENV}/report/K8S`, { artifacts });
const snapshot = async (expr = '-1') => (await cli.get(`/api/v2/snapshots/${ORG}/${ENV}/${expr}`)).json;
const latestIndex = async () =>
  (await cli.get(`/api/v2/environments/${ORG}/${ENV}`)).json.latest_snapshot_index as number;
/** The latest snapshot once it has reached `index`. */
const snapshotAt = (index: number) =>
  until(async () => ((await latestIndex()) >= index ? snapshot() : undefined));
const artifact = async (fingerprint: string, flow = FLOW) =>
  (await cli.get(`/api/v2/artifacts/${ORG}/${flow}/fingerprint/${fingerprint}`)).json;
const trail = async (name: string, flow = FLOW) =>
  (await cli.get(`/api/v2/trails/${ORG}/${flow}/${name}`)).json;
const hooks = (path: string, type?: string) =>
  received.filter((r) => r.path === path && (type === undefined || r.body.event_type === type));

async function beginTrail(name: string, sha: string, flow = FLOW) {
  const r = await cli.multipart('PUT', `/api/v2/trails/${ORG}/${flow}`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        name,
        description: '',
        git_commit_info: {
          sha1: sha,
          message: 'Build it',
          author: 'Dev <dev@example.com>',
          branch: 'main',
          timestamp: 1_790_000_000,
          url: `https://git.example/acme/backend/commit/${sha}`,
        },
        origin_url: 'https://ci.example/runs/1',
      }),
    },
  ]);
  expect(r.status, r.body).toBe(201);
}

async function recordArtifact(fingerprint: string, trailName: string, sha: string, name = 'backend') {
  const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint,
    filename: `registry.example/acme/${name}:${sha.slice(0, 7)}`,
    git_commit: sha,
    git_commit_info: {
      sha1: sha,
      message: 'Build it',
      author: 'Dev <dev@example.com>',
      branch: 'main',
      timestamp: 1_790_000_000,
      url: `https://git.example/acme/backend/commit/${sha}`,
    },
    build_url: `https://ci.example/runs/${trailName}`,
    commit_url: `https://git.example/acme/backend/commit/${sha}`,
    template_reference_name: name,
    trail_name: trailName,
  });
  expect(r.status, r.body).toBe(201);
}

async function attestTests(trailName: string, fingerprint: string, isCompliant: boolean) {
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${trailName}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: 'unit-tests',
        artifact_fingerprint: fingerprint,
        is_compliant: isCompliant,
        user_data: {},
      }),
    },
  ]);
  expect(r.status, r.body).toBe(201);
}

beforeAll(async () => {
  http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  t = await createTestApp({
    env: {
      // Workers on, woken by each commit; their timers are too slow to matter.
      VERITY_NOTIFIER_ENABLED: 'true',
      VERITY_NOTIFIER_POLL_MS: '3600000',
      VERITY_REEVALUATION_INTERVAL_MS: '3600000',
      VERITY_OUTBOUND_ALLOW: '127.0.0.1',
    },
  });
  key = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, key);
  const flow = await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ name: FLOW, description: 'Backend pipeline' }) },
    { name: 'template_file', filename: 'template.yml', content: TEMPLATE },
  ]);
  expect(flow.status, flow.body).toBe(201);
  expect(
    (await cli.json('PUT', `/api/v2/environments/${ORG}`, { name: ENV, type: 'K8S', description: '' }))
      .status,
  ).toBe(201);
  expect(
    (
      await cli.json('PUT', `/api/v2/actions/${ORG}/environments`, {
        name: 'prod-alerts',
        environments: [ENV],
        triggers: ['ON_STARTED_ARTIFACT', 'ON_EXITED_ARTIFACT', 'ON_NON_COMPLIANT_ENV', 'ON_COMPLIANT_ENV'],
        targets: [{ type: 'WEBHOOK', webhook: `${base}/env`, payload_version: '1.0' }],
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await cli.json('PUT', `/api/v2/actions/${ORG}/flows`, {
        name: 'backend-releases',
        flows: [FLOW],
        triggers: ['ON_RELEASE', 'ON_ATTESTED_PROVENANCE'],
        targets: [{ type: 'WEBHOOK', webhook: `${base}/flow`, payload_version: '1.0' }],
      })
    ).status,
  ).toBe(201);
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => http?.close(r));
});

describe('a reported artifact that starts running', () => {
  it('shows its flow, trail, compliance and provenance in the snapshot as the reference does', async () => {
    await beginTrail('build-1', commit('1'));
    await recordArtifact(V1, 'build-1', commit('1'));
    await attestTests('build-1', V1, true);
    const record = await artifact(V1);
    expect(record).toMatchObject({ state: 'COMPLIANT', trail_name: 'build-1', running: [], exited: [] });
    expect((await putPolicy(t.app, key, ORG, 'build-process', POLICY)).status).toBe(201);
    expect(
      (
        await cli.json('POST', `/api/v2/environments/${ORG}/${ENV}/policies`, {
          policy_names: ['build-process'],
        })
      ).status,
    ).toBe(200);

    const res = await report(deployment('backend', 'registry.example/acme/backend:1111111', V1, 2));
    expect(res.json).toBe('Snapshot #1 created');
    const snap = await snapshot();
    expect(snap).toMatchObject({
      index: 1,
      is_latest: true,
      compliant: true,
      compliance_state: 'COMPLIANT',
      artifact_compliance_count: { true: 1, false: 0, null: 0 },
      summary: { started: 1, changed: 0, exited: 0 },
      applied_policies: [{ name: 'build-process', version: 1, failing_artifacts: [] }],
    });
    expect(snap.artifacts).toHaveLength(1);
    const a = snap.artifacts[0];
    expect(a).toMatchObject({
      name: 'registry.example/acme/backend:1111111',
      fingerprint: V1,
      compliant: true,
      deployments: [],
      reasons_for_incompliance: [],
      annotation: { type: 'started-compliant', was: 0, now: 2 },
      flow_name: FLOW,
      git_commit: commit('1'),
      commit_url: `https://git.example/acme/backend/commit/${commit('1')}`,
      html_url: record.html_url,
      flow_html_url: `http://verity.test/${ORG}/flows/${FLOW}`,
    });
    expect(a.html_url).toBe(
      `http://verity.test/${ORG}/flows/${FLOW}/artifacts/${V1}?artifact_id=${record.id}`,
    );
    expect(a.creationTimestamp).toHaveLength(2);
    expect(Object.keys(a.pods).sort()).toEqual(['backend-0', 'backend-1']);
    expect(a.flows).toEqual([
      expect.objectContaining({
        flow_name: FLOW,
        trail_name: 'build-1',
        template_reference_name: 'backend',
        git_commit: commit('1'),
        commit_url: `https://git.example/acme/backend/commit/${commit('1')}`,
        git_commit_info: expect.objectContaining({ sha1: commit('1'), branch: 'main' }),
        html_url: record.html_url,
        flow_html_url: `http://verity.test/${ORG}/flows/${FLOW}`,
        artifact_compliance_in_flow: true,
        flow_reasons_for_non_compliance: [],
      }),
    ]);
    expect(a.policy_decisions).toEqual([
      expect.objectContaining({ policy_name: 'build-process', policy_version: 1, status: 'COMPLIANT' }),
    ]);
    const context = { flow_name: FLOW, trail_name: 'build-1' };
    expect(
      a.policy_decisions[0].rule_evaluations.map((r: RuleEvaluation) => [
        r.rule.type,
        r.satisfied,
        r.resolutions,
      ]),
    ).toEqual([
      ['provenance', true, [{ type: 'rule_satisfied', context: { ...context, artifact_status: null } }]],
      [
        'trail-compliance',
        true,
        [{ type: 'rule_satisfied', context: { ...context, artifact_status: 'COMPLIANT' } }],
      ],
      ['attestation', true, [{ type: 'rule_satisfied', context: { ...context, artifact_status: null } }]],
    ]);
  });

  it('fires ON_RELEASE for the flow and ON_STARTED_ARTIFACT for the environment, with the provenance', async () => {
    const release = await until(() => hooks('/flow', 'ARTIFACT_RELEASED')[0]);
    const record = await artifact(V1);
    expect(release.body).toMatchObject({
      org: ORG,
      flow: FLOW,
      trail: 'build-1',
      environment: ENV,
      snapshot: { index: '1', status: 'compliant' },
      artifact: {
        fingerprint: V1,
        provenance: {
          flow: FLOW,
          trail: 'build-1',
          status: 'compliant',
          commit: commit('1'),
          html_url: record.html_url,
        },
      },
    });
    const started = await until(() => hooks('/env', 'ARTIFACT_STARTED')[0]);
    expect(started.body).toMatchObject({
      environment: ENV,
      description: '2 instances started running (from 0 to 2)',
      artifact: { fingerprint: V1, provenance: { flow: FLOW, trail: 'build-1' } },
    });
    // The flow action also heard the artifact being reported, with what CI sent.
    const reported = await until(() => hooks('/flow', 'ARTIFACT_REPORTED')[0]);
    expect(reported.body.artifact).toMatchObject({
      fingerprint: V1,
      provenance: {
        flow: FLOW,
        trail: 'build-1',
        commit: commit('1'),
        commit_url: `https://git.example/acme/backend/commit/${commit('1')}`,
        build_url: 'https://ci.example/runs/build-1',
        html_url: record.html_url,
      },
    });
  });
});

describe('start and stop written back to the evidence', () => {
  it('the artifact and its trail show running, then exited, with history', async () => {
    let record = await artifact(V1);
    expect(record.running).toEqual([{ environment_name: ENV, snapshot_index: 1 }]);
    expect(record.exited).toEqual([]);
    expect(record.history.map((h: HistoryEntry) => h.event)).toContain(`Started running in ${ENV}#1`);
    let events = (await trail('build-1')).events;
    expect(events.filter((e: TrailEvent) => e.type === 'artifact_started_running')).toEqual([
      expect.objectContaining({
        environment_name: ENV,
        snapshot_index: 1,
        replica_number: 2,
        artifact_fingerprint: V1,
      }),
    ]);

    // Scaling is no snapshot and no runtime event.
    expect(
      (await report(deployment('backend', 'registry.example/acme/backend:1111111', V1, 3))).json,
    ).toMatch(/no new snapshots/i);
    expect(await latestIndex()).toBe(1);

    // V2 replaces V1: one snapshot where V1 exits and V2 starts.
    await beginTrail('build-2', commit('2'));
    await recordArtifact(V2, 'build-2', commit('2'));
    await attestTests('build-2', V2, true);
    expect((await report(deployment('backend', 'registry.example/acme/backend:2222222', V2, 1))).json).toBe(
      'Snapshot #2 created',
    );
    const snap = await snapshot();
    expect(snap.summary).toEqual({ started: 1, changed: 0, exited: 1 });
    expect(
      snap.artifacts
        .map((x: SnapshotArtifact) => [x.fingerprint, x.annotation.type, x.flows[0]!.trail_name])
        .sort(),
    ).toEqual(
      [
        [V1, 'exited', 'build-1'],
        [V2, 'started-compliant', 'build-2'],
      ].sort(),
    );
    record = await artifact(V1);
    expect(record.running).toEqual([]);
    expect(record.exited).toEqual([{ environment_name: ENV, snapshot_index: 2 }]);
    expect(record.history.map((h: HistoryEntry) => h.event)).toEqual(
      expect.arrayContaining([`Started running in ${ENV}#1`, `Exited from ${ENV}#2`]),
    );
    events = (await trail('build-1')).events;
    expect(events.filter((e: TrailEvent) => e.type === 'artifact_stopped_running')).toEqual([
      expect.objectContaining({ environment_name: ENV, snapshot_index: 2, artifact_fingerprint: V1 }),
    ]);
    expect((await artifact(V2)).running).toEqual([{ environment_name: ENV, snapshot_index: 2 }]);

    const exitedHook = await until(() => hooks('/env', 'ARTIFACT_EXITED')[0]);
    expect(exitedHook.body).toMatchObject({ artifact: { fingerprint: V1 }, snapshot: { index: '2' } });

    // The environment's event log, as `kosli log environment` reads it.
    const log = (
      await cli.get(`/api/v2/environments/${ORG}/${ENV}/events?page=1&per_page=15&interval=&reverse=false`)
    ).json;
    expect(log.map((e: EnvironmentEvent) => [e.snapshot_index, e.sha256, e.type, e.pipeline])).toEqual([
      [2, V2, 'started-compliant', FLOW],
      [2, V1, 'exited', FLOW],
      [1, V1, 'started-compliant', FLOW],
    ]);
  });
});

describe('an artifact running before it is reported', () => {
  it('is non-compliant without provenance; the report updates the snapshot and the trail learns it runs', async () => {
    expect(
      (
        await report([
          ...deployment('backend', 'registry.example/acme/backend:2222222', V2, 1),
          ...deployment('worker', 'registry.example/acme/worker:3333333', V3, 1),
        ])
      ).json,
    ).toBe('Snapshot #3 created');
    let snap = await snapshot();
    const unknown = snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V3);
    expect(unknown).toMatchObject({
      compliant: false,
      flow_name: '',
      git_commit: '',
      flows: [],
      annotation: { type: 'started-non-compliant', was: 0, now: 1 },
    });
    expect(unknown.policy_decisions[0].rule_evaluations[0].resolutions).toEqual([
      { type: 'no_provenance', context: { flow_name: null, trail_name: null, artifact_status: null } },
    ]);
    expect(snap).toMatchObject({ compliant: false, compliance_state: 'NON-COMPLIANT' });
    expect((await cli.get(`/api/v2/environments/${ORG}/${ENV}`)).json.state).toBe(false);
    const nonCompliant = await until(() => hooks('/env', 'ENVIRONMENT_NON_COMPLIANT')[0]);
    expect(nonCompliant.body).toMatchObject({
      environment: ENV,
      snapshot: { index: '3', status: 'non-compliant' },
    });

    // CI reports it now: its provenance arrives (still missing its tests).
    await beginTrail('worker-1', commit('3'));
    await recordArtifact(V3, 'worker-1', commit('3'));
    snap = await snapshotAt(4);
    expect(snap).toMatchObject({
      index: 4,
      compliant: false,
      summary: { started: 0, changed: 1, exited: 0 },
    });
    const updated = snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V3);
    expect(updated).toMatchObject({
      compliant: false,
      flow_name: FLOW,
      git_commit: commit('3'),
      annotation: { type: 'updated-provenance', was: 1, now: 1 },
    });
    expect(updated.flows[0]).toMatchObject({
      trail_name: 'worker-1',
      artifact_compliance_in_flow: false,
      flow_reasons_for_non_compliance: ["attestation 'unit-tests' is missing"],
    });
    expect(updated.reasons_for_incompliance).toEqual([
      "policy 'build-process' v1: trail-compliance: non_compliant_in_trail in flow 'backend-ci'",
      "policy 'build-process' v1: attestation 'unit-tests' (generic): missing_attestation in flow 'backend-ci'",
    ]);
    // Its trail now knows where it runs (it started in #3, before the trail held it).
    const record = await artifact(V3);
    expect(record.running).toEqual([{ environment_name: ENV, snapshot_index: 3 }]);
    expect(
      (await trail('worker-1')).events.filter((e: TrailEvent) => e.type === 'artifact_started_running'),
    ).toEqual([
      expect.objectContaining({ environment_name: ENV, snapshot_index: 3, artifact_fingerprint: V3 }),
    ]);

    // Its tests pass: it becomes compliant, and with it the environment.
    await attestTests('worker-1', V3, true);
    snap = await snapshotAt(5);
    expect(snap).toMatchObject({
      index: 5,
      compliant: true,
      artifact_compliance_count: { true: 2, false: 0 },
    });
    expect(snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V3).annotation).toEqual({
      type: 'became-compliant',
      was: 1,
      now: 1,
    });
    // The first snapshot (unknown -> compliant) fired once; this transition fires again.
    const compliant = await until(() => hooks('/env', 'ENVIRONMENT_COMPLIANT')[1]);
    expect(compliant.body.snapshot).toMatchObject({ index: '5', status: 'compliant' });
    expect(hooks('/env', 'ENVIRONMENT_COMPLIANT').map((h) => h.body.snapshot.index)).toEqual(['1', '5']);
    // Nothing more to do: no further snapshot appears.
    await t.app.runtime.processMarks();
    expect(await latestIndex()).toBe(5);
  });
});

describe('evidence that changes the compliance of a running artifact', () => {
  it('a failing attestation makes the environment non-compliant and fires ON_NON_COMPLIANT_ENV', async () => {
    const before = hooks('/env', 'ENVIRONMENT_NON_COMPLIANT').length;
    await attestTests('build-2', V2, false);
    expect((await artifact(V2)).state).toBe('NON-COMPLIANT');
    const snap = await snapshotAt(6);
    expect(snap).toMatchObject({
      index: 6,
      compliant: false,
      summary: { started: 0, changed: 1, exited: 0 },
    });
    const a = snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V2);
    expect(a).toMatchObject({
      compliant: false,
      annotation: { type: 'became-non-compliant', was: 1, now: 1 },
    });
    expect(a.flows[0]).toMatchObject({
      trail_name: 'build-2',
      artifact_compliance_in_flow: false,
      flow_reasons_for_non_compliance: ["attestation 'unit-tests' is non-compliant"],
    });
    const rules = a.policy_decisions[0].rule_evaluations;
    expect(rules.map((r: RuleEvaluation) => [r.rule.type, r.satisfied, r.resolutions[0]!.type])).toEqual([
      ['provenance', true, 'rule_satisfied'],
      ['trail-compliance', false, 'non_compliant_in_trail'],
      ['attestation', false, 'non_compliant_attestation'],
    ]);
    expect(snap.applied_policies[0].failing_artifacts).toEqual([V2]);
    // The earlier snapshot keeps the verdict it recorded.
    expect(
      (await snapshot('5')).artifacts.find((x: SnapshotArtifact) => x.fingerprint === V2).compliant,
    ).toBe(true);
    const hook = await until(() => hooks('/env', 'ENVIRONMENT_NON_COMPLIANT')[before]);
    expect(hook.body).toMatchObject({
      environment: ENV,
      description: `Environment ${ENV} became non-compliant in snapshot #6`,
      snapshot: { index: '6', status: 'non-compliant' },
    });
    const log = (await cli.get(`/api/v2/environments/${ORG}/${ENV}/events?page=1&per_page=1`)).json;
    expect(log).toEqual([
      expect.objectContaining({
        snapshot_index: 6,
        sha256: V2,
        type: 'became-non-compliant',
        description: 'Artifact became non-compliant',
        artifact_compliance: false,
        snapshot_compliance: false,
      }),
    ]);
  });

  it('an override restores it, and the environment turns compliant again', async () => {
    const r = await cli.json('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/build-2/override`, {
      attestation_name: 'unit-tests',
      artifact_fingerprint: V2,
      reason: 'flaky test, rerun green',
      new_compliance_status: true,
      original_attestation_type: 'generic',
    });
    expect(r.status, r.body).toBeLessThan(300);
    const snap = await snapshotAt(7);
    expect(snap).toMatchObject({ compliant: true });
    expect(snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V2).annotation.type).toBe(
      'became-compliant',
    );
  });

  it('a trail that becomes compliant without the running artifact changing re-evaluates the environment', async () => {
    // A template with two artifacts: the trail is INCOMPLETE until both are reported, while the
    // running one is COMPLIANT in itself all along.
    const two = `${TEMPLATE}  - name: frontend\n`;
    const flow = await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name: 'web-ci', description: '' }) },
      { name: 'template_file', filename: 'template.yml', content: two },
    ]);
    expect(flow.status, flow.body).toBe(201);
    const sha = commit('4');
    await cli.multipart('PUT', `/api/v2/trails/${ORG}/web-ci`, [
      { name: 'data_json', value: JSON.stringify({ name: 'web-1', description: '' }) },
    ]);
    const post = (fingerprint: string, name: string) =>
      cli.json('POST', `/api/v2/artifacts/${ORG}/web-ci`, {
        fingerprint,
        filename: name,
        git_commit: sha,
        build_url: 'https://ci.example/web',
        commit_url: 'https://git.example/web',
        template_reference_name: name,
        trail_name: 'web-1',
      });
    const V5 = fp('e5');
    expect((await post(V5, 'backend')).status).toBe(201);
    const tests = await cli.multipart('POST', `/api/v2/attestations/${ORG}/web-ci/trail/web-1/generic`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          attestation_name: 'unit-tests',
          artifact_fingerprint: V5,
          is_compliant: true,
        }),
      },
    ]);
    expect(tests.status, tests.body).toBe(201);
    expect((await artifact(V5, 'web-ci')).state).toBe('COMPLIANT');
    expect((await trail('web-1', 'web-ci')).compliance_status.status).toBe('INCOMPLETE');

    const at = await latestIndex();
    await report([
      ...deployment('backend', 'registry.example/acme/backend:2222222', V2, 1),
      ...deployment('worker', 'registry.example/acme/worker:3333333', V3, 1),
      ...deployment('web', 'registry.example/acme/web:4444444', V5, 1),
    ]);
    let snap = await snapshotAt(at + 1);
    expect(snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V5)).toMatchObject({
      compliant: false,
      annotation: { type: 'started-non-compliant' },
    });
    expect(snap.compliant).toBe(false);

    // The missing frontend arrives: the trail completes; the running backend's own state is unchanged.
    expect((await post(FRONT, 'frontend')).status).toBe(201);
    expect((await trail('web-1', 'web-ci')).compliance_status.status).toBe('COMPLIANT');
    snap = await snapshotAt(at + 2);
    expect(snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === V5)).toMatchObject({
      compliant: true,
      annotation: { type: 'became-compliant' },
    });
    expect(snap.compliant).toBe(true);
  });
});

describe('a policy requiring evidence outside the template', () => {
  it('is satisfied by an attestation that leaves the artifact state as it was', async () => {
    const at = await latestIndex();
    const yaml = `${POLICY_SCHEMA}artifacts:\n  attestations:\n    - name: security-scan\n      type: generic\n      if: \${{ flow.name == "web-ci" }}\n`;
    expect((await putPolicy(t.app, key, ORG, 'security', yaml)).status).toBe(201);
    expect(
      (await cli.json('POST', `/api/v2/environments/${ORG}/${ENV}/policies`, { policy_names: ['security'] }))
        .status,
    ).toBe(200);
    let snap = await snapshotAt(at + 1);
    expect(snap.applied_policies.map((p: { name: string }) => p.name).sort()).toEqual([
      'build-process',
      'security',
    ]);
    const web = snap.artifacts.find((x: SnapshotArtifact) => x.flow_name === 'web-ci');
    expect(web).toMatchObject({ compliant: false, annotation: { type: 'became-non-compliant' } });
    expect(web.reasons_for_incompliance).toEqual([
      "policy 'security' v1: attestation 'security-scan' (generic): missing_attestation in flow 'web-ci'",
    ]);
    // Not in the template: the artifact stays COMPLIANT in its trail, yet the policy now passes.
    const fingerprint = web.fingerprint as string;
    const scan = await cli.multipart('POST', `/api/v2/attestations/${ORG}/web-ci/trail/web-1/generic`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          attestation_name: 'security-scan',
          artifact_fingerprint: fingerprint,
          is_compliant: true,
        }),
      },
    ]);
    expect(scan.status, scan.body).toBe(201);
    expect((await artifact(fingerprint, 'web-ci')).state).toBe('COMPLIANT');
    snap = await snapshotAt(at + 2);
    expect(snap).toMatchObject({ compliant: true });
    const after = snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === fingerprint);
    expect(after.annotation.type).toBe('became-compliant');
    expect(after.policy_decisions.find((d: PolicyDecision) => d.policy_name === 'security').status).toBe(
      'COMPLIANT',
    );
  });
});
