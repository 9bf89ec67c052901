/**
 * A whole pipeline replayed exactly as the kosli CLI (v2.38.0) sends it (reference/cli-requests.md):
 * create a custom type, create a flow with a template, begin a trail, attest every kind (one of
 * them before the artifact exists), report the artifact, override, then read everything back the
 * way the CLI does, asserting every field it reads and its type.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { untar } from '../helpers/tar.js';
import type {
  ArtifactRecord,
  Attestation,
  AttestationStatus,
  AttestationType,
  AttestationTypeVersion,
  SearchArtifact,
  TrailEvent,
  TrailListItem,
} from '../suite/wire.js';

const ORG = 'acme';
const FLOW = 'payments-ci';
const TRAIL = 'build-42';
const COMMIT = '0fc1ba9876543210fedcba9876543210fedcba98';
const FP = createHash('sha256').update('payments:1.4.2').digest('hex');
const git_commit_info = {
  sha1: COMMIT,
  message: 'Add refunds',
  author: 'Ada <ada@example.com>',
  timestamp: 1793530000,
  branch: 'main',
  url: `https://github.com/acme/payments/commit/${COMMIT}`,
};
const repo_info = {
  url: 'https://github.com/acme/payments',
  name: 'acme/payments',
  id: '123456',
  provider: 'github',
};
const TEMPLATE = `version: 1
trail:
  attestations:
  - name: jira-ticket
    type: jira
  - name: pr
    type: pull_request
  - name: risk
    type: generic
  artifacts:
  - name: backend
    attestations:
    - name: unit-tests
      type: junit
    - name: security-scan
      type: snyk
    - name: quality
      type: sonar
    - name: coverage
      type: custom:coverage-metrics
    - name: approval
      type: decision
`;
const JUNIT_XML = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites><testsuite name="unit" tests="3" failures="0" errors="0" skipped="0" time="0.5"/></testsuites>\n`;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const attest = (kind: string, data: Record<string, unknown>, file?: { filename: string; content: string }) =>
  cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/${kind}`, [
    {
      name: 'data_json',
      value: JSON.stringify({ user_data: {}, origin_url: 'https://ci.example/runs/42', ...data }),
    },
    ...(file ? [{ name: 'attachment_file', filename: file.filename, content: file.content }] : []),
  ]);

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
});
afterAll(async () => t?.close());

describe('a kosli CLI pipeline against Verity', () => {
  it('kosli create attestation-type: 201, and 201 again for the new version', async () => {
    const parts = (description: string) => [
      {
        name: 'data_json',
        value: JSON.stringify({
          name: 'coverage-metrics',
          description,
          evaluator: { content_type: 'jq', rules: ['.line_coverage >= 80'] },
          summary: [{ name: 'Line coverage', expression: '.line_coverage' }],
        }),
      },
      {
        name: 'type_schema',
        filename: 'coverage.schema.json',
        content: JSON.stringify({
          type: 'object',
          required: ['line_coverage'],
          properties: { line_coverage: { type: 'number' } },
        }),
      },
    ];
    const first = await cli.multipart('POST', `/api/v2/custom-attestation-types/${ORG}`, parts('Coverage'));
    expect(first.status, first.body).toBe(201);
    const second = await cli.multipart(
      'POST',
      `/api/v2/custom-attestation-types/${ORG}`,
      parts('Coverage v2'),
    );
    // A new version is created: 201 too (the CLI accepts any 2xx, the Terraform provider only 201).
    expect(second.status, second.body).toBe(201);
  });

  it('kosli enable beta and kosli create control', async () => {
    expect(
      (
        await cli.json('PUT', `/api/v2/organizations/${ORG}/experimental_features`, {
          experimental_features_enabled: true,
        })
      ).status,
    ).toBe(200);
    const r = await cli.json('POST', `/api/v2/controls/${ORG}`, {
      identifier: 'CTL-4EYES',
      name: 'Four eyes',
    });
    expect(r.status, r.body).toBe(201);
  });

  it('kosli create flow --template-file: 201 created, 200 updated', async () => {
    const parts = [
      { name: 'data_json', value: JSON.stringify({ name: FLOW, description: 'Payments pipeline' }) },
      { name: 'template_file', filename: 'template.yml', content: TEMPLATE },
    ];
    expect((await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, parts)).status).toBe(201);
    const again = await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, parts);
    expect(again.status).toBe(200);
    expect(again.json).toBe('OK');
  });

  it('kosli begin trail: 201 begun', async () => {
    const r = await cli.multipart('PUT', `/api/v2/trails/${ORG}/${FLOW}`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          name: TRAIL,
          description: 'Build 42',
          git_commit_info,
          repo_info,
          origin_url: 'https://ci.example/runs/42',
        }),
      },
    ]);
    expect(r.status, r.body).toBe(201);
  });

  it('kosli attest junit --name backend.unit-tests before the artifact exists: pending on template name + commit', async () => {
    const r = await attest(
      'junit',
      {
        attestation_name: 'unit-tests',
        target_artifacts: ['backend'],
        git_commit_info,
        repo_info,
        junit_results: [
          {
            name: 'unit',
            failures: 0,
            errors: 0,
            skipped: 0,
            total: 3,
            duration: 0.5,
            timestamp: 1793530100,
          },
        ],
      },
      { filename: 'junit.xml', content: JUNIT_XML },
    );
    expect(r.status, r.body).toBe(201);
    const trail = await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}`);
    expect(trail.json.compliance_status.unbound_attestations).toHaveLength(1);
    expect(trail.json.compliance_status.unbound_attestations[0].reason).toMatch(/pending/);
  });

  it('kosli attest artifact: 201 {"message":"OK"}', async () => {
    const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
      fingerprint: FP,
      filename: 'ghcr.io/acme/payments:1.4.2',
      git_commit: COMMIT,
      git_commit_info,
      repo_info,
      build_url: 'https://www.yr.no',
      commit_url: 'https://www.nrk.no',
      repo_url: 'https://github.com/acme/payments',
      template_reference_name: 'backend',
      trail_name: TRAIL,
    });
    expect(r.status, r.body).toBe(201);
    expect(r.json).toEqual({ message: 'OK' });
  });

  it('kosli attest of every other kind', async () => {
    const results = [
      await attest(
        'snyk',
        {
          attestation_name: 'security-scan',
          artifact_fingerprint: FP,
          git_commit_info,
          snyk_results: {
            schema_version: 1,
            tool: { name: 'Snyk Container', version: '1.1290.0' },
            results: [{ high_count: 0, medium_count: 0, low_count: 0 }],
          },
        },
        { filename: 'scan.sarif', content: '{"version":"2.1.0","runs":[]}' },
      ),
      await attest('sonar', {
        attestation_name: 'quality',
        artifact_fingerprint: FP,
        sonar_results: {
          serverUrl: 'https://sonar.example',
          taskId: 'AY1',
          status: 'SUCCESS',
          analysedAt: '2026-11-01T12:00:00+0000',
          revision: COMMIT,
          project: { key: 'payments', name: 'payments', url: 'https://sonar.example/dashboard?id=payments' },
          qualityGate: {
            status: 'OK',
            conditions: [
              { metric: 'coverage', errorThreshold: '80', operator: 'LESS_THAN', value: '91', status: 'OK' },
            ],
          },
        },
      }),
      await attest('custom', {
        attestation_name: 'coverage',
        artifact_fingerprint: FP,
        type_name: 'coverage-metrics',
        attestation_data: { line_coverage: 91.5 },
      }),
      await attest('system', {
        attestation_name: 'approval',
        artifact_fingerprint: FP,
        type_name: 'decision',
        control: 'CTL-4EYES',
        attestation_data: { is_compliant: true },
      }),
      await attest('jira', {
        attestation_name: 'jira-ticket',
        git_commit_info,
        jira_results: [
          { issue_id: 'PAY-12', issue_url: 'https://acme.atlassian.net/browse/PAY-12', issue_exists: true },
        ],
      }),
      await attest('pull_request', {
        attestation_name: 'pr',
        git_commit_info,
        git_provider: 'github',
        pull_requests: [
          {
            url: 'https://github.com/acme/payments/pull/7',
            state: 'MERGED',
            merge_commit: COMMIT,
            approvers: [{ username: 'grace', state: 'APPROVED', timestamp: 1793529000 }],
            author: 'ada',
            title: 'Add refunds',
            head_ref: 'refunds',
            base_ref: 'main',
            commits: [
              {
                sha1: COMMIT,
                message: 'Add refunds',
                author: 'Ada',
                timestamp: 1793528000,
                branch: 'refunds',
              },
            ],
          },
        ],
      }),
      await attest('generic', {
        attestation_name: 'risk',
        is_compliant: false,
        description: 'manual risk review',
      }),
    ];
    for (const r of results) {
      expect(r.status, r.body).toBe(201);
    }
  });

  it('kosli attest override (hidden): plain JSON, 200 "OK"', async () => {
    const r = await cli.json('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/override`, {
      attestation_name: 'risk',
      reason: 'Accepted by the risk board',
      new_compliance_status: true,
      original_attestation_type: 'generic',
      user_data: {},
    });
    expect(r.status, r.body).toBe(200);
    expect(r.json).toBe('OK');
  });

  it('kosli get trail: every field the table and markdown read, with its type', async () => {
    const r = await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}`);
    expect(r.status).toBe(200);
    const trail = r.json;
    expect(trail.name).toBe(TRAIL);
    expect(typeof trail.description).toBe('string');
    expect(trail.compliance_state).toBe('COMPLIANT');
    expect(typeof trail.last_modified_at).toBe('number');
    expect(typeof trail.origin_url).toBe('string');
    expect(trail.git_commit_info).toMatchObject({
      sha1: COMMIT,
      author: git_commit_info.author,
      message: git_commit_info.message,
    });
    expect(typeof trail.git_commit_info.timestamp).toBe('number');
    const status = trail.compliance_status;
    expect(
      status.attestations_statuses.map((s: AttestationStatus) => [
        s.attestation_name,
        s.status,
        s.is_compliant,
        s.unexpected,
      ]),
    ).toEqual([
      ['jira-ticket', 'COMPLETE', true, false],
      ['pr', 'COMPLETE', true, false],
      ['risk', 'COMPLETE', true, false],
    ]);
    const risk = status.attestations_statuses[2];
    expect(risk.attestation_type).toBe('generic');
    expect(typeof risk.overridden_attestation_id).toBe('string');
    expect(risk.attestation_id).not.toBe(risk.overridden_attestation_id);
    const backend = status.artifacts_statuses.backend;
    expect(backend.status).toBe('COMPLIANT');
    expect(backend.artifact_fingerprint).toBe(FP);
    expect(
      backend.attestations_statuses.map((s: AttestationStatus) => [
        s.attestation_name,
        s.attestation_type,
        s.status,
        s.is_compliant,
      ]),
    ).toEqual([
      ['unit-tests', 'junit', 'COMPLETE', true],
      ['security-scan', 'snyk', 'COMPLETE', true],
      ['quality', 'sonar', 'COMPLETE', true],
      ['coverage', 'custom:coverage-metrics', 'COMPLETE', true],
      ['approval', 'decision', 'COMPLETE', true],
    ]);
    for (const s of [...status.attestations_statuses, ...backend.attestations_statuses]) {
      expect(typeof s.attestation_id).toBe('string');
      expect(typeof s.unexpected).toBe('boolean');
    }
    expect(status.unbound_attestations).toEqual([]);
    expect(trail.template).toMatchObject({ version: 1, content: TEMPLATE });
    expect(trail.flow).toEqual({ name: FLOW, tags: {} });
    const types = trail.events.map((e: TrailEvent) => e.type);
    expect(types[0]).toBe('trail_reported');
    expect(types).toContain('trail_attestation_for_artifact_reported');
    expect(types).toContain('artifact_creation_reported');
    expect(types).toContain('artifact_attestation_reported');
    expect(types).toContain('trail_attestation_reported');
    for (const e of trail.events) {
      expect(typeof e.type).toBe('string');
      expect(typeof e.timestamp).toBe('number');
    }
    expect(trail.html_url).toBe(`http://verity.test/${ORG}/flows/${FLOW}/trails/${TRAIL}`);
  });

  it('kosli get artifact FLOW@<prefix>: the object the table asserts on', async () => {
    // Every record in the transparency log first, so both reads below show the same log_index.
    await t.app.transparencyLog.sequence();
    const r = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${FP.slice(0, 7)}`);
    expect(r.status, r.body).toBe(200);
    const a = r.json;
    for (const field of [
      'filename',
      'flow_name',
      'fingerprint',
      'git_commit',
      'commit_url',
      'build_url',
      'html_url',
      'state',
      'trail_name',
      'template_reference_name',
    ]) {
      expect(typeof a[field], field).toBe('string');
    }
    expect(a.fingerprint).toBe(FP);
    expect(a.state).toBe('COMPLIANT');
    expect(Number.isFinite(Number.parseFloat(a.created_at))).toBe(true);
    expect(a.html_url).toBe(`http://verity.test/${ORG}/flows/${FLOW}/artifacts/${FP}?artifact_id=${a.id}`);
    expect(Array.isArray(a.running)).toBe(true);
    expect(Array.isArray(a.exited)).toBe(true);
    expect(a.history.length).toBe(5);
    for (const h of a.history) {
      expect(typeof h.event).toBe('string');
      expect(typeof h.timestamp).toBe('number');
    }
    expect(Object.keys(a.evidence).sort()).toEqual([
      'approval',
      'coverage',
      'quality',
      'security-scan',
      'unit-tests',
    ]);
    expect(a.evidence['unit-tests']).toMatchObject({
      evidence_type: 'junit',
      is_compliant: true,
      has_audit_package: true,
    });
    expect(typeof a.evidence['unit-tests'].evidence_url).toBe('string');
    // The full fingerprint takes the one-query path: it must answer the same record.
    const full = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${FP}`);
    expect(full.json).toEqual(a);
  });

  it('kosli get artifact FLOW:COMMIT: an array', async () => {
    const r = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/commit_sha/${COMMIT}?trail=${TRAIL}`);
    expect(r.status).toBe(200);
    expect(r.json.map((a: ArtifactRecord) => a.fingerprint)).toEqual([FP]);
  });

  it('kosli assert artifact --fingerprint: compliant in flow scope', async () => {
    const r = await cli.get(`/api/v2/asserts/${ORG}/fingerprint/${FP}?flow_name=${FLOW}`);
    expect(r.status, r.body).toBe(200);
    expect(r.json.compliant).toBe(true);
    expect(r.json.scope).toBe('flow');
    expect(typeof r.json.html_url).toBe('string');
    expect(r.json.policy_evaluations).toEqual([]);
    expect(r.json.flows).toHaveLength(1);
    const flow = r.json.flows[0];
    expect(flow.flow).toBe(FLOW);
    expect(flow.trail).toBe(TRAIL);
    expect(flow.compliance_status.attestations_statuses).toHaveLength(8);
    for (const s of flow.compliance_status.attestations_statuses) {
      expect(typeof s.attestation_name).toBe('string');
      expect(typeof s.attestation_type).toBe('string');
      expect(typeof s.status).toBe('string');
      expect(typeof s.is_compliant).toBe('boolean');
      expect(typeof s.unexpected).toBe('boolean');
    }
  });

  it('kosli get attestation NAME --flow --trail, and --attestation-id', async () => {
    const r = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/risk`);
    expect(r.status).toBe(200);
    // Every report, newest first: the override, then what it overrode.
    expect(r.json.map((x: Attestation) => x.attestation_type)).toEqual(['override', 'generic']);
    expect(r.json[0]).toMatchObject({
      is_compliant: true,
      reason: 'Accepted by the risk board',
      original_attestation_type: 'generic',
    });
    const a = r.json[1];
    expect(a).toMatchObject({ attestation_name: 'risk', attestation_type: 'generic', is_compliant: false });
    expect(typeof a.created_at).toBe('number');
    expect(typeof a.html_url).toBe('string');
    const byId = await cli.get(`/api/v2/attestations/${ORG}?attestation_id=${a.attestation_id}`);
    expect(byId.json.data).toHaveLength(1);
    expect(byId.json.data[0].attestation_id).toBe(a.attestation_id);
    const unknown = await cli.get(
      `/api/v2/attestations/${ORG}?attestation_id=00000000-0000-0000-0000-00000000`,
    );
    expect(unknown.status).toBe(200);
    expect(unknown.json.data).toEqual([]);
    const onArtifact = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/artifact/${FP}/security-scan`);
    expect(onArtifact.json[0]).toMatchObject({ attestation_type: 'snyk', artifact_fingerprint: FP });
  });

  it('kosli get attestation-type NAME and NAME@v1, list attestation-types', async () => {
    const r = await cli.get(`/api/v2/custom-attestation-types/${ORG}/coverage-metrics`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      name: 'coverage-metrics',
      description: 'Coverage v2',
      org: ORG,
      archived: false,
    });
    // Newest first: the CLI prints them in the order given, the Terraform provider reads versions[0].
    expect(r.json.versions.map((v: AttestationTypeVersion) => v.version)).toEqual([2, 1]);
    const v = r.json.versions[0];
    expect(v.description).toBe('Coverage v2');
    expect(typeof v.timestamp).toBe('number');
    expect(typeof v.created_by).toBe('string');
    expect(v.type_schema).toMatchObject({ type: 'object' });
    expect(v.evaluator).toEqual({ content_type: 'jq', rules: ['.line_coverage >= 80'] });
    expect(v.summary).toEqual([{ name: 'Line coverage', expression: '.line_coverage' }]);
    const v1 = await cli.get(`/api/v2/custom-attestation-types/${ORG}/coverage-metrics?version=1`);
    expect(v1.json.versions).toHaveLength(1);
    expect(v1.json.created_at).toBeUndefined();
    const list = await cli.get(`/api/v2/custom-attestation-types/${ORG}`);
    expect(list.json.map((x: AttestationType) => [x.name, Array.isArray(x.versions)])).toEqual([
      ['coverage-metrics', true],
    ]);
  });

  it('kosli get flow, list flows (plain and paged), list trails, list artifacts', async () => {
    const flow = await cli.get(`/api/v2/flows/${ORG}/${FLOW}`);
    expect(flow.json).toMatchObject({
      name: FLOW,
      description: 'Payments pipeline',
      visibility: 'private',
      tags: {},
    });
    expect(flow.json.template.startsWith('version: ')).toBe(true);
    const plain = await cli.get(`/api/v2/flows/${ORG}`);
    expect(Array.isArray(plain.json)).toBe(true);
    expect(plain.json[0]).toMatchObject({ name: FLOW, latest_state: 'COMPLIANT' });
    expect(typeof plain.json[0].latest_activity_at).toBe('number');
    expect(typeof plain.json[0].tags).toBe('object');
    const paged = await cli.get(`/api/v2/flows/${ORG}?page=1&per_page=20`);
    expect(paged.json.pagination).toMatchObject({ page: 1, page_count: 1, total: 1 });
    const trails = await cli.get(`/api/v2/trails/${ORG}?flow=${FLOW}&page=1&per_page=20`);
    expect(trails.json.data).toEqual([
      expect.objectContaining({ name: TRAIL, description: 'Build 42', compliance_state: 'COMPLIANT' }),
    ]);
    expect(trails.json.pagination).toEqual({ total: 1, page: 1, per_page: 20, page_count: 1 });
    const byFp = await cli.get(`/api/v2/trails/${ORG}?fingerprint=${FP}&page=1&per_page=20`);
    expect(byFp.json.data.map((x: TrailListItem) => x.name)).toEqual([TRAIL]);
    const artifacts = await cli.get(`/api/v2/artifacts/${ORG}?flow_name=${FLOW}&page=1&per_page=15`);
    expect(Array.isArray(artifacts.json)).toBe(true);
    const a = artifacts.json[0];
    expect(a.git_commit.length).toBeGreaterThanOrEqual(7);
    for (const f of ['filename', 'fingerprint', 'state', 'created_at']) {
      expect(typeof a[f]).toBe('string');
    }
  });

  it('kosli search: fingerprint prefix and commit', async () => {
    const r = await cli.get(`/api/v2/search/${ORG}/sha/${FP.slice(0, 10)}`);
    expect(r.status).toBe(200);
    expect(r.json.resolved_to).toMatchObject({ type: 'fingerprint', full_match: FP });
    expect(r.json.resolved_to.fingerprints).toEqual({ type: 'fingerprint', count: 1, matches: [FP] });
    const a = r.json.artifacts[0];
    expect(a).toMatchObject({
      fingerprint: FP,
      flow: FLOW,
      git_commit: COMMIT,
      has_provenance: true,
      compliance_state: 'COMPLIANT',
    });
    for (const f of ['name', 'commit_url', 'build_url', 'html_url']) {
      expect(typeof a[f]).toBe('string');
    }
    expect(a.running_in).toEqual([]);
    expect(a.exited_from).toEqual([]);
    expect(Array.isArray(a.history)).toBe(true);
    const byCommit = await cli.get(`/api/v2/search/${ORG}/sha/${COMMIT}`);
    expect(byCommit.json.resolved_to.type).toBe('commit');
    expect(byCommit.json.artifacts.map((x: SearchArtifact) => x.fingerprint)).toEqual([FP]);
    const none = await cli.get(`/api/v2/search/${ORG}/sha/abcdef12345`);
    expect(none.status).toBe(404);
    expect(none.json.message).toBe("No matches for 'abcdef12345'.");
  });

  it('downloads the artifact audit package: every member matches MANIFEST.sha256', async () => {
    const r = (await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/${FP}/audit_package`)) as any;
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/gzip');
    expect(r.headers['content-disposition']).toMatch(/attachment; filename=".*\.tar\.gz"/);
    const files = await untar(gunzipSync(r.raw));
    const manifest = files.get('MANIFEST.sha256')!.toString('utf8').trim().split('\n');
    expect(manifest.length).toBe(files.size - 1);
    for (const line of manifest) {
      const [sum, name] = line.split('  ');
      expect(files.has(name!), name).toBe(true);
      expect(createHash('sha256').update(files.get(name!)!).digest('hex'), name).toBe(sum);
    }
    expect(JSON.parse(files.get('artifact.json')!.toString()).fingerprint).toBe(FP);
    expect(JSON.parse(files.get('compliance.json')!.toString()).state).toBe('COMPLIANT');
    const junit = [...files.keys()].find((k) => k.endsWith('/evidence/junit.xml'))!;
    expect(files.get(junit)!.toString()).toBe(JUNIT_XML);
    expect([...files.keys()].filter((k) => k.endsWith('/attestation.json'))).toHaveLength(9);
  });
});
