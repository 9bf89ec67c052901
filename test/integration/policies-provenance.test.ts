/**
 * Policies over HTTP, and provenance through a test ProvenancePort: evaluation against real
 * records, runtime events written back, re-evaluation when the evidence publishes a change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp, putPolicy, POLICY_SCHEMA } from '../helpers/runtime.js';
import type {
  ProvenancePort,
  ProvenanceRecord,
  RuntimeEvent,
} from '../../services/api/src/usecases/scope/provenance.js';
import { outboxRepository } from '../../services/api/src/storage/repositories/actions.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';

const ORG = 'acme';
const APP_V1 = fp('a');
const APP_V2 = fp('b');
const known = new Map<string, ProvenanceRecord[]>();
const recorded: RuntimeEvent[] = [];
const port: ProvenancePort = {
  find: async (_db, _org, fingerprints) =>
    new Map(fingerprints.filter((f) => known.has(f)).map((f) => [f, known.get(f)!])),
  recordRuntimeEvents: async (_db, _org, events) => {
    recorded.push(...events);
  },
};

function record(fingerprint: string, overrides: Partial<ProvenanceRecord> = {}): ProvenanceRecord {
  return {
    fingerprint,
    flowName: 'app-ci',
    flowTags: { kind: 'build' },
    trailName: 'commit-1',
    artifactId: `art-${fingerprint.slice(0, 4)}`,
    artifactName: 'app',
    templateReferenceName: 'app',
    gitCommit: 'c'.repeat(40),
    gitCommitInfo: null,
    commitUrl: 'https://git.example/commit/ccc',
    buildUrl: 'https://ci.example/1',
    htmlUrl: 'http://verity.test/acme/flows/app-ci/artifacts/x',
    reportedAt: new Date(0),
    artifactCompliance: 'COMPLIANT',
    trailCompliance: 'COMPLIANT',
    nonComplianceReasons: [],
    attestations: [{ name: 'tests', type: 'junit', isCompliant: true, scope: 'artifact' }],
    ...overrides,
  };
}

let t: TestApp;
let key: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp({ provenance: port });
  key = await t.seedKey(ORG, 'member');
  api = client(t.app, key);
  await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
});
afterAll(async () => t?.close());

const latest = async () => (await api.get(`/api/v2/snapshots/${ORG}/prod/-1`)).json;
const POLICY = `${POLICY_SCHEMA}artifacts:
  provenance:
    required: true
  trail-compliance:
    required: true
  attestations:
    - name: tests
      type: junit
    - type: pull_request
      if: \${{ flow.tags.risk == "high" }}
`;

describe('policies', () => {
  it('creates (201), versions only when the content changes (200), and lists versions and events', async () => {
    expect((await putPolicy(t.app, key, ORG, 'prod-policy', POLICY, { description: 'd1' })).status).toBe(201);
    expect((await putPolicy(t.app, key, ORG, 'prod-policy', POLICY, { description: 'd1' })).status).toBe(200);
    expect(
      (
        await putPolicy(t.app, key, ORG, 'prod-policy', `${POLICY}\n# v2\n`, {
          description: 'd2',
          comment: 'c',
        })
      ).status,
    ).toBe(200);
    const res = await api.get(`/api/v2/policies/${ORG}/prod-policy`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      name: 'prod-policy',
      description: 'd2',
      archived: false,
      consuming_envs: [],
    });
    expect(res.json.versions.map((v: any) => [v.version, v.comment])).toEqual([
      [1, ''],
      [2, 'c'],
    ]);
    expect(res.json.versions[1].policy_yaml).toContain('# v2');
    expect(res.json.events.map((e: any) => e.type)).toEqual(['creation', 'new_version', 'metadata_update']);
    expect((await api.get(`/api/v2/policies/${ORG}`)).json.map((p: any) => p.name)).toEqual(['prod-policy']);
    expect((await api.get(`/api/v2/policies/${ORG}/nope`)).json.message).toBe(
      `Policy 'nope' does not exist in organization '${ORG}'`,
    );
  });

  it('refuses an invalid policy with the line and reason, and stores nothing', async () => {
    const res = await putPolicy(
      t.app,
      key,
      ORG,
      'broken',
      `${POLICY_SCHEMA}artifacts:\n  attestations:\n    - type: junit\n      if: \${{ flow.nmae == "x" }}\n`,
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(
      /^Invalid policy file: line 5: artifacts\.attestations\[0\]\.if: invalid condition: unknown context 'flow\.nmae'/,
    );
    expect(res.json.errors).toHaveProperty(['policy_file.artifacts.attestations[0].if']);
    const badPayload = await putPolicy(t.app, key, ORG, '-x', POLICY);
    expect(badPayload.status).toBe(400);
    expect(Object.keys(badPayload.json.errors)).toEqual(['payload.name']);
    expect((await api.get(`/api/v2/policies/${ORG}/broken`)).status).toBe(404);
    const reader = await t.seedKey(ORG, 'reader');
    expect((await putPolicy(t.app, reader, ORG, 'r', POLICY)).status).toBe(403);
  });

  it('refuses a matches() pattern RE2 cannot run, naming the rule, and stores nothing', async () => {
    const res = await putPolicy(
      t.app,
      key,
      ORG,
      'lookahead',
      `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n    exceptions:\n      - if: \${{ matches(artifact.name, "^(?!nginx)") }}\n`,
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toContain('artifacts.provenance.exceptions[0].if: invalid condition');
    expect(res.json.message).toContain('RE2 syntax');
    expect(res.json.errors).toHaveProperty(['policy_file.artifacts.provenance.exceptions[0].if']);
    expect((await api.get(`/api/v2/policies/${ORG}/lookahead`)).status).toBe(404);
  });
});

describe('provenance and compliance', () => {
  it('evaluates a starting fingerprint against its provenance and writes runtime events', async () => {
    known.set(APP_V1, [record(APP_V1)]);
    await api.post(`/api/v2/environments/${ORG}/prod/policies`, { policy_names: ['prod-policy'] });
    const res = await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: deployment('app', 'registry/app:1', APP_V1, 2),
    });
    expect(res.json).toBe('Snapshot #1 created');
    const snap = await latest();
    expect(snap).toMatchObject({ compliant: true, compliance_state: 'COMPLIANT' });
    const a = snap.artifacts[0];
    expect(a).toMatchObject({
      compliant: true,
      flow_name: 'app-ci',
      git_commit: 'c'.repeat(40),
      commit_url: 'https://git.example/commit/ccc',
      annotation: { type: 'started-compliant', was: 0, now: 2 },
    });
    expect(a.flows[0]).toMatchObject({
      flow_name: 'app-ci',
      trail_name: 'commit-1',
      artifact_compliance_in_flow: true,
    });
    expect(a.policy_decisions[0]).toMatchObject({
      policy_name: 'prod-policy',
      policy_version: 2,
      status: 'COMPLIANT',
    });
    expect(a.policy_decisions[0].rule_evaluations.map((r: any) => [r.rule.type, r.satisfied])).toEqual([
      ['provenance', true],
      ['trail-compliance', true],
      ['attestation', true],
      ['attestation', null],
    ]);
    expect(recorded).toEqual([
      {
        fingerprint: APP_V1,
        type: 'artifact_started_running',
        environmentName: 'prod',
        snapshotIndex: 1,
        instanceCount: 2,
        at: t.clock.now(),
      },
    ]);
    expect((await api.get(`/api/v2/policies/${ORG}/prod-policy`)).json.consuming_envs).toEqual(['prod']);
  });

  it('a fingerprint reported after it runs updates the environment: its provenance arrives and it becomes compliant', async () => {
    await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: [
        ...deployment('app', 'registry/app:1', APP_V1, 2),
        ...deployment('job', 'registry/job:2', APP_V2, 1),
      ],
    });
    let snap = await latest();
    expect(snap).toMatchObject({ index: 2, compliant: false });
    expect(snap.artifacts.find((a: any) => a.fingerprint === APP_V2).annotation.type).toBe(
      'started-non-compliant',
    );
    expect(recorded.at(-1)).toMatchObject({
      fingerprint: APP_V2,
      type: 'artifact_started_running',
      snapshotIndex: 2,
    });

    // The evidence reports the artifact: it publishes the event in its own transaction.
    known.set(APP_V2, [record(APP_V2, { flowName: 'job-ci', trailName: 't9', flowTags: {} })]);
    const org = await orgsRepository.findByName(t.db.db, ORG);
    await t.db.db.transaction().execute((tx) =>
      t.app.domainEvents.publish(tx, [
        {
          type: 'artifact.reported',
          orgId: org!.id,
          flowName: 'job-ci',
          trailName: 't9',
          fingerprint: APP_V2,
          artifactName: 'job',
          artifactId: 'art-job',
          gitCommit: null,
          commitUrl: null,
          buildUrl: null,
          state: 'COMPLIANT',
          at: t.clock.now(),
        },
      ]),
    );
    expect((await latest()).index).toBe(2);
    const made = await t.app.runtime.processMarks();
    expect(made.map((m) => m.snapshot?.index)).toEqual([3]);
    snap = await latest();
    expect(snap).toMatchObject({ index: 3, compliant: true, summary: { started: 0, changed: 1, exited: 0 } });
    expect(snap.artifacts.find((a: any) => a.fingerprint === APP_V2)).toMatchObject({
      flow_name: 'job-ci',
      annotation: { type: 'became-compliant', was: 1, now: 1 },
    });
    // Nothing changed since: processing again makes no snapshot.
    expect(await t.app.runtime.processMarks()).toEqual([]);
  });

  it('a change of compliance in the evidence makes a became-non-compliant snapshot', async () => {
    known.set(APP_V1, [
      record(APP_V1, { trailCompliance: 'NON-COMPLIANT', artifactCompliance: 'NON-COMPLIANT' }),
    ]);
    const org = await orgsRepository.findByName(t.db.db, ORG);
    await t.db.db
      .transaction()
      .execute((tx) =>
        t.app.domainEvents.publish(tx, [
          { type: 'artifact.compliance-changed', orgId: org!.id, fingerprints: [APP_V1], at: t.clock.now() },
        ]),
      );
    await t.app.runtime.processMarks();
    const snap = await latest();
    expect(snap).toMatchObject({ index: 4, compliant: false });
    const a = snap.artifacts.find((x: any) => x.fingerprint === APP_V1);
    expect(a.annotation.type).toBe('became-non-compliant');
    expect(a.policy_decisions[0].rule_evaluations[1].resolutions[0]).toMatchObject({
      type: 'non_compliant_in_trail',
      context: { flow_name: 'app-ci', trail_name: 'commit-1', artifact_status: 'NON-COMPLIANT' },
    });
    expect((await api.get(`/api/v2/environments/${ORG}/prod`)).json.state).toBe(false);
  });

  it('a new policy version re-evaluates the environments that use it', async () => {
    const loose = `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`;
    expect((await putPolicy(t.app, key, ORG, 'prod-policy', loose)).status).toBe(200);
    await t.app.runtime.processMarks();
    const snap = await latest();
    expect(snap).toMatchObject({ index: 5, compliant: true });
    expect(snap.applied_policies).toMatchObject([{ name: 'prod-policy', version: 3, failing_artifacts: [] }]);
  });

  it('writes flow-action notifications for the evidence events, and ON_RELEASE when an artifact of the flow starts', async () => {
    await api.put(`/api/v2/actions/${ORG}/flows`, {
      name: 'ci-hooks',
      flows: ['app-ci'],
      triggers: ['ON_STARTED_TRAIL', 'ON_ATTESTATION', 'ON_RELEASE', 'ON_APPROVAL'],
      targets: [{ type: 'WEBHOOK', webhook: 'http://127.0.0.1:9/hook' }],
    });
    const org = await orgsRepository.findByName(t.db.db, ORG);
    await t.db.db.transaction().execute((tx) =>
      t.app.domainEvents.publish(tx, [
        {
          type: 'trail.started',
          orgId: org!.id,
          flowName: 'app-ci',
          trailName: 'commit-2',
          at: t.clock.now(),
        },
        { type: 'trail.started', orgId: org!.id, flowName: 'other', trailName: 'x', at: t.clock.now() },
        {
          type: 'attestation.reported',
          orgId: org!.id,
          flowName: 'app-ci',
          trailName: 'commit-2',
          attestationId: 'id',
          attestationName: 'tests',
          attestationType: 'junit',
          isCompliant: true,
          fingerprint: null,
          at: t.clock.now(),
        },
      ]),
    );
    const APP_V3 = fp('d');
    known.set(APP_V3, [record(APP_V3)]);
    await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: deployment('app', 'registry/app:3', APP_V3, 1),
    });
    const rows = await outboxRepository.forOrg(t.db.db, org!.id);
    // Rows written in one instant of the test clock: compare them as a set.
    expect(rows.map((r) => r.trigger).sort()).toEqual(['ON_ATTESTATION', 'ON_RELEASE', 'ON_STARTED_TRAIL']);
    expect(rows.find((r) => r.trigger === 'ON_RELEASE')!.payload).toMatchObject({
      flow: 'app-ci',
      environment: 'prod',
      artifact: { fingerprint: APP_V3 },
    });
  });
});
