/**
 * A demo organization with a few weeks of history: flows with templates, trails with every kind
 * of attestation (some slots missing, one overridden), three K8S environments with dozens of
 * snapshots each, policies attached. Everything is sent as the kosli CLI sends it, through the
 * API (`inject`), while a clock the seeding controls walks from weeks ago to now.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { newId } from '../ids.js';
import type { Db } from '../storage/database.js';
import { orgsRepository } from '../storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../storage/repositories/service-accounts.js';
import { createServiceAccountKey } from '../usecases/api-keys.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

/** The service account the demo signs in with. */
export const DEMO_ACCOUNT = 'demo-admin';
const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;

/**
 * The server's clock during seeding: it stands where the seeding puts it, and follows the real
 * time once released, so the same server can keep serving afterwards.
 */
export class DemoClock {
  private fixed: number | undefined;
  now = (): Date => new Date(this.fixed ?? Date.now());
  set(at: number): void {
    this.fixed = at;
  }
  release(): void {
    this.fixed = undefined;
  }
}

/** Thrown when the organization already exists: the demo never writes into a used org. */
export class DemoOrgExistsError extends Error {
  constructor(readonly org: string) {
    super(`organization '${org}' already exists`);
    this.name = 'DemoOrgExistsError';
  }
}

export interface SeedDemoOptions {
  app: FastifyInstance;
  db: Db;
  /** The clock `app` was built with. */
  clock: DemoClock;
  org?: string;
  /** Days of history (default 28). Fewer days seed faster with the same kinds of data. */
  days?: number;
  /** Where history ends (default: the real time now, less a few minutes). */
  end?: Date;
}

export interface DemoSummary {
  org: string;
  apiKey: string;
  flows: string[];
  trails: number;
  artifacts: number;
  attestations: number;
  environments: Record<string, number>;
  policies: string[];
}

const sha = (...parts: Array<string | number>): string =>
  createHash('sha256').update(parts.join(':')).digest('hex');
const seconds = (ms: number): number => Math.floor(ms / 1000);

