/**
 * Every write leaves one audit entry naming its actor, table-driven over the routes the app
 * registers: each write route (not GET, not public, organization-scoped) has one sample request
 * below, sent as the kosli CLI or the Terraform provider sends it, and a route without a sample
 * fails the run by name. After each sample exactly one new entry exists, naming the route's
 * operationId, the service account and the path written to. A write that fails leaves none; the
 * log is admin-only, organization-bound, paged and filtered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogRepository } from '../../services/api/src/storage/repositories/audit-log.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { client, createTestApp, type Reply, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA } from '../helpers/runtime.js';
import { terraformClient } from '../helpers/terraform.js';

const ORG = 'audited';
const FLOW = 'payments-ci';
const TRAIL = 'build-42';
const COMMIT = '0fc1ba9876543210fedcba9876543210fedcba98';
const FP = fp('a');
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
  id: '1',
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
const EMAIL_TARGET = { type: 'EMAIL', emails: ['ops@example.com'] };

/**
 * Write routes no request can answer with success, so they have no sample:
 * - `postUnknownAttestation` is the catch-all for attestation kinds Verity does not know; it
 *   refuses every request with 400 and the list of kinds (the failure cases below send it).
 */
const NEVER_SUCCEEDS = new Set(['POST /api/v2/attestations/:org/:flow/trail/:trail/:kind']);

/**
 * POSTs that change nothing, so they are not writes and leave no entry (a test below checks):
 * - `previewPolicyChange` evaluates an environment's policies with a change applied, and stores nothing.
 */
const NOT_WRITES = new Set(['POST /api/v2/environments/:org/:env_name/policy-preview']);

let t: TestApp;
let adminKey: string;
let actorName: string;
let cli: ReturnType<typeof cliClient>;
let tf: ReturnType<typeof terraformClient>;
let api: ReturnType<typeof client>;
/** What one sample's answer gives the samples after it. */
const kept: { keyId?: string; rotatedKeyId?: string; flowAction?: number; notification?: number } = {};

/** A path under /api/v2 as the Terraform provider names it (relative to `api_url/api/v2`). */
const rel = (path: string) => path.replace(/^\/api\/v2/, '');

/** A form-data attestation as `kosli attest <kind>` sends it. */
const attest = (path: string, data: Record<string, unknown>, file?: { filename: string; content: string }) =>
  cli.multipart('POST', path, [
    {
      name: 'data_json',
      value: JSON.stringify({ user_data: {}, origin_url: 'https://ci.example/runs/42', ...data }),
    },
    ...(file ? [{ name: 'attachment_file', filename: file.filename, content: file.content }] : []),
  ]);

/** A prerequisite write: it must succeed, its own audit entry is not this sample's. */
async function needs(res: Promise<Reply>): Promise<Reply> {
  const r = await res;
  expect(r.status, r.body).toBeLessThan(300);
  return r;
}

interface Sample {
  /** The path the sample writes to (read when the sample runs: it may use what earlier ones kept). */
  path: () => string;
  /** Writes that must exist first and are not this route's. */
  prepare?: () => Promise<void>;
  send: (path: string) => Promise<Reply>;
  /** Keeps what later samples need from the answer. */
  keep?: (reply: Reply) => void;
}

const env = (name: string, type: string, extra: Record<string, unknown> = {}) =>
  needs(cli.json('PUT', `/api/v2/environments/${ORG}`, { name, type, description: '', ...extra }));

