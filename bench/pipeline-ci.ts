/**
 * What a CI run sends, request by request, as the kosli CLI sends it on GitHub Actions (commit
 * and repository defaulted from the CI variables, results files uploaded): begin trail, attest
 * the artifact, five attestations bound to it, two trail-level attestations, assert, get.
 */
import {
  fingerprintOf,
  type ConnectionRequest,
  json,
  multipart,
  send,
  type Recorder,
  type Reply,
  type Target,
} from './pipeline-client.js';

export const FLOW = 'backend-ci';

/** The flow's template: what a compliant trail of this flow holds. */
const TEMPLATE = `version: 1
trail:
  artifacts:
  - name: backend
    attestations:
    - name: unit-tests
      type: junit
    - name: dependency-scan
      type: snyk
    - name: lint
      type: generic
    - name: coverage
      type: custom:coverage-metrics
    - name: pull-request
      type: pull_request
  attestations:
  - name: security-review
    type: generic
  - name: release-notes
    type: generic
`;

/** A JUnit report as a test run writes it: its timestamps and durations differ from run to run. */
function junitXml(run: string): Buffer {
  const suite = (s: number) =>
    `  <testsuite name="suite-${s}" timestamp="2026-11-20T10:24:39.090Z" hostname="${run}" tests="10" failures="0" errors="0" skipped="0" time="0.8">\n${Array.from(
      { length: 10 },
      (_, c) => `    <testcase classname="suite-${s}" name="case ${c}" time="0.08"></testcase>\n`,
    ).join('')}  </testsuite>\n`;
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites name="backend" tests="40" failures="0" errors="0" time="3.2">\n${[0, 1, 2, 3].map(suite).join('')}</testsuites>\n`,
  );
}

const SARIF = Buffer.from(
  JSON.stringify({
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'Snyk Open Source', version: '1.1290.0' } }, results: [] }],
  }),
);

/** Whether attestations carry `repo_info` (the CLI sends it by default on GitHub Actions). */
const WITH_REPO = process.env.BENCH_PIPELINE_REPO_INFO !== '0';

function commitOf(trail: string) {
  return {
    sha1: fingerprintOf(trail).slice(0, 40),
    message: 'Bump dependencies',
    author: 'Dev <dev@example.com>',
    timestamp: 1_763_640_000,
    branch: 'main',
    url: `https://github.com/acme/backend/commit/${fingerprintOf(trail).slice(0, 40)}`,
  };
}

/** The fields every `kosli attest` command sends (CommonAttestationPayload). */
export function common(trail: string, name: string, fingerprint: string | null): Record<string, unknown> {
  const [target, attestationName] = name.includes('.') ? name.split('.') : [undefined, name];
  return {
    ...(fingerprint ? { artifact_fingerprint: fingerprint } : {}),
    git_commit_info: commitOf(trail),
    ...(WITH_REPO
      ? {
          repo_info: {
            url: 'https://github.com/acme/backend',
            name: 'acme/backend',
            id: '812345678',
            provider: 'github',
          },
        }
      : {}),
    attestation_name: attestationName,
    ...(target ? { target_artifacts: [target] } : {}),
    origin_url: `https://github.com/acme/backend/actions/runs/${trail}`,
    user_data: {},
  };
}

/** Creates the flow (with its template) and the custom attestation type. */
export async function setupFlow(target: Target): Promise<void> {
  const must = (what: string, r: Reply) => {
    if (r.status !== 200 && r.status !== 201) {
      throw new Error(`${what}: ${r.status} ${r.body}`);
    }
  };
  must(
    'create flow',
    await send(
      target,
      'PUT',
      `/api/v2/flows/${target.org}/template_file`,
      multipart(
        { data_json: { name: FLOW, description: 'backend CI' } },
        { name: 'template_file', filename: 'template.yml', data: Buffer.from(TEMPLATE) },
      ),
    ),
  );
  must(
    'create attestation type',
    await send(
      target,
      'POST',
      `/api/v2/custom-attestation-types/${target.org}`,
      multipart(
        {
          data_json: {
            name: 'coverage-metrics',
            description: 'line coverage',
            evaluator: { content_type: 'jq', rules: ['.line_coverage >= 80'] },
          },
        },
        {
          name: 'type_schema',
          filename: 'schema.json',
          data: Buffer.from(
            JSON.stringify({ type: 'object', properties: { line_coverage: { type: 'number' } } }),
          ),
        },
      ),
    ),
  );
}

const attestationPath = (t: Target, trail: string, kind: string) =>
  `/api/v2/attestations/${t.org}/${FLOW}/trail/${trail}/${kind}`;

/** `kosli begin trail` then `kosli attest artifact`: the trail and its artifact. */
export async function beginWithArtifact(t: Target, rec: Recorder, trail: string, fp: string): Promise<void> {
  await rec.time('begin trail', () =>
    send(
      t,
      'PUT',
      `/api/v2/trails/${t.org}/${FLOW}`,
      multipart({
        data_json: {
          name: trail,
          description: 'CI run',
          git_commit_info: commitOf(trail),
          origin_url: `https://github.com/acme/backend/actions/runs/${trail}`,
        },
      }),
    ),
  );
  await rec.time('attest artifact', () =>
    send(
      t,
      'POST',
      `/api/v2/artifacts/${t.org}/${FLOW}`,
      json({
        fingerprint: fp,
        filename: `ghcr.io/acme/backend:${trail}`,
        git_commit: commitOf(trail).sha1,
        git_commit_info: commitOf(trail),
        build_url: `https://github.com/acme/backend/actions/runs/${trail}`,
        commit_url: commitOf(trail).url,
        repo_url: 'https://github.com/acme/backend',
        template_reference_name: 'backend',
        trail_name: trail,
      }),
    ),
  );
}

