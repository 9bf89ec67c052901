/**
 * One build of a service, reported as its pipeline would with the kosli CLI: the trail, the pull
 * request and ticket, the artifact, unit tests, an SBOM, scans and reviews, and an override.
 */
import { commitInfo, cycloneDx, fixture, junitResults, repoInfo, sarif } from './evidence.js';
import { PAYMENTS, PEOPLE, type Build } from './plan.js';
import { DAY, HOUR, MINUTE, seconds, type Wire } from './wire.js';

/** What every report of one build shares. */
interface BuildReport {
  w: Wire;
  b: Build;
  trail: string;
  author: string;
  reviewer: string;
  message: string;
  gci: ReturnType<typeof commitInfo>;
  origin: string;
}

const MESSAGES = [
  'add refunds endpoint',
  'faster checkout',
  'fix rounding',
  'upgrade dependencies',
  'new dashboard',
  'retry idempotently',
];

export async function recordBuild(w: Wire, b: Build): Promise<void> {
  const s = b.service;
  const author = PEOPLE[b.number % PEOPLE.length]!;
  const message = `${s.templateName}: ${MESSAGES[b.number % 6]}`;
  const r: BuildReport = {
    w,
    b,
    trail: `${s.flow}-${b.number}`,
    author,
    reviewer: PEOPLE[(b.number + 2) % PEOPLE.length]!,
    message,
    gci: commitInfo(s, b.commit, b.at - 20 * MINUTE, message, author),
    origin: `https://github.com/${s.repo}/actions/runs/${7_000_000 + b.number * 13}`,
  };
  await beginTrail(r);
  await reportArtifact(r);
  await attestTests(r);
  if (s === PAYMENTS) {
    await attestScans(r);
    await attestReleaseOwner(r);
    if (b.overriddenScan) {
      await overrideScan(r);
    }
  } else if (!b.noReview) {
    await w.attest(s.flow, r.trail, 'generic', {
      attestation_name: 'security-review',
      artifact_fingerprint: b.fingerprint,
      origin_url: r.origin,
      is_compliant: true,
      description: `Threat model reviewed by ${r.reviewer}`,
    });
  }
}

/** The trail, its pull request and (for payments) its ticket. */
async function beginTrail(r: BuildReport): Promise<void> {
  const { w, b, trail, gci, origin } = r;
  const s = b.service;
  w.at(b.at);
  await w.form('PUT', `/trails/${w.org}/${s.flow}`, [
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
  w.counts.trails += 1;
  w.at(b.at + 2 * MINUTE);
  await attestPullRequest(r);
  if (s === PAYMENTS) {
    const issue = `PAY-${200 + b.number}`;
    await w.attest(s.flow, trail, 'jira', {
      attestation_name: 'jira-ticket',
      git_commit_info: gci,
      origin_url: origin,
      jira_results: [
        {
          issue_id: issue,
          issue_url: `https://acme.atlassian.net/browse/${issue}`,
          issue_exists: true,
          issue_fields: { summary: r.message, status: { name: 'Done' } },
        },
      ],
    });
  }
}

async function attestPullRequest({ w, b, trail, gci, origin, author, reviewer, message }: BuildReport) {
  const s = b.service;
  await w.attest(s.flow, trail, 'pull_request', {
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
}

async function reportArtifact({ w, b, trail, gci, origin }: BuildReport): Promise<void> {
  const s = b.service;
  w.at(b.at + 8 * MINUTE);
  await w.json('POST', `/artifacts/${w.org}/${s.flow}`, {
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
  w.counts.artifacts += 1;
}

/** Unit tests, and the SBOM when the build carries one. */
async function attestTests({ w, b, trail, gci, origin }: BuildReport): Promise<void> {
  const s = b.service;
  w.at(b.at + 10 * MINUTE);
  const xml = b.failingTests
    ? fixture('payments-failing-junit.xml')
    : fixture(
        b.number % 2 === 0 ? 'surefire_maven_ancient_junit_report.xml' : 'report_junit_delta_timestamp.xml',
      );
  await w.attest(
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
    await w.attest(
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
}

/** The dependency scan (with a finding when the build's scan is overridden) and code quality. */
async function attestScans(r: BuildReport): Promise<void> {
  const { w, b, trail, gci, origin } = r;
  const s = b.service;
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
  await w.attest(
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
  await attestCodeQuality(r);
}

async function attestCodeQuality({ w, b, trail, origin }: BuildReport): Promise<void> {
  await w.attest(b.service.flow, trail, 'sonar', {
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
}

async function attestReleaseOwner({ w, b, trail, origin, reviewer }: BuildReport): Promise<void> {
  await w.attest(b.service.flow, trail, 'custom', {
    attestation_name: 'release-owner',
    artifact_fingerprint: b.fingerprint,
    origin_url: origin,
    type_name: 'person',
    attestation_data: { name: reviewer[0]!.toUpperCase() + reviewer.slice(1), age: 30 + (b.number % 20) },
  });
}

/** Security accepts the dependency finding: the scan is overridden as compliant. */
async function overrideScan({ w, b, trail }: BuildReport): Promise<void> {
  w.at(b.at + 40 * MINUTE);
  await w.json('POST', `/attestations/${w.org}/${b.service.flow}/trail/${trail}/override`, {
    attestation_name: 'dependency-scan',
    artifact_fingerprint: b.fingerprint,
    reason:
      'SNYK-JS-LODASH-6139239 is not reachable from our code; accepted by security until the next base image',
    new_compliance_status: true,
    original_attestation_type: 'snyk',
    user_data: {},
  });
  w.counts.attestations += 1;
}