/** One valid request per write route, keyed by `METHOD path`, in an order where prerequisites exist. */
const SAMPLES: Array<[string, Sample]> = [
  // Organization settings and the caller.
  [
    'PUT /api/v2/organizations/:org/experimental_features',
    {
      path: () => `/api/v2/organizations/${ORG}/experimental_features`,
      send: (p) => cli.json('PUT', p, { experimental_features_enabled: true }),
    },
  ],
  [
    'PUT /api/v2/organizations/:org/features/:feature',
    {
      path: () => `/api/v2/organizations/${ORG}/features/server-side-evaluation`,
      send: (p) => api.put(p, { enabled: true }),
    },
  ],
  // A service account has no default organization to keep: the answer is 200 all the same.
  ['PUT /api/v2/user/:org', { path: () => `/api/v2/user/${ORG}`, send: (p) => cli.json('PUT', p, null) }],
  [
    'POST /api/v2/organizations/:org/webhook-signing-key/rotate',
    {
      path: () => `/api/v2/organizations/${ORG}/webhook-signing-key/rotate`,
      send: (p) => api.post(p, null),
    },
  ],
  // Service accounts and their keys (kosli_service_account, `kosli create api-key`).
  [
    'POST /api/v2/service-accounts/:org',
    {
      path: () => `/api/v2/service-accounts/${ORG}`,
      send: (p) => tf.post(rel(p), { name: 'deployer', description: 'Deploys', privilege: 'member' }),
    },
  ],
  [
    'PATCH /api/v2/service-accounts/:org/:name',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer`,
      send: (p) => tf.patch(rel(p), { description: null, privilege: 'reader' }),
    },
  ],
  // Keyless CI: a trust in a CI issuer's ID tokens (admins only).
  [
    'PUT /api/v2/service-accounts/:org/:name/oidc-trusts/:trust',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer/oidc-trusts/github`,
      send: (p) =>
        api.put(p, {
          issuer: 'https://token.actions.githubusercontent.com',
          audience: 'verity',
          claims: { repository: 'acme/payments', ref: 'refs/heads/*' },
        }),
    },
  ],
  [
    'DELETE /api/v2/service-accounts/:org/:name/oidc-trusts/:trust',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer/oidc-trusts/github`,
      send: (p) => api.delete(p, null),
    },
  ],
  // kosli_notification_config: who hears of keys about to expire.
  [
    'PUT /api/v2/notification-config/:org/:notification_type',
    {
      path: () => `/api/v2/notification-config/${ORG}/api_key_expiry`,
      send: (p) => tf.put(rel(p), { targets: [{ type: 'EMAIL', emails: ['ops@example.com'] }] }),
    },
  ],
  [
    'DELETE /api/v2/notification-config/:org/:notification_type',
    {
      path: () => `/api/v2/notification-config/${ORG}/api_key_expiry`,
      send: (p) => tf.delete(rel(p)),
    },
  ],
  // Retention classes and legal holds (admins only).
  [
    'PUT /api/v2/retention/:org',
    {
      path: () => `/api/v2/retention/${ORG}`,
      send: (p) => api.put(p, { default: { audit_log_days: 400 }, flows: { [FLOW]: { trails_days: 90 } } }),
    },
  ],
  [
    'POST /api/v2/legal-holds/:org',
    {
      path: () => `/api/v2/legal-holds/${ORG}`,
      send: (p) => api.post(p, { name: 'case-7', reason: 'Litigation', scope: { flows: [FLOW] } }),
    },
  ],
  [
    'DELETE /api/v2/legal-holds/:org/:name',
    { path: () => `/api/v2/legal-holds/${ORG}/case-7`, send: (p) => api.delete(p, null) },
  ],
  [
    'POST /api/v2/service-accounts/:org/:name/api-keys',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer/api-keys`,
      send: (p) => cli.json('POST', p, { description: 'ci' }),
      keep: (r) => {
        kept.keyId = r.json.id;
      },
    },
  ],
  [
    'POST /api/v2/service-accounts/:org/:name/api-keys/:key_id/rotate',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer/api-keys/${kept.keyId}/rotate`,
      send: (p) => cli.json('POST', p, {}),
      keep: (r) => {
        kept.rotatedKeyId = r.json.id;
      },
    },
  ],
  [
    'DELETE /api/v2/service-accounts/:org/:name/api-keys/:key_id',
    {
      path: () => `/api/v2/service-accounts/${ORG}/deployer/api-keys/${kept.rotatedKeyId}`,
      send: (p) => cli.json('DELETE', p, null),
    },
  ],
  [
    'DELETE /api/v2/service-accounts/:org/:name',
    { path: () => `/api/v2/service-accounts/${ORG}/deployer`, send: (p) => tf.delete(rel(p)) },
  ],
  // Custom attestation types and controls, which attestations below name.
  [
    'POST /api/v2/custom-attestation-types/:org',
    {
      path: () => `/api/v2/custom-attestation-types/${ORG}`,
      send: (p) =>
        cli.multipart('POST', p, [
          {
            name: 'data_json',
            value: JSON.stringify({
              name: 'coverage-metrics',
              description: 'Coverage',
              evaluator: { content_type: 'jq', rules: ['.line_coverage >= 80'] },
            }),
          },
          {
            name: 'type_schema',
            filename: 'coverage.schema.json',
            content: JSON.stringify({ type: 'object', properties: { line_coverage: { type: 'number' } } }),
          },
        ]),
    },
  ],
  [
    'POST /api/v2/controls/:org',
    {
      path: () => `/api/v2/controls/${ORG}`,
      send: (p) => cli.json('POST', p, { identifier: 'CTL-4EYES', name: 'Four eyes' }),
    },
  ],
  [
    'PUT /api/v2/controls/:org/:identifier',
    {
      path: () => `/api/v2/controls/${ORG}/CTL-4EYES`,
      send: (p) => cli.json('PUT', p, { description: 'Two people review every change' }),
    },
  ],
  [
    'POST /api/v2/controls/:org/:identifier/archive',
    { path: () => `/api/v2/controls/${ORG}/CTL-4EYES/archive`, send: (p) => cli.json('POST', p) },
  ],
  [
    'POST /api/v2/controls/:org/:identifier/unarchive',
    { path: () => `/api/v2/controls/${ORG}/CTL-4EYES/unarchive`, send: (p) => cli.json('POST', p) },
  ],
  // Flows and trails.
  [
    'PUT /api/v2/flows/:org',
    {
      path: () => `/api/v2/flows/${ORG}`,
      send: (p) => cli.json('PUT', p, { name: 'legacy-ci', description: '' }),
    },
  ],
  [
    'PUT /api/v2/flows/:org/template_file',
    {
      path: () => `/api/v2/flows/${ORG}/template_file`,
      send: (p) =>
        cli.multipart('PUT', p, [
          { name: 'data_json', value: JSON.stringify({ name: FLOW, description: 'Payments pipeline' }) },
          { name: 'template_file', filename: 'template.yml', content: TEMPLATE },
        ]),
    },
  ],
  [
    'PUT /api/v2/flows/:org/:flow/rename',
    {
      path: () => `/api/v2/flows/${ORG}/legacy-ci/rename`,
      send: (p) => cli.json('PUT', p, { new_name: 'legacy-ci-v2' }),
    },
  ],
  [
    'PUT /api/v2/flows/:org/:flow/archive',
    { path: () => `/api/v2/flows/${ORG}/legacy-ci-v2/archive`, send: (p) => tf.put(rel(p)) },
  ],
  [
    'PUT /api/v2/trails/:org/:flow',
    {
      path: () => `/api/v2/trails/${ORG}/${FLOW}`,
      send: (p) =>
        cli.multipart('PUT', p, [
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
        ]),
    },
  ],
  [
    'POST /api/v2/artifacts/:org/:flow',
    {
      path: () => `/api/v2/artifacts/${ORG}/${FLOW}`,
      send: (p) =>
        cli.json('POST', p, {
          fingerprint: FP,
          filename: 'ghcr.io/acme/payments:1.4.2',
          git_commit: COMMIT,
          git_commit_info,
          repo_info,
          build_url: 'https://ci.example/runs/42',
          commit_url: git_commit_info.url,
          repo_url: repo_info.url,
          template_reference_name: 'backend',
          trail_name: TRAIL,
        }),
    },
  ],
  // Attestations of every kind.
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/generic',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/generic`,
      send: (p) => attest(p, { attestation_name: 'risk', is_compliant: false, description: 'risk review' }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/junit',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/junit`,
      send: (p) =>
        attest(p, {
          attestation_name: 'unit-tests',
          artifact_fingerprint: FP,
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
        }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/snyk',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/snyk`,
      send: (p) =>
        attest(
          p,
          {
            attestation_name: 'security-scan',
            artifact_fingerprint: FP,
            snyk_results: {
              schema_version: 1,
              tool: { name: 'Snyk Container', version: '1.1290.0' },
              results: [{ high_count: 0, medium_count: 0, low_count: 0 }],
            },
          },
          { filename: 'scan.sarif', content: '{"version":"2.1.0","runs":[]}' },
        ),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/jira',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/jira`,
      send: (p) =>
        attest(p, {
          attestation_name: 'jira-ticket',
          git_commit_info,
          jira_results: [
            { issue_id: 'PAY-12', issue_url: 'https://acme.atlassian.net/browse/PAY-12', issue_exists: true },
          ],
        }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/pull_request',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/pull_request`,
      send: (p) =>
        attest(p, {
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
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/sonar',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/sonar`,
      send: (p) =>
        attest(p, {
          attestation_name: 'quality',
          artifact_fingerprint: FP,
          sonar_results: {
            serverUrl: 'https://sonar.example',
            taskId: 'AY1',
            status: 'SUCCESS',
            analysedAt: '2026-11-01T12:00:00+0000',
            revision: COMMIT,
            project: {
              key: 'payments',
              name: 'payments',
              url: 'https://sonar.example/dashboard?id=payments',
            },
            qualityGate: { status: 'OK', conditions: [] },
          },
        }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/custom',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/custom`,
      send: (p) =>
        attest(p, {
          attestation_name: 'coverage',
          artifact_fingerprint: FP,
          type_name: 'coverage-metrics',
          attestation_data: { line_coverage: 91.5 },
        }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/system',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/system`,
      send: (p) =>
        attest(p, {
          attestation_name: 'approval',
          artifact_fingerprint: FP,
          type_name: 'decision',
          control: 'CTL-4EYES',
          attestation_data: { is_compliant: true },
        }),
    },
  ],
  [
    'POST /api/v2/attestations/:org/:flow/trail/:trail/override',
    {
      path: () => `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/override`,
      send: (p) =>
        cli.json('POST', p, {
          attestation_name: 'risk',
          reason: 'Accepted by the risk board',
          new_compliance_status: true,
          original_attestation_type: 'generic',
          user_data: {},
        }),
    },
  ],
  [
    'PUT /api/v2/custom-attestation-types/:org/:name/archive',
    {
      path: () => `/api/v2/custom-attestation-types/${ORG}/coverage-metrics/archive`,
      send: (p) => tf.put(rel(p)),
    },
  ],
  // `kosli evaluate trail --server-side`: queued, evaluated off the request path.
  [
    'POST /api/v2/evaluations/:org',
    {
      path: () => `/api/v2/evaluations/${ORG}`,
      send: (p) =>
        cli.json('POST', p, {
          context: { trails: [{ flow: FLOW, trail: TRAIL }] },
          policy: { files: { 'policy.cel': 'true' } },
          params: {},
        }),
    },
  ],
  [
    'PATCH /api/v2/tags/:org/:type/:id',
    {
      path: () => `/api/v2/tags/${ORG}/flow/${FLOW}`,
      send: (p) => cli.json('PATCH', p, { set_tags: { team: 'payments' }, remove_tags: [] }),
    },
  ],
  // Environments, policies and what runs.
  [
    'PUT /api/v2/environments/:org',
    {
      path: () => `/api/v2/environments/${ORG}`,
      send: (p) => cli.json('PUT', p, { name: 'prod', type: 'K8S', description: 'production' }),
    },
  ],
  [
    'PATCH /api/v2/environments/:org/:env_name',
    {
      path: () => `/api/v2/environments/${ORG}/prod`,
      send: (p) => tf.patch(rel(p), { description: 'Production', include_scaling: false }),
    },
  ],
  [
    'PUT /api/v2/policies/:org',
    {
      path: () => `/api/v2/policies/${ORG}`,
      send: (p) =>
        cli.multipart('PUT', p, [
          {
            name: 'payload',
            value: JSON.stringify({ name: 'gate', description: '', comment: '', type: 'env' }),
          },
          { name: 'policy_file', filename: 'policy.yml', content: POLICY_SCHEMA },
        ]),
    },
  ],
  [
    'POST /api/v2/environments/:org/:env_name/policies',
    {
      path: () => `/api/v2/environments/${ORG}/prod/policies`,
      send: (p) => cli.json('POST', p, { policy_names: ['gate'] }),
    },
  ],
  [
    'DELETE /api/v2/environments/:org/:env_name/policies',
    {
      path: () => `/api/v2/environments/${ORG}/prod/policies`,
      send: (p) => cli.json('DELETE', p, { policy_names: ['gate'] }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/report/K8S',
    {
      path: () => `/api/v2/environments/${ORG}/prod/report/K8S`,
      send: (p) => cli.json('PUT', p, { artifacts: deployment('api', 'registry/api:1', FP, 2) }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/report/ECS',
    {
      path: () => `/api/v2/environments/${ORG}/ecs/report/ECS`,
      prepare: async () => void (await env('ecs', 'ECS')),
      send: (p) =>
        cli.json('PUT', p, {
          artifacts: [
            {
              taskArn: 'arn:t1',
              cluster_name: 'c',
              service_name: 's',
              digests: { 'api:1': FP },
              creationTimestamp: 5,
            },
          ],
        }),
    },
  ],
  ...(['server', 'docker', 'S3', 'lambda'] as const).map((type): [string, Sample] => [
    `PUT /api/v2/environments/:org/:env_name/report/${type}`,
    {
      path: () => `/api/v2/environments/${ORG}/${type.toLowerCase()}-env/report/${type}`,
      prepare: async () => void (await env(`${type.toLowerCase()}-env`, type)),
      send: (p) => cli.json('PUT', p, { artifacts: [{ digests: { 'app.jar': FP }, creationTimestamp: 5 }] }),
    },
  ]),
  [
    'PUT /api/v2/environments/:org/:env_name/report/azure-apps',
    {
      path: () => `/api/v2/environments/${ORG}/azure/report/azure-apps`,
      prepare: async () => void (await env('azure', 'azure-apps')),
      send: (p) =>
        cli.json('PUT', p, {
          artifacts: [
            {
              app_name: 'payments',
              app_kind: 'app,linux,container',
              digests_source: 'acr',
              digests: { 'acme.azurecr.io/payments:1': FP },
              creationTimestamp: 5,
            },
          ],
        }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/report/cloud-run',
    {
      path: () => `/api/v2/environments/${ORG}/run/report/cloud-run`,
      prepare: async () => void (await env('run', 'cloud-run')),
      send: (p) =>
        cli.json('PUT', p, {
          type: 'cloud-run',
          artifacts: [
            {
              digests: { 'gcr.io/acme/payments:1': FP },
              creationTimestamp: 5,
              kind: 'service',
              serviceName: 'payments',
              revisionName: 'payments-00001',
            },
          ],
        }),
    },
  ],
  [
    'PUT /api/v2/allowlists/:org/:env_name',
    {
      path: () => `/api/v2/allowlists/${ORG}/prod`,
      send: (p) =>
        cli.json('PUT', p, {
          artifact_fingerprint: FP,
          artifact_name: 'registry/api:1',
          description: 'trusted',
        }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/rename',
    {
      path: () => `/api/v2/environments/${ORG}/staging/rename`,
      prepare: async () => void (await env('staging', 'K8S')),
      send: (p) => cli.json('PUT', p, { new_name: 'staging-eu' }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/join',
    {
      path: () => `/api/v2/environments/${ORG}/all/join`,
      prepare: async () => void (await env('all', 'logical', { included_environments: ['prod'] })),
      send: (p) => cli.json('PUT', p, { physical_env_name: 'staging-eu' }),
    },
  ],
  [
    'PUT /api/v2/environments/:org/:env_name/archive',
    {
      path: () => `/api/v2/environments/${ORG}/retired/archive`,
      prepare: async () => void (await env('retired', 'K8S')),
      send: (p) => tf.put(rel(p)),
    },
  ],
  // Actions and notifications.
  [
    'PUT /api/v2/actions/:org/environments',
    {
      path: () => `/api/v2/actions/${ORG}/environments`,
      send: (p) =>
        cli.json('PUT', p, {
          name: 'prod-alerts',
          environments: ['prod'],
          triggers: ['ON_STARTED_ARTIFACT'],
          targets: [EMAIL_TARGET],
        }),
    },
  ],
  [
    'PUT /api/v2/actions/:org/flows',
    {
      path: () => `/api/v2/actions/${ORG}/flows`,
      send: (p) =>
        cli.json('PUT', p, {
          name: 'ci-hooks',
          flows: [FLOW],
          triggers: ['ON_STARTED_TRAIL'],
          targets: [EMAIL_TARGET],
        }),
    },
  ],
  [
    'DELETE /api/v2/actions/:org/:action_number',
    {
      path: () => `/api/v2/actions/${ORG}/${kept.flowAction}`,
      prepare: async () => {
        const listed = (await needs(cli.get(`/api/v2/actions/${ORG}`))).json as Array<{
          name: string;
          number: number;
        }>;
        kept.flowAction = listed.find((a) => a.name === 'ci-hooks')!.number;
      },
      send: (p) => cli.json('DELETE', p, null),
    },
  ],
  [
    'PUT /api/v2/organizations/:org/environments_notifications',
    {
      path: () => `/api/v2/organizations/${ORG}/environments_notifications`,
      send: (p) =>
        tf.put(rel(p), {
          name: 'tf',
          type: 'env',
          environments: ['prod'],
          triggers: ['ON_EXITED_ARTIFACT'],
          targets: [EMAIL_TARGET],
        }),
    },
  ],
  [
    'PUT /api/v2/organizations/:org/environments_notifications/:notification_number',
    {
      path: () => `/api/v2/organizations/${ORG}/environments_notifications/${kept.notification}`,
      prepare: async () => {
        const listed = (await needs(tf.get(`/organizations/${ORG}/environments_notifications`)))
          .json as Array<{
          name: string;
          number: number;
        }>;
        kept.notification = listed.find((a) => a.name === 'tf')!.number;
      },
      send: (p) =>
        tf.put(rel(p), {
          name: 'tf-renamed',
          type: 'env',
          environments: ['prod'],
          triggers: ['ON_EXITED_ARTIFACT'],
          targets: [EMAIL_TARGET],
        }),
    },
  ],
  [
    'DELETE /api/v2/organizations/:org/environments_notifications/:notification_number',
    {
      path: () => `/api/v2/organizations/${ORG}/environments_notifications/${kept.notification}`,
      send: (p) => tf.delete(rel(p)),
    },
  ],
];

interface Entry {
  at: number;
  actor: { kind: string; name: string; email: string | null; subject?: string };
  action: string;
  resource: string;
  request_id: string | null;
  ip: string | null;
}

/** The audit log's entries since `from` (epoch seconds), as an admin reads them: one page, the last. */
async function entriesSince(from: number, filters: Record<string, string> = {}): Promise<Entry[]> {
  const query = new URLSearchParams({ from: String(from), per_page: '100', ...filters });
  const res = await api.get(`/api/v2/audit-log/${ORG}?${query.toString()}`);
  expect(res.status, res.body).toBe(200);
  expect(res.json.next).toBeNull();
  return res.json.entries as Entry[];
}

const operationIds = new Map<string, string>();

beforeAll(async () => {
  t = await createTestApp();
  adminKey = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, adminKey);
  tf = terraformClient(t.app, adminKey);
  api = client(t.app, adminKey);
  const me = await api.get('/api/v2/me');
  expect(me.status, me.body).toBe(200);
  expect(me.json.kind).toBe('service_account');
  actorName = me.json.name;
  for (const r of t.app.apiRoutes) {
    const id = r.schema?.operationId;
    if (id) {
      operationIds.set(`${r.method} ${r.url}`, id);
    }
  }
});
afterAll(async () => t?.close());

describe('every write route leaves one audit entry naming its actor', () => {
  it('has a sample for every write route, and no sample for a route that is gone', () => {
    const writes = t.app.apiRoutes
      .filter((r) => r.method !== 'GET' && r.auth !== 'public' && r.url.includes(':org'))
      .map((r) => `${r.method} ${r.url}`);
    expect(writes.length).toBeGreaterThan(40);
    const sampled = new Set(SAMPLES.map(([key]) => key));
    expect(sampled.size, 'one sample per route').toBe(SAMPLES.length);
    const uncovered = writes.filter(
      (key) => !sampled.has(key) && !NOT_WRITES.has(key) && !NEVER_SUCCEEDS.has(key),
    );
    expect(uncovered, 'write routes without a sample in SAMPLES').toEqual([]);
    const stale = [...sampled, ...NEVER_SUCCEEDS].filter((key) => !writes.includes(key));
    expect(stale, 'samples of routes the app does not register').toEqual([]);
  });

  it.each(SAMPLES)('%s', async (key, sample) => {
    await sample.prepare?.();
    // Each write at its own second: the entries since then are this write's alone.
    t.clock.advance(1000);
    const from = t.clock.seconds();
    const path = sample.path();
    const res = await sample.send(path);
    expect(res.status, `${key}: ${res.body}`).toBeGreaterThanOrEqual(200);
    expect(res.status, `${key}: ${res.body}`).toBeLessThan(300);
    sample.keep?.(res);

    const action = operationIds.get(key);
    expect(action, `${key} has an operationId`).toBeTruthy();
    const entries = await entriesSince(from);
    expect(entries, `${key}: exactly one new entry`).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({
      at: from,
      action,
      actor: { kind: 'service_account', name: actorName, email: null },
      resource: path,
    });
    expect(typeof entry!.request_id).toBe('string');
    expect(entry!.request_id).not.toBe('');
    expect(entry!.ip).toBe('127.0.0.1');
    // The action filter finds it under the route's operationId and the actor's name.
    expect(await entriesSince(from, { action: action!, actor: actorName })).toEqual([entry]);
  });

  it('leaves no entry for a policy preview, which changes nothing', async () => {
    t.clock.advance(1000);
    const from = t.clock.seconds();
    const res = await cli.json('POST', `/api/v2/environments/${ORG}/prod/policy-preview`, { detach: [] });
    expect(res.status, res.body).toBe(200);
    expect(await entriesSince(from)).toEqual([]);
  });
});

describe('a write that fails leaves no entry', () => {
  // An organization of its own, so these run alone too.
  const ORG2 = 'refusals';
  let admin: ReturnType<typeof cliClient>;
  let adminApi: ReturnType<typeof client>;
  let reader: ReturnType<typeof cliClient>;
  let stranger: ReturnType<typeof cliClient>;
  beforeAll(async () => {
    const key = await t.seedKey(ORG2, 'admin');
    admin = cliClient(t.app, key);
    adminApi = client(t.app, key);
    reader = cliClient(t.app, await t.seedKey(ORG2, 'reader'));
    stranger = cliClient(t.app, await t.seedKey('elsewhere', 'admin'));
    await needs(
      admin.json('PUT', `/api/v2/organizations/${ORG2}/experimental_features`, {
        experimental_features_enabled: true,
      }),
    );
    await needs(admin.json('POST', `/api/v2/controls/${ORG2}`, { identifier: 'CTL-1', name: 'One' }));
    await needs(admin.json('PUT', `/api/v2/flows/${ORG2}`, { name: 'one', description: '' }));
    await needs(admin.json('PUT', `/api/v2/flows/${ORG2}`, { name: 'two', description: '' }));
    await needs(admin.json('PUT', `/api/v2/trails/${ORG2}/one`, { name: 't1' }));
    await needs(
      admin.json('POST', `/api/v2/service-accounts/${ORG2}`, {
        name: 'taken',
        description: '',
        privilege: 'reader',
      }),
    );
  });

  /** Each: what is refused, the status it must answer, what its body must say, and the request. */
  const failures: Array<[string, number, RegExp, () => Promise<Reply>]> = [
    [
      'an environment of an unknown type',
      400,
      /"body\.type"/,
      () => admin.json('PUT', `/api/v2/environments/${ORG2}`, { name: 'bad', type: 'K9S', description: '' }),
    ],
    [
      'an attestation of an unknown kind',
      400,
      /Unknown attestation type 'quantum'/,
      () =>
        admin.multipart('POST', `/api/v2/attestations/${ORG2}/one/trail/t1/quantum`, [
          { name: 'data_json', value: JSON.stringify({ attestation_name: 'q' }) },
        ]),
    ],
    [
      'a service account created under a name in use',
      400,
      /Service account 'taken' already exists/,
      () =>
        admin.json('POST', `/api/v2/service-accounts/${ORG2}`, {
          name: 'taken',
          description: '',
          privilege: 'reader',
        }),
    ],
    [
      'a flow renamed onto a name in use',
      400,
      /two/,
      () => admin.json('PUT', `/api/v2/flows/${ORG2}/one/rename`, { new_name: 'two' }),
    ],
    [
      'a Reader writing',
      403,
      /permission/,
      () => reader.json('PUT', `/api/v2/environments/${ORG2}`, { name: 'x', type: 'K8S', description: '' }),
    ],
    [
      "another organization's admin writing",
      403,
      /Access denied/,
      () => stranger.json('PATCH', `/api/v2/tags/${ORG2}/flow/one`, { set_tags: { evil: '1' } }),
    ],
    [
      'a report to a missing environment',
      404,
      /Environment named 'nope' does not exist/,
      () => admin.json('PUT', `/api/v2/environments/${ORG2}/nope/report/K8S`, { artifacts: [] }),
    ],
    [
      'tags on a missing flow',
      404,
      /nope/,
      () => admin.json('PATCH', `/api/v2/tags/${ORG2}/flow/nope`, { set_tags: { a: 'b' } }),
    ],
    [
      'a missing control updated',
      404,
      /NOPE/,
      () => admin.json('PUT', `/api/v2/controls/${ORG2}/NOPE`, { name: 'x' }),
    ],
    ['a missing action deleted', 404, /999/, () => admin.json('DELETE', `/api/v2/actions/${ORG2}/999`, null)],
    [
      'a control created twice',
      409,
      /A control with identifier 'CTL-1' already exists/,
      () => admin.json('POST', `/api/v2/controls/${ORG2}`, { identifier: 'CTL-1', name: 'again' }),
    ],
  ];

  it.each(failures)('%s: %i and no entry', async (_what, status, says, send) => {
    t.clock.advance(1000);
    const from = t.clock.seconds();
    const res = await send();
    expect(res.status, res.body).toBe(status);
    expect(res.body).toMatch(says);
    const log = await adminApi.get(`/api/v2/audit-log/${ORG2}?from=${from}`);
    expect(log.status).toBe(200);
    expect(log.json).toEqual({ entries: [], next: null, total_count: 0, total_count_capped: false });
  });

  it('still records the same writes once they succeed', async () => {
    t.clock.advance(1000);
    const from = t.clock.seconds();
    expect((await admin.json('PUT', `/api/v2/flows/${ORG2}/one/rename`, { new_name: 'three' })).status).toBe(
      200,
    );
    const log = await adminApi.get(`/api/v2/audit-log/${ORG2}?from=${from}`);
    expect(log.json.entries.map((e: Entry) => [e.action, e.resource])).toEqual([
      ['renameFlow', `/api/v2/flows/${ORG2}/one/rename`],
    ]);
  });
});

describe('reading the audit log', () => {
  // An organization of its own with eight writes a second apart: a flow, five by the admin, two by a member.
  const ORG3 = 'paged';
  const log = `/api/v2/audit-log/${ORG3}`;
  let admin: ReturnType<typeof client>;
  let adminName: string;
  let memberName: string;
  let times: number[];

  beforeAll(async () => {
    admin = client(t.app, await t.seedKey(ORG3, 'admin'));
    const member = client(t.app, await t.seedKey(ORG3, 'member'));
    adminName = (await admin.get('/api/v2/me')).json.name;
    memberName = (await member.get('/api/v2/me')).json.name;
    times = [];
    const write = async (
      who: ReturnType<typeof client>,
      send: (c: ReturnType<typeof client>) => Promise<Reply>,
    ) => {
      t.clock.advance(1000);
      times.push(t.clock.seconds());
      await needs(send(who));
    };
    await write(admin, (c) => c.put(`/api/v2/flows/${ORG3}`, { name: 'f', description: '' }));
    for (let i = 0; i < 5; i += 1) {
      await write(admin, (c) => c.patch(`/api/v2/tags/${ORG3}/flow/f`, { set_tags: { n: String(i) } }));
    }
    for (let i = 0; i < 2; i += 1) {
      await write(member, (c) => c.patch(`/api/v2/tags/${ORG3}/flow/f`, { set_tags: { m: String(i) } }));
    }
  });

  it('answers 403 to a Reader, a Member and the admin of another organization, showing nothing', async () => {
    const reader = client(t.app, await t.seedKey(ORG3, 'reader'));
    const member = client(t.app, await t.seedKey(ORG3, 'member'));
    const stranger = client(t.app, await t.seedKey('elsewhere', 'admin'));
    for (const [who, says] of [
      [reader, "You don't have permission to access this resource"],
      [member, "You don't have permission to access this resource"],
      [stranger, `Access denied to ${log}`],
    ] as const) {
      const res = await who.get(log);
      expect(res.status, res.body).toBe(403);
      expect(res.json).toEqual({ message: says });
    }
    expect((await admin.get(log)).status).toBe(200);
  });

  it('pages newest first through next links that keep per_page', async () => {
    const all = (await admin.get(`${log}?per_page=100`)).json;
    expect(all.next).toBeNull();
    expect(all.entries.map((e: Entry) => e.at)).toEqual([...times].reverse());
    expect([all.total_count, all.total_count_capped]).toEqual([times.length, false]);
    const seen: Entry[] = [];
    const links: string[] = [];
    let next: string | null = `http://verity.test${log}?per_page=2`;
    while (next !== null) {
      links.push(next);
      expect(next.startsWith('http://verity.test/api/v2/audit-log/paged?')).toBe(true);
      const page = await admin.get(next.slice('http://verity.test'.length));
      expect(page.status, page.body).toBe(200);
      expect(page.json.entries).toHaveLength(2);
      // every page says how many there are in all
      expect(page.json.total_count).toBe(times.length);
      seen.push(...page.json.entries);
      next = page.json.next;
    }
    expect(links.slice(1)).toEqual([
      `http://verity.test${log}?page=2&per_page=2`,
      `http://verity.test${log}?page=3&per_page=2`,
      `http://verity.test${log}?page=4&per_page=2`,
    ]);
    expect(seen).toEqual(all.entries);
    const past = await admin.get(`${log}?page=5&per_page=2`);
    expect(past.json).toEqual({
      entries: [],
      next: null,
      total_count: times.length,
      total_count_capped: false,
    });
  });

  it('keeps the filters in the next link', async () => {
    const first = (await admin.get(`${log}?actor=${adminName}&action=patchTags&from=${times[1]}&per_page=2`))
      .json;
    expect(first.entries.map((e: Entry) => e.at)).toEqual([times[5], times[4]]);
    // how many match the filters, not how many the log holds
    expect(first.total_count).toBe(5);
    const next = new URL(first.next);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      from: String(times[1]),
      actor: adminName,
      action: 'patchTags',
      page: '2',
      per_page: '2',
    });
    const second = (await admin.get(`${next.pathname}${next.search}`)).json;
    expect(second.entries.map((e: Entry) => e.at)).toEqual([times[3], times[2]]);
    const third = (await admin.get(new URL(second.next).pathname + new URL(second.next).search)).json;
    expect(third.entries.map((e: Entry) => e.at)).toEqual([times[1]]);
    expect(third.next).toBeNull();
  });

  it('filters by from and to, inclusive, in epoch seconds or ISO 8601', async () => {
    const between = (await admin.get(`${log}?from=${times[2]}&to=${times[4]}`)).json;
    expect(between.entries.map((e: Entry) => e.at)).toEqual([times[4], times[3], times[2]]);
    const iso = (s: number) => encodeURIComponent(new Date(s * 1000).toISOString());
    const isoBetween = (await admin.get(`${log}?from=${iso(times[2]!)}&to=${iso(times[4]!)}`)).json;
    expect(isoBetween).toEqual(between);
    const until = (await admin.get(`${log}?to=${times[0]}`)).json;
    expect(until.entries.map((e: Entry) => [e.at, e.action])).toEqual([[times[0], 'putFlowLegacy']]);
    const after = (await admin.get(`${log}?from=${times[7]! + 1}`)).json;
    expect(after).toEqual({ entries: [], next: null, total_count: 0, total_count_capped: false });
  });

  it('filters by actor, exactly', async () => {
    const byMember = (await admin.get(`${log}?actor=${memberName}`)).json.entries as Entry[];
    expect(byMember.map((e) => [e.at, e.actor])).toEqual([
      [times[7], { kind: 'service_account', name: memberName, email: null }],
      [times[6], { kind: 'service_account', name: memberName, email: null }],
    ]);
    const byAdmin = (await admin.get(`${log}?actor=${adminName}`)).json.entries as Entry[];
    expect(byAdmin.map((e) => e.at)).toEqual(times.slice(0, 6).reverse());
    expect((await admin.get(`${log}?actor=${adminName.slice(0, -1)}`)).json.entries).toEqual([]);
    expect((await admin.get(`${log}?actor=nobody`)).json).toEqual({
      entries: [],
      next: null,
      total_count: 0,
      total_count_capped: false,
    });
  });

  it('counts up to 10,000 entries and says when more match', async () => {
    const ORG5 = 'busy';
    const busy = client(t.app, await t.seedKey(ORG5, 'admin'));
    const org = await orgsRepository.findByName(t.db.db, ORG5);
    const at = new Date(t.clock.seconds() * 1000);
    // one entry fewer than the cap, then the entries that reach it and pass it
    const entries = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        org_id: org!.id,
        at,
        actor_kind: 'service_account' as const,
        actor_name: 'bulk',
        actor_email: null,
        actor_subject: null,
        action: 'bulkWrite',
        resource: `/api/v2/bulk/${i}`,
        request_id: null,
        ip: null,
      }));
    for (let i = 0; i < 9_999; i += 2_000) {
      await auditLogRepository.insert(t.db.db, entries(Math.min(2_000, 9_999 - i)));
    }
    const counted = async () => {
      const { total_count, total_count_capped } = (await busy.get(`/api/v2/audit-log/${ORG5}?per_page=1`))
        .json;
      return [total_count, total_count_capped];
    };
    expect(await counted()).toEqual([9_999, false]);
    await auditLogRepository.insert(t.db.db, entries(1));
    expect(await counted()).toEqual([10_000, false]);
    await auditLogRepository.insert(t.db.db, entries(1));
    expect(await counted()).toEqual([10_000, true]);
  });

  it('refuses a bad query with 400 naming the parameter', async () => {
    for (const [query, field] of [
      ['per_page=101', 'query.per_page'],
      ['per_page=0', 'query.per_page'],
      ['page=1001', 'query.page'],
      ['from=yesterday', 'query.from'],
      ['to=2026-13-45', 'query.to'],
      [`actor=${'a'.repeat(321)}`, 'query.actor'],
      ['colour=blue', 'query.colour'],
    ] as const) {
      const res = await admin.get(`${log}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.message, query).toBe('Input payload validation failed');
      expect(Object.keys(res.json.errors), `${query}: ${res.body}`).toContain(field);
    }
  });
});

describe('writes that take a shortcut or go in a batch', () => {
  const ORG4 = 'shortcuts';
  let admin: ReturnType<typeof cliClient>;
  let adminApi: ReturnType<typeof client>;
  beforeAll(async () => {
    const key = await t.seedKey(ORG4, 'admin');
    admin = cliClient(t.app, key);
    adminApi = client(t.app, key);
    await needs(
      admin.json('PUT', `/api/v2/environments/${ORG4}`, { name: 'prod', type: 'K8S', description: '' }),
    );
    await needs(admin.json('PUT', `/api/v2/flows/${ORG4}`, { name: 'ci', description: '' }));
    await needs(admin.json('PUT', `/api/v2/trails/${ORG4}/ci`, { name: 't1' }));
  });
  const since = async (from: number) => {
    const res = await adminApi.get(`/api/v2/audit-log/${ORG4}?from=${from}&per_page=100`);
    expect(res.status, res.body).toBe(200);
    return res.json.entries as Entry[];
  };

  it('records a report identical to the last one, which only moves the report time, once', async () => {
    const path = `/api/v2/environments/${ORG4}/prod/report/K8S`;
    const body = { artifacts: deployment('api', 'registry/api:1', FP, 1) };
    for (const answer of [
      'Snapshot #1 created',
      'No new snapshots to create',
      'No new snapshots to create',
    ]) {
      t.clock.advance(1000);
      const from = t.clock.seconds();
      const res = await admin.json('PUT', path, body);
      expect(res.status, res.body).toBe(200);
      expect(res.json).toBe(answer);
      expect((await since(from)).map((e) => [e.action, e.resource])).toEqual([['reportK8S', path]]);
    }
  });

  it('records each of concurrent attestations once, under its own request id', async () => {
    t.clock.advance(1000);
    const from = t.clock.seconds();
    const path = `/api/v2/attestations/${ORG4}/ci/trail/t1/generic`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        admin.multipart('POST', path, [
          {
            name: 'data_json',
            value: JSON.stringify({ attestation_name: `check-${i}`, is_compliant: true }),
          },
        ]),
      ),
    );
    for (const res of answers) {
      expect(res.status, res.body).toBe(201);
    }
    const entries = await since(from);
    expect(entries).toHaveLength(6);
    expect(new Set(entries.map((e) => e.request_id)).size).toBe(6);
    for (const e of entries) {
      expect(e).toMatchObject({ action: 'postGenericAttestation', resource: path });
    }
  });
});