/** The five attestations bound to the artifact (`--fingerprint FP --name backend.<name>`). */
export async function attestArtifact(t: Target, rec: Recorder, trail: string, fp: string): Promise<void> {
  const c = (name: string) => common(trail, `backend.${name}`, fp);
  const junitResults = Array.from({ length: 4 }, (_, s) => ({
    name: `suite-${s}`,
    failures: 0,
    errors: 0,
    skipped: 0,
    total: 10,
    duration: 0.8,
    timestamp: 1_763_634_279.09,
  }));
  const file = (filename: string, data: Buffer) => ({ name: 'attachment_file', filename, data });
  const post = (kind: string, body: Record<string, unknown>, attachment?: ReturnType<typeof file>) =>
    rec.time(`artifact ${kind}`, () =>
      send(t, 'POST', attestationPath(t, trail, kind), multipart({ data_json: body }, attachment)),
    );
  await post(
    'junit',
    { ...c('unit-tests'), junit_results: junitResults },
    file('junit.xml', junitXml(trail)),
  );
  await post(
    'snyk',
    {
      ...c('dependency-scan'),
      snyk_results: {
        schema_version: 1,
        tool: { name: 'Snyk Open Source', version: '1.1290.0' },
        results: [{ high_count: 0, medium_count: 0, low_count: 0 }],
      },
    },
    file('snyk.sarif', SARIF),
  );
  await post('generic', { ...c('lint'), is_compliant: true });
  await post('custom', {
    ...c('coverage'),
    type_name: 'coverage-metrics',
    attestation_data: { line_coverage: 87.5 },
  });
  await post('pull_request', {
    ...c('pull-request'),
    git_provider: 'github',
    pull_requests: [
      {
        merge_commit: commitOf(trail).sha1,
        url: 'https://github.com/acme/backend/pull/42',
        state: 'MERGED',
        approvers: [{ username: 'reviewer', state: 'APPROVED', timestamp: 1_763_630_000 }],
        author: 'dev',
        commits: [],
      },
    ],
  });
}

/** A generic attestation: bound to the artifact when `fp` is given, else trail-level. */
export function attestGeneric(
  t: Target,
  rec: Recorder,
  kind: string,
  trail: string,
  name: string,
  fp: string | null,
): Promise<Reply> {
  return rec.time(kind, () =>
    send(
      t,
      'POST',
      attestationPath(t, trail, 'generic'),
      multipart({ data_json: { ...common(trail, name, fp), is_compliant: true } }),
    ),
  );
}

/** The ingest workloads: artifact-bound, trail-level, and artifact-bound to one trail. */
export type IngestWorkload = 'bound' | 'trail' | 'one';

/** What caller `caller` of an ingest workload attests: its trail, the name, the fingerprint. */
export function ingestAttestation(
  workload: IngestWorkload,
  trails: ReadonlyArray<{ trail: string; fp: string }>,
  caller: number,
): { trail: string; name: string; fp: string | null } {
  const t = trails[workload === 'one' ? 0 : caller]!;
  return workload === 'trail'
    ? { trail: t.trail, name: 'security-review', fp: null }
    : { trail: t.trail, name: 'backend.lint', fp: t.fp };
}

/**
 * `attestGeneric`'s request as one connection of `connectionLoad` sends it over and over: the
 * same bytes, headers and body, as `send` puts on the wire.
 */
export function genericRequest(t: Target, trail: string, name: string, fp: string | null): ConnectionRequest {
  const body = multipart({ data_json: { ...common(trail, name, fp), is_compliant: true } });
  return {
    method: 'POST',
    path: attestationPath(t, trail, 'generic'),
    headers: {
      authorization: `Bearer ${t.key}`,
      'user-agent': 'Kosli/v2.38.0',
      'content-type': body.contentType,
    },
    body: body.data.toString(),
  };
}

/** One CI run on a new trail: every request of the run, in order. */
export async function pipeline(t: Target, rec: Recorder, trail: string): Promise<void> {
  const fp = fingerprintOf(`artifact ${trail}`);
  await beginWithArtifact(t, rec, trail, fp);
  await attestArtifact(t, rec, trail, fp);
  await attestGeneric(t, rec, 'trail generic', trail, 'security-review', null);
  await attestGeneric(t, rec, 'trail generic', trail, 'release-notes', null);
  await rec.time('assert artifact', () =>
    send(t, 'GET', `/api/v2/asserts/${t.org}/fingerprint/${fp}?flow_name=${FLOW}`),
  );
  await rec.time('get artifact', () =>
    send(t, 'GET', `/api/v2/artifacts/${t.org}/${FLOW}/fingerprint/${fp}`),
  );
}
