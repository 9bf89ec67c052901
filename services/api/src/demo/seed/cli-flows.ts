/**
 * The command-line client's flows: not deployed, with missing and unbound slots. Four merges to
 * main on `cli`, and one release on `cli-release` with binaries reported or never reported.
 */
import { commitInfo, fixture, junitResults } from './evidence.js';
import { PEOPLE, type Service } from './plan.js';
import { DAY, HOUR, MINUTE, sha, type Wire } from './wire.js';

const CLI: Service = {
  flow: 'cli',
  templateName: 'cli-docker',
  image: 'ghcr.io/acme/cli',
  namespace: 'tools',
  repo: 'acme/cli',
};

const CLEAN_SCAN = JSON.stringify({
  version: '2.1.0',
  runs: [{ tool: { driver: { name: 'Snyk Code', version: '1.1290.0' } }, results: [] }],
});

const generic = (w: Wire, flow: string, trail: string, name: string, extra: Record<string, unknown> = {}) =>
  w.attest(flow, trail, 'generic', { attestation_name: name, is_compliant: true, ...extra });

const snyk = (name: string, extra: Record<string, unknown>) => ({
  attestation_name: name,
  snyk_results: {
    schema_version: 1,
    tool: { name: 'Snyk Code', version: '1.1290.0' },
    results: [{ high_count: 0, medium_count: 0, low_count: 0 }],
  },
  ...extra,
});

/** Begins a trail on a CLI flow and attests its JUnit report and lint. */
async function beginTrail(
  w: Wire,
  where: { flow: string; trail: string; description: string; when: number; afterMinutes: number },
  gci: ReturnType<typeof commitInfo>,
  junitFixture: string,
): Promise<void> {
  const { flow, trail, when } = where;
  w.at(when);
  await w.form('PUT', `/trails/${w.org}/${flow}`, [
    {
      name: 'data_json',
      value: JSON.stringify({ name: trail, description: where.description, git_commit_info: gci }),
    },
  ]);
  w.counts.trails += 1;
  w.at(when + where.afterMinutes * MINUTE);
  const xml = fixture(junitFixture);
  await w.attest(
    flow,
    trail,
    'junit',
    { attestation_name: 'test', git_commit_info: gci, junit_results: junitResults(xml) },
    { filename: 'junit.xml', content: xml },
  );
  await generic(w, flow, trail, 'lint');
}

export async function seedCliFlows(w: Wire, end: number): Promise<void> {
  const merges = 4;
  for (let n = 1; n <= merges; n++) {
    await seedMerge(w, n, end - (merges - n + 1) * 26 * HOUR);
  }
  await seedRelease(w, end - 3 * HOUR);
}

/** One merge to main: its number, trail and commit. */
interface Merge {
  n: number;
  trail: string;
  commit: string;
  gci: ReturnType<typeof commitInfo>;
}

/** Merge `n` to main: one without a dependency scan, one without a pull request (overridden). */
async function seedMerge(w: Wire, n: number, when: number): Promise<void> {
  const commit = sha('commit', 'acme/cli', n).slice(0, 40);
  const gci = commitInfo(
    CLI,
    commit,
    when - 15 * MINUTE,
    `cli: ${['add --output json', 'retry on 503', 'faster fingerprinting', 'new search command'][n - 1]}`,
    PEOPLE[n]!,
  );
  const trail = `main-${n}`;
  const where = { flow: 'cli', trail, description: `Merge ${n} to main`, when, afterMinutes: 3 };
  await beginTrail(w, where, gci, 'report_junit_delta_timestamp.xml');
  await w.attest('cli', trail, 'snyk', snyk('snyk-code-test', {}), {
    filename: 'code.sarif',
    content: CLEAN_SCAN,
  });
  if (n !== 2) {
    await w.attest('cli', trail, 'snyk', snyk('snyk-dependency-test', {}), {
      filename: 'deps.sarif',
      content: CLEAN_SCAN,
    });
  }
  const merge: Merge = { n, trail, commit, gci };
  await attestReview(w, merge);
  w.at(when + 9 * MINUTE);
  if (n !== 1) {
    await reportImage(w, merge);
  }
}