/** A multipart form as Go's mime/multipart writes it for the kosli CLI. */
function goMultipart(
  parts: Array<{ name: string; value: string } | { name: string; filename: string; content: string }>,
) {
  const boundary = sha('boundary', Math.random()).slice(0, 60);
  const chunks: string[] = [];
  for (const p of parts) {
    chunks.push(`--${boundary}\r\n`);
    if ('value' in p) chunks.push(`Content-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`);
    else
      chunks.push(
        `Content-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n` +
          `Content-Type: application/octet-stream\r\n\r\n${p.content}\r\n`,
      );
  }
  chunks.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(chunks.join('')), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** `junit_results` as `kosli attest junit` reads them from the XML: one entry per `<testsuite>`. */
export function junitResults(xml: string) {
  return [...xml.matchAll(/<testsuite\s([^>]*)>/g)].map((m) => {
    const attrs: Record<string, string | undefined> = Object.fromEntries(
      [...m[1]!.matchAll(/([\w:.-]+)="([^"]*)"/g)].map((a): [string, string] => [a[1]!, a[2]!]),
    );
    const int = (k: string) => Number.parseInt(attrs[k] ?? '0', 10) || 0;
    const ts = attrs.timestamp
      ? Date.parse(attrs.timestamp.endsWith('Z') ? attrs.timestamp : `${attrs.timestamp}Z`)
      : NaN;
    return {
      name: attrs.name ?? '',
      failures: int('failures'),
      errors: int('errors'),
      skipped: int('skipped'),
      total: int('tests'),
      duration: Number.parseFloat(attrs.time ?? '0') || 0,
      ...(Number.isFinite(ts) ? { timestamp: ts / 1000 } : {}),
    };
  });
}

interface Service {
  flow: string;
  templateName: string;
  image: string;
  namespace: string;
  repo: string;
}

const PAYMENTS: Service = {
  flow: 'payments',
  templateName: 'payments-api',
  image: 'ghcr.io/acme/payments-api',
  namespace: 'payments',
  repo: 'acme/payments',
};
const FRONTEND: Service = {
  flow: 'frontend',
  templateName: 'web',
  image: 'ghcr.io/acme/web',
  namespace: 'web',
  repo: 'acme/web',
};
/** A small CycloneDX 1.5 SBOM of a payments image, as `syft -o cyclonedx-json` writes one. */
function cycloneDx(b: Build): string {
  const components: Array<[string, string, string]> = [
    ['lodash', '4.17.20', 'pkg:npm/lodash@4.17.20'],
    ['express', '4.18.2', 'pkg:npm/express@4.18.2'],
    ['jsonwebtoken', '9.0.0', 'pkg:npm/jsonwebtoken@9.0.0'],
    ['pg', '8.11.3', 'pkg:npm/pg@8.11.3'],
    ['log4j-core', '2.14.1', 'pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1'],
    ['openssl', '3.0.11', 'pkg:deb/debian/openssl@3.0.11-1~deb12u2?arch=amd64&distro=debian-12'],
    ['zlib', '1.2.13', 'pkg:deb/debian/zlib1g@1:1.2.13.dfsg-1?arch=amd64&distro=debian-12'],
  ];
  return JSON.stringify({
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${b.fingerprint.slice(0, 8)}-${b.fingerprint.slice(8, 12)}-4${b.fingerprint.slice(13, 16)}-8${b.fingerprint.slice(17, 20)}-${b.fingerprint.slice(20, 32)}`,
    version: 1,
    metadata: {
      timestamp: new Date(b.at).toISOString(),
      tools: { components: [{ type: 'application', name: 'syft', version: '1.4.1' }] },
      component: { type: 'container', name: `${b.service.image}:${b.version}`, version: b.version },
    },
    components: components.map(([name, version, purl]) => ({
      type: 'library',
      'bom-ref': purl,
      name,
      version,
      purl,
    })),
  });
}

const REDIS = { image: 'docker.io/library/redis:7.2.4', fingerprint: sha('redis:7.2.4') };
const PEOPLE = ['ada', 'grace', 'linus', 'margaret', 'ken', 'barbara'];

interface Build {
  service: Service;
  number: number;
  version: string;
  at: number;
  fingerprint: string;
  commit: string;
  /** Unit tests fail: the trail is non-compliant. */
  failingTests?: boolean;
  /** The dependency scan finds a medium issue, overridden as accepted. */
  overriddenScan?: boolean;
  /** The generic security review was never reported: the trail is incomplete. */
  noReview?: boolean;
  /** A CycloneDX SBOM is attested to the artifact: the exposure page finds its components. */
  sbom?: boolean;
  promote: { staging: boolean; prod: boolean };
}

/** Seeds the demo organization through `app`; returns its name, an admin key and what it made. */
export async function seedDemo(options: SeedDemoOptions): Promise<DemoSummary> {
  try {
    return await seedHistory(options);
  } finally {
    // whatever happened, the server goes on with the real time
    options.clock.release();
  }
}

async function seedHistory(options: SeedDemoOptions): Promise<DemoSummary> {
  const { app, db, clock } = options;
  const org = options.org ?? 'acme';
  const days = Math.max(4, Math.floor(options.days ?? 28));
  const end = (options.end ?? new Date(Date.now() - 5 * MINUTE)).getTime();
  const start = end - days * DAY;
  const { org: orgRow, created } = await orgsRepository.ensure(db, {
    id: newId(),
    name: org,
    display_name: org === 'acme' ? 'Acme Corp' : org,
  });
  if (!created) throw new DemoOrgExistsError(org);
  clock.set(start - HOUR);
  const account = await serviceAccountsRepository.insert(db, {
    org_id: orgRow.id,
    id: newId(),
    name: DEMO_ACCOUNT,
    description: 'Demo administrator (npm run demo)',
    privilege: 'admin',
    created_by_principal: 'system',
    created_by_name: 'demo',
  });
  if (!account) throw new Error(`service account '${DEMO_ACCOUNT}' exists in a new organization`);
  const { key: apiKey } = await createServiceAccountKey(db, {
    orgId: orgRow.id,
    serviceAccountId: account.id,
    description: 'demo sign-in key',
    expiresAt: null,
    now: clock.now(),
  });

  const counts = { trails: 0, artifacts: 0, attestations: 0 };
  const snapshots: Record<string, number> = { dev: 0, staging: 0, prod: 0 };

  // ---- the wire, as the kosli CLI speaks it ----
  const send = async (
    method: 'GET' | 'PUT' | 'POST' | 'PATCH',
    url: string,
    body?: Buffer | string,
    contentType?: string,
  ) => {
    const res = await app.inject({
      method,
      url: `/api/v2${url}`,
      headers: {
        authorization: `Bearer ${apiKey}`,
        'user-agent': 'Kosli/v2.38.0',
        'content-type': contentType ?? 'application/json; charset=utf-8',
      },
      ...(body !== undefined ? { payload: body } : {}),
    });
    if (res.statusCode !== 200 && res.statusCode !== 201)
      throw new Error(`demo seeding: ${method} /api/v2${url} answered ${res.statusCode}: ${res.body}`);
    return res.json<unknown>();
  };
  const json = (method: 'PUT' | 'POST' | 'PATCH', url: string, payload: unknown = null) =>
    send(method, url, JSON.stringify(payload));
  const form = (method: 'PUT' | 'POST', url: string, parts: Parameters<typeof goMultipart>[0]) => {
    const { body, contentType } = goMultipart(parts);
    return send(method, url, body, contentType);
  };
  const at = (ms: number) => clock.set(ms);

  const commitInfo = (service: Service, commit: string, when: number, message: string, author: string) => ({
    sha1: commit,
    message,
    author: `${author[0]!.toUpperCase()}${author.slice(1)} <${author}@acme.example>`,
    timestamp: seconds(when),
    branch: 'main',
    url: `https://github.com/${service.repo}/commit/${commit}`,
  });
  const repoInfo = (service: Service) => ({
    url: `https://github.com/${service.repo}`,
    name: service.repo,
    id: String(100000 + service.repo.length),
    provider: 'github',
  });
  const attest = (
    flow: string,
    trail: string,
    kind: string,
    data: Record<string, unknown>,
    file?: { filename: string; content: string },
  ) => {
    counts.attestations += 1;
    return form('POST', `/attestations/${org}/${flow}/trail/${trail}/${kind}`, [
      { name: 'data_json', value: JSON.stringify({ user_data: {}, ...data }) },
      ...(file ? [{ name: 'attachment_file', ...file }] : []),
    ]);
  };
  const sarif = (
    tool: string,
    findings: Array<{ id: string; message: string; level: string; uri: string; line: number }>,
  ) =>
    JSON.stringify({
      version: '2.1.0',
      $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
      runs: [
        {
          tool: { driver: { name: tool, version: '1.1290.0' } },
          results: findings.map((f) => ({
            ruleId: f.id,
            level: f.level,
            message: { text: f.message },
            locations: [
              { physicalLocation: { artifactLocation: { uri: f.uri }, region: { startLine: f.line } } },
            ],
          })),
        },
      ],
    });

  // ---- organization-wide setup ----
  await form('POST', `/custom-attestation-types/${org}`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        name: 'person',
        description: 'The person accountable for a release',
        summary: [
          { name: 'Name', expression: '.name' },
          { name: 'Age', expression: '.age' },
        ],
      }),
    },
    { name: 'type_schema', filename: 'person-schema.json', content: fixture('person-schema.json') },
  ]);
  await form('POST', `/custom-attestation-types/${org}`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        name: 'four-eyes-result',
        description: 'A second person reviewed every change',
        evaluator: { content_type: 'jq', rules: ['.approved == true', '.author != .reviewer'] },
        summary: [
          { name: 'Author', expression: '.author' },
          { name: 'Reviewer', expression: '.reviewer' },
          { name: 'Approved', expression: '.approved' },
        ],
      }),
    },
    { name: 'type_schema', filename: 'four-eyes-schema.json', content: fixture('four-eyes-schema.json') },
  ]);

  const createFlow = async (
    name: string,
    description: string,
    templateFile: string,
    tags: Record<string, string>,
  ) => {
    await form('PUT', `/flows/${org}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name, description }) },
      { name: 'template_file', filename: basename(templateFile), content: fixture(templateFile) },
    ]);
    await json('PATCH', `/tags/${org}/flow/${name}`, { set_tags: tags, remove_tags: [] });
  };
  await createFlow('payments', 'Payments API: build, test, scan and ship', 'payments-template.yml', {
    team: 'payments',
    'risk-level': 'high',
  });
  await createFlow('frontend', 'The customer web app', 'frontend-template.yml', {
    team: 'web',
    'risk-level': 'medium',
  });
  await createFlow('cli', 'The command-line client, built on every merge', 'main-flow-template.yml', {
    team: 'platform',
  });
  await createFlow(
    'cli-release',
    'Released binaries and packages of the command-line client',
    'release-flow-template.yml',
    {
      team: 'platform',
    },
  );

  const policyPut = (name: string, description: string, file: string) =>
    form('PUT', `/policies/${org}`, [
      { name: 'payload', value: JSON.stringify({ name, description, comment: '', type: 'env' }) },
      { name: 'policy_file', filename: file, content: fixture(file) },
    ]);
  await policyPut(
    'build-provenance',
    'Everything running was built by a known pipeline whose trail is compliant',
    'test-policy.yml',
  );
  await policyPut('tested-code', 'Everything running has unit-test evidence', 'tested-code-policy.yml');

  const envs = [
    {
      name: 'dev',
      description: 'Development cluster: every build of main',
      tags: { tier: 'development', region: 'eu-north-1' },
    },
    {
      name: 'staging',
      description: 'Pre-production: release candidates',
      tags: { tier: 'staging', region: 'eu-north-1' },
    },
    {
      name: 'prod',
      description: 'Production cluster serving customers',
      tags: { tier: 'production', region: 'eu-west-1', 'on-call': 'sre' },
    },
  ] as const;
  for (const env of envs) {
    await json('PUT', `/environments/${org}`, { name: env.name, type: 'K8S', description: env.description });
    await json('PATCH', `/tags/${org}/env/${env.name}`, { set_tags: env.tags, remove_tags: [] });
  }
  await json('POST', `/environments/${org}/staging/policies`, { policy_names: ['build-provenance'] });
  await json('POST', `/environments/${org}/prod/policies`, {
    policy_names: ['build-provenance', 'tested-code'],
  });

  // ---- the plan: builds of two services, promoted through dev, staging and prod ----
  const builds: Build[] = [];
  const plan = (service: Service, everyDays: number, offsetHours: number, major: string) => {
    let n = 0;
    for (let t = start + offsetHours * HOUR; t < end - 6 * HOUR; t += everyDays * DAY) {
      n += 1;
      const fresh = t > end - 2 * DAY;
      builds.push({
        service,
        number: n,
        version: `${major}.${n}`,
        at: t,
        fingerprint: sha(service.image, n),
        commit: sha('commit', service.repo, n).slice(0, 40),
        promote: { staging: t < end - 20 * HOUR, prod: !fresh && n % 2 === 1 },
      });
    }
  };
  plan(PAYMENTS, 2, 1, '1.4');
  plan(FRONTEND, 3, 4, '2.8');
  // A few stories the console should tell:
  const payments = builds.filter((b) => b.service === PAYMENTS);
  const frontend = builds.filter((b) => b.service === FRONTEND);
  // failing unit tests reach staging (non-compliant there) and are never promoted to prod
  const failing = payments[Math.min(payments.length - 2, Math.max(1, Math.floor(payments.length / 3)))]!;
  failing.failingTests = true;
  failing.promote.prod = false;
  // a dependency finding accepted by security: the scan is overridden
  const overridden = payments[Math.min(payments.length - 1, 2)]!;
  if (overridden !== failing) overridden.overriddenScan = true;
  // the newest frontend build waits for its security review: staging is non-compliant now
  const awaiting = frontend[frontend.length - 1]!;
  awaiting.noReview = true;
  awaiting.promote = { staging: true, prod: false };
  // two payments builds carry an SBOM: the overridden one, and the one still running in prod
  overridden.sbom = true;
  const inProd = payments.filter((b) => b.promote.prod);
  if (inProd.length > 0) inProd[inProd.length - 1]!.sbom = true;

  const reportBuild = async (b: Build) => {
    const s = b.service;
    const trail = `${s.flow}-${b.number}`;
    const author = PEOPLE[b.number % PEOPLE.length]!;
    const reviewer = PEOPLE[(b.number + 2) % PEOPLE.length]!;
    const message = `${s.templateName}: ${['add refunds endpoint', 'faster checkout', 'fix rounding', 'upgrade dependencies', 'new dashboard', 'retry idempotently'][b.number % 6]}`;
    const gci = commitInfo(s, b.commit, b.at - 20 * MINUTE, message, author);
    const origin = `https://github.com/${s.repo}/actions/runs/${7_000_000 + b.number * 13}`;
    at(b.at);
    await form('PUT', `/trails/${org}/${s.flow}`, [
      {
        name: 'data_json',
        value: JSON.stringify({
          name: trail,
          description: `Build ${b.version} of ${s.templateName}`,
          git_commit_info: gci,
          repo_info: repoInfo(s),
          origin_url: origin,
        }),
      },
    ]);
    counts.trails += 1;
    at(b.at + 2 * MINUTE);
    await attest(s.flow, trail, 'pull_request', {
      attestation_name: 'pull-request',
      git_commit_info: gci,
      origin_url: origin,
      git_provider: 'github',
      pull_requests: [
        {
          url: `https://github.com/${s.repo}/pull/${100 + b.number}`,
          state: 'MERGED',
          merge_commit: b.commit,
          author,
          title: message,
          head_ref: `feature/${b.number}`,
          base_ref: 'main',
          created_at: seconds(b.at - DAY),
          merged_at: seconds(b.at - 25 * MINUTE),
          approvers: [{ username: reviewer, state: 'APPROVED', timestamp: seconds(b.at - 2 * HOUR) }],
          commits: [
            {
              sha1: b.commit,
              message,
              author,
              timestamp: seconds(b.at - 3 * HOUR),
              branch: `feature/${b.number}`,
            },
          ],
        },
      ],
    });
    if (s === PAYMENTS) {
      const issue = `PAY-${200 + b.number}`;
      await attest(s.flow, trail, 'jira', {
        attestation_name: 'jira-ticket',
        git_commit_info: gci,
        origin_url: origin,
        jira_results: [
          {
            issue_id: issue,
            issue_url: `https://acme.atlassian.net/browse/${issue}`,
            issue_exists: true,
            issue_fields: { summary: message, status: { name: 'Done' } },
          },
        ],
      });
    }
    at(b.at + 8 * MINUTE);
    await json('POST', `/artifacts/${org}/${s.flow}`, {
      fingerprint: b.fingerprint,
      filename: `${s.image}:${b.version}`,
      git_commit: b.commit,
      git_commit_info: gci,
      repo_info: repoInfo(s),
      build_url: origin,
      commit_url: gci.url,
      repo_url: `https://github.com/${s.repo}`,
      template_reference_name: s.templateName,
      trail_name: trail,
    });
    counts.artifacts += 1;
    at(b.at + 10 * MINUTE);
    const xml = b.failingTests
      ? fixture('payments-failing-junit.xml')
      : fixture(
          b.number % 2 === 0 ? 'surefire_maven_ancient_junit_report.xml' : 'report_junit_delta_timestamp.xml',
        );
    await attest(
      s.flow,
      trail,
      'junit',
      {
        attestation_name: 'unit-tests',
        artifact_fingerprint: b.fingerprint,
        git_commit_info: gci,
        origin_url: origin,
        junit_results: junitResults(xml),
      },
      { filename: 'junit.xml', content: xml },
    );
    if (b.sbom) {
      const bom = cycloneDx(b);
      await attest(
        s.flow,
        trail,
        'generic',
        {
          attestation_name: 'sbom',
          artifact_fingerprint: b.fingerprint,
          git_commit_info: gci,
          origin_url: origin,
          is_compliant: true,
          description: 'CycloneDX SBOM of the image',
        },
        { filename: 'bom.cdx.json', content: bom },
      );
    }
    if (s === PAYMENTS) {
      const findings = b.overriddenScan
        ? [
            {
              id: 'SNYK-JS-LODASH-6139239',
              message: 'Prototype Pollution in lodash@4.17.20',
              level: 'warning',
              uri: 'package-lock.json',
              line: 812,
            },
          ]
        : [];
      const report = sarif('Snyk Open Source', findings);
      await attest(
        s.flow,
        trail,
        'snyk',
        {
          attestation_name: 'dependency-scan',
          artifact_fingerprint: b.fingerprint,
          git_commit_info: gci,
          origin_url: origin,
          snyk_results: {
            schema_version: 1,
            tool: { name: 'Snyk Open Source', version: '1.1290.0' },
            results: [
              {
                high_count: 0,
                medium_count: findings.length,
                low_count: 0,
                ...(findings.length
                  ? {
                      medium: findings.map((f) => ({
                        id: f.id,
                        message: f.message,
                        locations: [{ uri: f.uri, lines: String(f.line) }],
                        priority_score: 512,
                      })),
                    }
                  : {}),
              },
            ],
          },
        },
        { filename: 'snyk.sarif', content: report },
      );
      await attest(s.flow, trail, 'sonar', {
        attestation_name: 'code-quality',
        artifact_fingerprint: b.fingerprint,
        origin_url: origin,
        sonar_results: {
          serverUrl: 'https://sonar.acme.example',
          taskId: `AY${b.number}`,
          status: 'SUCCESS',
          analysedAt: new Date(b.at + 11 * MINUTE).toISOString().replace('Z', '+0000'),
          revision: b.commit,
          project: {
            key: 'payments-api',
            name: 'Payments API',
            url: 'https://sonar.acme.example/dashboard?id=payments-api',
          },
          branch: { name: 'main', type: 'BRANCH' },
          qualityGate: {
            status: 'OK',
            conditions: [
              {
                metric: 'new_coverage',
                errorThreshold: '80',
                operator: 'LESS_THAN',
                value: String(82 + (b.number % 12)),
                status: 'OK',
              },
              {
                metric: 'new_duplicated_lines_density',
                errorThreshold: '3',
                operator: 'GREATER_THAN',
                value: '0.8',
                status: 'OK',
              },
            ],
          },
        },
      });
      await attest(s.flow, trail, 'custom', {
        attestation_name: 'release-owner',
        artifact_fingerprint: b.fingerprint,
        origin_url: origin,
        type_name: 'person',
        attestation_data: { name: reviewer[0]!.toUpperCase() + reviewer.slice(1), age: 30 + (b.number % 20) },
      });
      if (b.overriddenScan) {
        at(b.at + 40 * MINUTE);
        await json('POST', `/attestations/${org}/${s.flow}/trail/${trail}/override`, {
          attestation_name: 'dependency-scan',
          artifact_fingerprint: b.fingerprint,
          reason:
            'SNYK-JS-LODASH-6139239 is not reachable from our code; accepted by security until the next base image',
          new_compliance_status: true,
          original_attestation_type: 'snyk',
          user_data: {},
        });
        counts.attestations += 1;
      }
    } else if (!b.noReview) {
      await attest(s.flow, trail, 'generic', {
        attestation_name: 'security-review',
        artifact_fingerprint: b.fingerprint,
        origin_url: origin,
        is_compliant: true,
        description: `Threat model reviewed by ${reviewer}`,
      });
    }
  };

  // ---- environments: what runs where, reported as `kosli snapshot k8s` does ----
  type Running = {
    image: string;
    fingerprint: string;
    replicas: number;
    since: number;
    name: string;
    namespace: string;
  };
  const state: Record<string, Map<string, Running>> = { dev: new Map(), staging: new Map(), prod: new Map() };
  const replicasOf: Record<string, number> = { dev: 1, staging: 2, prod: 3 };
  const report = async (env: string) => {
    const artifacts = [...state[env]!.values()].flatMap((r) =>
      Array.from({ length: r.replicas }, (_, i) => ({
        podName: `${r.name}-${r.fingerprint.slice(0, 10)}-${sha(env, r.fingerprint, i).slice(0, 5)}`,
        namespace: r.namespace,
        digests: { [r.image]: r.fingerprint },
        creationTimestamp: seconds(r.since) + i,
        owners: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: `${r.name}-${r.fingerprint.slice(0, 10)}`,
            uid: sha('uid', env, r.fingerprint).replace(
              /^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/,
              '$1-$2-$3-$4-$5',
            ),
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      })),
    );
    const answer = await json('PUT', `/environments/${org}/${env}/report/K8S`, { artifacts });
    if (typeof answer === 'string' && /created/i.test(answer)) snapshots[env]! += 1;
  };
  const rollOut = async (env: string, b: Build, when: number) => {
    const key = b.service.templateName;
    const next: Running = {
      image: `${b.service.image}:${b.version}`,
      fingerprint: b.fingerprint,
      replicas: replicasOf[env]!,
      since: when,
      name: key,
      namespace: b.service.namespace,
    };
    const current = state[env]!;
    if (current.has(key)) {
      // a rolling update: old and new side by side, then only the new one
      current.set(`${key}@next`, next);
      at(when);
      await report(env);
      current.delete(`${key}@next`);
    }
    current.set(key, next);
    at(when + 4 * MINUTE);
    await report(env);
  };

  type Step = { at: number; run: () => Promise<void> };
  const steps: Step[] = [];
  for (const b of builds) {
    steps.push({ at: b.at, run: () => reportBuild(b) });
    steps.push({ at: b.at + HOUR, run: () => rollOut('dev', b, b.at + HOUR) });
    if (b.promote.staging)
      steps.push({ at: b.at + 18 * HOUR, run: () => rollOut('staging', b, b.at + 18 * HOUR) });
    if (b.promote.prod)
      steps.push({ at: b.at + 2 * DAY + 5 * HOUR, run: () => rollOut('prod', b, b.at + 2 * DAY + 5 * HOUR) });
  }
  // redis runs in dev from the start; in prod someone ran it for two days without provenance
  steps.push({
    at: start + 2 * HOUR,
    run: async () => {
      state.dev!.set('redis', {
        image: REDIS.image,
        fingerprint: REDIS.fingerprint,
        replicas: 1,
        since: start + 2 * HOUR,
        name: 'redis',
        namespace: 'data',
      });
      at(start + 2 * HOUR);
      await report('dev');
    },
  });
  const redisProd = start + Math.floor(days * 0.35) * DAY + 15 * HOUR;
  steps.push({
    at: redisProd,
    run: async () => {
      state.prod!.set('redis', {
        image: REDIS.image,
        fingerprint: REDIS.fingerprint,
        replicas: 1,
        since: redisProd,
        name: 'redis',
        namespace: 'data',
      });
      at(redisProd);
      await report('prod');
    },
  });
  steps.push({
    at: redisProd + 2 * DAY,
    run: async () => {
      state.prod!.delete('redis');
      at(redisProd + 2 * DAY);
      await report('prod');
    },
  });
  // the reporter runs every few minutes; scaling alone makes no snapshot
  for (let t = start + 12 * HOUR; t < end; t += 3 * DAY) {
    steps.push({
      at: t,
      run: async () => {
        const web = state.prod!.get('web');
        if (!web) return;
        web.replicas = web.replicas === 3 ? 5 : 3;
        at(t);
        await report('prod');
      },
    });
  }
  steps.sort((a, b) => a.at - b.at);
  for (const step of steps) await step.run();

  // ---- the command-line client's flows: not deployed, with missing and unbound slots ----
  await seedCliFlows({ org, end, at, form, json, attest, commitInfo, counts });

  // the reporters' latest beat: nothing changed, only the last report time moves
  at(end);
  for (const env of Object.keys(state)) await report(env);
  return {
    org,
    apiKey,
    flows: ['payments', 'frontend', 'cli', 'cli-release'],
    ...counts,
    environments: snapshots,
    policies: ['build-provenance', 'tested-code'],
  };
}