/** The pull request (none for merge 3, overridden) and the four-eyes result (not approved for 4). */
async function attestReview(w: Wire, m: Merge): Promise<void> {
  const { n, trail, commit, gci } = m;
  await w.attest('cli', trail, 'pull_request', {
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
  await w.attest('cli', trail, 'custom', {
    attestation_name: 'four-eyes-result',
    type_name: 'four-eyes-result',
    attestation_data: { author: PEOPLE[n]!, reviewer: PEOPLE[n + 1]!, approved: n !== 4 },
  });
  if (n === 3) {
    // no pull request found: overridden by the release manager
    await w.json('POST', `/attestations/${w.org}/cli/trail/${trail}/override`, {
      attestation_name: 'pr',
      reason: 'Hotfix pushed during the incident INC-311; reviewed after the fact in PR #44',
      new_compliance_status: true,
      original_attestation_type: 'pull_request',
      user_data: {},
    });
    w.counts.attestations += 1;
  }
}

/** The merge's docker image, its smoke test (failing for merge 3) and container scan. */
async function reportImage(w: Wire, m: Merge): Promise<void> {
  const { n, trail, commit, gci } = m;
  const fingerprint = sha('ghcr.io/acme/cli', n);
  await w.json('POST', `/artifacts/${w.org}/cli`, {
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
  w.counts.artifacts += 1;
  await generic(w, 'cli', trail, 'smoke-test', { artifact_fingerprint: fingerprint, is_compliant: n !== 3 });
  await w.attest('cli', trail, 'snyk', snyk('snyk-container-test', { artifact_fingerprint: fingerprint }), {
    filename: 'container.sarif',
    content: CLEAN_SCAN,
  });
}

const RELEASED = [
  'cli-docker',
  'linux-amd64',
  'linux-arm64',
  'darwin-arm64',
  'darwin-amd64',
  'windows-amd64',
  'deb-pkg-amd64',
  'rpm-pkg-amd64',
];

/** A release: some binaries reported, others never; one SBOM for the wrong commit, one unbound. */
async function seedRelease(w: Wire, when: number): Promise<void> {
  const commit = sha('commit', 'acme/cli', 'v0.4.0').slice(0, 40);
  const gci = commitInfo(CLI, commit, when - 30 * MINUTE, 'Release v0.4.0', 'grace');
  const trail = 'v0.4.0';
  const where = { flow: 'cli-release', trail, description: 'Release v0.4.0', when, afterMinutes: 5 };
  await beginTrail(w, where, gci, 'surefire_maven_ancient_junit_report.xml');
  const binary = (name: string, filename: string) =>
    w.json('POST', `/artifacts/${w.org}/cli-release`, {
      fingerprint: sha('cli-release', trail, name),
      filename,
      git_commit: commit,
      git_commit_info: gci,
      build_url: 'https://github.com/acme/cli/actions/runs/8200001',
      commit_url: gci.url,
      repo_url: 'https://github.com/acme/cli',
      template_reference_name: name,
      trail_name: trail,
    });
  for (const name of RELEASED) {
    await binary(name, name === 'cli-docker' ? 'ghcr.io/acme/cli:0.4.0' : `acme-cli_0.4.0_${name}`);
    w.counts.artifacts += 1;
    if (name !== 'cli-docker') {
      await generic(w, 'cli-release', trail, 'sbom', {
        artifact_fingerprint: sha('cli-release', trail, name),
        description: 'CycloneDX SBOM',
      });
    }
  }
  // an SBOM for linux-arm sent with another commit than the release's
  const other = commitInfo(
    CLI,
    sha('commit', 'acme/cli', 'v0.4.0-rc1').slice(0, 40),
    when - DAY,
    'Release candidate',
    'grace',
  );
  await generic(w, 'cli-release', trail, 'sbom', { target_artifacts: ['linux-arm'], git_commit_info: other });
  await binary('linux-arm', 'acme-cli_0.4.0_linux-arm');
  w.counts.artifacts += 1;
  // an SBOM for windows-arm64, whose binary was never reported
  await generic(w, 'cli-release', trail, 'sbom', {
    target_artifacts: ['windows-arm64'],
    git_commit_info: gci,
  });
}