interface CliContext {
  org: string;
  end: number;
  at: (ms: number) => void;
  form: (method: 'PUT' | 'POST', url: string, parts: Parameters<typeof goMultipart>[0]) => Promise<unknown>;
  json: (method: 'PUT' | 'POST' | 'PATCH', url: string, payload?: unknown) => Promise<unknown>;
  attest: (
    flow: string,
    trail: string,
    kind: string,
    data: Record<string, unknown>,
    file?: { filename: string; content: string },
  ) => Promise<unknown>;
  commitInfo: (
    service: Service,
    commit: string,
    when: number,
    message: string,
    author: string,
  ) => Record<string, unknown> & { url: string };
  counts: { trails: number; artifacts: number; attestations: number };
}

async function seedCliFlows(c: CliContext): Promise<void> {
  const { org, at, form, json, attest, counts } = c;
  const service: Service = {
    flow: 'cli',
    templateName: 'cli-docker',
    image: 'ghcr.io/acme/cli',
    namespace: 'tools',
    repo: 'acme/cli',
  };
  const generic = (flow: string, trail: string, name: string, extra: Record<string, unknown> = {}) =>
    attest(flow, trail, 'generic', { attestation_name: name, is_compliant: true, ...extra });
  const cleanScan = JSON.stringify({
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'Snyk Code', version: '1.1290.0' } }, results: [] }],
  });
  const snyk = (name: string, extra: Record<string, unknown>) => ({
    attestation_name: name,
    snyk_results: {
      schema_version: 1,
      tool: { name: 'Snyk Code', version: '1.1290.0' },
      results: [{ high_count: 0, medium_count: 0, low_count: 0 }],
    },
    ...extra,
  });

  const merges = 4;
  for (let n = 1; n <= merges; n++) {
    const when = c.end - (merges - n + 1) * 26 * HOUR;
    const commit = sha('commit', 'acme/cli', n).slice(0, 40);
    const gci = c.commitInfo(
      service,
      commit,
      when - 15 * MINUTE,
      `cli: ${['add --output json', 'retry on 503', 'faster fingerprinting', 'new search command'][n - 1]}`,
      PEOPLE[n]!,
    );
    const trail = `main-${n}`;
    at(when);
    await form('PUT', `/trails/${org}/cli`, [
      {
        name: 'data_json',
        value: JSON.stringify({ name: trail, description: `Merge ${n} to main`, git_commit_info: gci }),
      },
    ]);
    counts.trails += 1;
    at(when + 3 * MINUTE);
    const xml = fixture('report_junit_delta_timestamp.xml');
    await attest(
      'cli',
      trail,
      'junit',
      { attestation_name: 'test', git_commit_info: gci, junit_results: junitResults(xml) },
      { filename: 'junit.xml', content: xml },
    );
    await generic('cli', trail, 'lint');
    await attest('cli', trail, 'snyk', snyk('snyk-code-test', {}), {
      filename: 'code.sarif',
      content: cleanScan,
    });
    if (n !== 2)
      await attest('cli', trail, 'snyk', snyk('snyk-dependency-test', {}), {
        filename: 'deps.sarif',
        content: cleanScan,
      });
    await attest('cli', trail, 'pull_request', {
      attestation_name: 'pr',
      git_commit_info: gci,
      git_provider: 'github',
      pull_requests:
        n === 3
          ? []
          : [
              {
                url: `https://github.com/acme/cli/pull/${40 + n}`,
                state: 'MERGED',
                merge_commit: commit,
                author: PEOPLE[n]!,
                approvers: [{ username: PEOPLE[n + 1]! }],
                commits: [],
              },
            ],
    });
    await attest('cli', trail, 'custom', {
      attestation_name: 'four-eyes-result',
      type_name: 'four-eyes-result',
      attestation_data: { author: PEOPLE[n]!, reviewer: PEOPLE[n + 1]!, approved: n !== 4 },
    });
    if (n === 3) {
      // no pull request found: overridden by the release manager
      await json('POST', `/attestations/${org}/cli/trail/${trail}/override`, {
        attestation_name: 'pr',
        reason: 'Hotfix pushed during the incident INC-311; reviewed after the fact in PR #44',
        new_compliance_status: true,
        original_attestation_type: 'pull_request',
        user_data: {},
      });
      counts.attestations += 1;
    }
    at(when + 9 * MINUTE);
    const fingerprint = sha('ghcr.io/acme/cli', n);
    if (n !== 1) {
      await json('POST', `/artifacts/${org}/cli`, {
        fingerprint,
        filename: `ghcr.io/acme/cli:0.${n}.0`,
        git_commit: commit,
        git_commit_info: gci,
        build_url: `https://github.com/acme/cli/actions/runs/${8_100_000 + n}`,
        commit_url: gci.url,
        repo_url: 'https://github.com/acme/cli',
        template_reference_name: 'cli-docker',
        trail_name: trail,
      });
      counts.artifacts += 1;
      await generic('cli', trail, 'smoke-test', { artifact_fingerprint: fingerprint, is_compliant: n !== 3 });
      await attest('cli', trail, 'snyk', snyk('snyk-container-test', { artifact_fingerprint: fingerprint }), {
        filename: 'container.sarif',
        content: cleanScan,
      });
    }
  }

  // a release: some binaries reported, others never; one SBOM for the wrong commit, one unbound
  const when = c.end - 3 * HOUR;
  const commit = sha('commit', 'acme/cli', 'v0.4.0').slice(0, 40);
  const gci = c.commitInfo(service, commit, when - 30 * MINUTE, 'Release v0.4.0', 'grace');
  const trail = 'v0.4.0';
  at(when);
  await form('PUT', `/trails/${org}/cli-release`, [
    {
      name: 'data_json',
      value: JSON.stringify({ name: trail, description: 'Release v0.4.0', git_commit_info: gci }),
    },
  ]);
  counts.trails += 1;
  at(when + 5 * MINUTE);
  const xml = fixture('surefire_maven_ancient_junit_report.xml');
  await attest(
    'cli-release',
    trail,
    'junit',
    { attestation_name: 'test', git_commit_info: gci, junit_results: junitResults(xml) },
    { filename: 'junit.xml', content: xml },
  );
  await generic('cli-release', trail, 'lint');
  const reported = [
    'cli-docker',
    'linux-amd64',
    'linux-arm64',
    'darwin-arm64',
    'darwin-amd64',
    'windows-amd64',
    'deb-pkg-amd64',
    'rpm-pkg-amd64',
  ];
  for (const name of reported) {
    const fingerprint = sha('cli-release', trail, name);
    await json('POST', `/artifacts/${org}/cli-release`, {
      fingerprint,
      filename: name === 'cli-docker' ? 'ghcr.io/acme/cli:0.4.0' : `acme-cli_0.4.0_${name}`,
      git_commit: commit,
      git_commit_info: gci,
      build_url: 'https://github.com/acme/cli/actions/runs/8200001',
      commit_url: gci.url,
      repo_url: 'https://github.com/acme/cli',
      template_reference_name: name,
      trail_name: trail,
    });
    counts.artifacts += 1;
    if (name !== 'cli-docker')
      await generic('cli-release', trail, 'sbom', {
        artifact_fingerprint: fingerprint,
        description: 'CycloneDX SBOM',
      });
  }
  // an SBOM for linux-arm sent with another commit than the release's
  const other = c.commitInfo(
    service,
    sha('commit', 'acme/cli', 'v0.4.0-rc1').slice(0, 40),
    when - DAY,
    'Release candidate',
    'grace',
  );
  await generic('cli-release', trail, 'sbom', { target_artifacts: ['linux-arm'], git_commit_info: other });
  await json('POST', `/artifacts/${org}/cli-release`, {
    fingerprint: sha('cli-release', trail, 'linux-arm'),
    filename: 'acme-cli_0.4.0_linux-arm',
    git_commit: commit,
    git_commit_info: gci,
    build_url: 'https://github.com/acme/cli/actions/runs/8200001',
    commit_url: gci.url,
    repo_url: 'https://github.com/acme/cli',
    template_reference_name: 'linux-arm',
    trail_name: trail,
  });
  counts.artifacts += 1;
  // an SBOM for windows-arm64, whose binary was never reported
  await generic('cli-release', trail, 'sbom', { target_artifacts: ['windows-arm64'], git_commit_info: gci });
}
