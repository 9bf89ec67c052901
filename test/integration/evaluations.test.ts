/**
 * Server-side evaluations as the kosli CLI sends and polls them (reference/peers-2026-11b.md
 * 1.1-1.2): `kosli evaluate policy` and `kosli evaluate trail --server-side` POST
 * /api/v2/evaluations/{org} with exactly context, policy and params (and decision with
 * --control), then GET /api/v2/evaluations/{org}/{id} until completed or failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { until } from '../helpers/wait.js';

const ORG = 'acme';
const FLOW = 'release';
const GOOD = 'good-trail';
const BAD = 'bad-trail';
const FP = 'a'.repeat(64);
const CONTROL = 'SDLC-CTRL-0007';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;
let member: ReturnType<typeof cliClient>;

/** The body the CLI sends: context, policy and params, and decision only with --control. */
const body = (
  files: Record<string, string>,
  opts: { trails?: Array<{ flow: string; trail: string }>; params?: unknown; decision?: unknown } = {},
) => ({
  context: { trails: opts.trails ?? [{ flow: FLOW, trail: GOOD }] },
  policy: { files },
  params: 'params' in opts ? opts.params : {},
  ...(opts.decision !== undefined ? { decision: opts.decision } : {}),
});

const post = (payload: unknown, client = cli) => client.json('POST', `/api/v2/evaluations/${ORG}`, payload);

/** Polls as the CLI does until the evaluation is terminal. */
async function terminal(id: string) {
  return until(async () => {
    const r = await cli.get(`/api/v2/evaluations/${ORG}/${id}`);
    expect(r.status, r.body).toBe(200);
    return r.json.status === 'pending' ? undefined : r.json;
  });
}

/** Creates, expects 201 pending, and waits for the outcome. */
async function evaluate(payload: unknown) {
  const r = await post(payload);
  expect(r.status, r.body).toBe(201);
  expect(Object.keys(r.json).sort()).toEqual(['id', 'recorded_at', 'requested_at', 'status']);
  expect(r.json.status).toBe('pending');
  expect(r.json.id).toMatch(/^[0-9a-f-]{32}$/);
  expect(typeof r.json.requested_at).toBe('number');
  return terminal(r.json.id);
}

const attest = (trail: string, data: Record<string, unknown>) =>
  cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${trail}/generic`, [
    { name: 'data_json', value: JSON.stringify({ user_data: {}, ...data }) },
  ]);

const decisionsOn = async (trail: string, name: string) => {
  const r = await cli.get(`/api/v2/attestations/${ORG}/${FLOW}/trail/${trail}/${name}`);
  return r.status === 200 ? (r.json as Array<Record<string, any>>) : [];
};

const TEMPLATE = `version: 1
trail:
  attestations:
    - name: tests
      type: generic
  artifacts:
    - name: backend
`;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  reader = cliClient(t.app, await t.seedKey(ORG, 'reader'));
  member = cliClient(t.app, await t.seedKey(ORG, 'member'));
  const beta = await cli.json('PUT', `/api/v2/organizations/${ORG}/experimental_features`, {
    experimental_features_enabled: true,
  });
  expect(beta.status).toBe(200);
  expect(
    (await cli.json('POST', `/api/v2/controls/${ORG}`, { identifier: CONTROL, name: 'Policy' })).status,
  ).toBe(201);
  const flow = await cli.multipart('PUT', `/api/v2/flows/${ORG}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ name: FLOW, description: '' }) },
    { name: 'template_file', filename: 'template.yml', content: TEMPLATE },
  ]);
  expect(flow.status, flow.body).toBe(201);
  for (const trail of [GOOD, BAD]) {
    expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${FLOW}`, { name: trail })).status).toBe(201);
    const art = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
      fingerprint: trail === GOOD ? FP : 'b'.repeat(64),
      filename: `backend-${trail}`,
      template_reference_name: 'backend',
      trail_name: trail,
      build_url: 'https://ci.example/1',
      commit_url: 'https://git.example/c/1',
    });
    expect(art.status, art.body).toBe(201);
    const a = await attest(trail, {
      attestation_name: 'tests',
      is_compliant: trail === GOOD,
    });
    expect(a.status, a.body).toBe(201);
  }
});
afterAll(async () => t?.close());

/** A rule that denies every trail that is not compliant, naming it. */
const ALL_COMPLIANT = `{
  "allow": input.trails.all(t, t.compliance_status == "COMPLIANT"),
  "violations": input.trails.filter(t, t.compliance_status != "COMPLIANT")
    .map(t, t.flow_name + "/" + t.trail_name + " is " + t.compliance_status)
}`;

describe('kosli evaluate trail --server-side and kosli evaluate policy', () => {
  it('allow: a bool expression gives completed, allow true, no violations, no error, no decision', async () => {
    const e = await evaluate(body({ 'policy.cel': 'true' }));
    expect(e.status).toBe('completed');
    expect(e.result).toEqual({ allow: true, violations: [] });
    expect(e).not.toHaveProperty('error');
    expect(e).not.toHaveProperty('decision_attestation_id');
    expect(e.policy_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('the policy sees the documented fields of each trail, its attestations and artifacts', async () => {
    // Each check that fails names itself among the violations.
    const checks = [
      `input.trail.flow_name == "release"`,
      `input.trail.trail_name == "${GOOD}"`,
      `input.trail.compliance_status == "COMPLIANT"`,
      `input.trail.moment_number > 0`,
      `input.trail.created_at > 0`,
      `type(input.trail.template_id) == string`,
      `input.trail.attestations.exists(a, a.name == params.required && a.type == "generic" && a.is_compliant)`,
      `input.trail.artifacts.exists(a, a.name == "backend" && a.fingerprint == "${FP}" && a.compliance_status == "COMPLIANT")`,
      `input.trails.size() == 1`,
    ];
    const failing = `[${checks.map((c) => `(${c}) ? "" : ${JSON.stringify(c)}`).join(', ')}].filter(v, v != "")`;
    const rule = `{"allow": ${failing}.size() == 0, "violations": ${failing}}`;
    const e = await evaluate(body({ 'policy.cel': rule }, { params: { required: 'tests' } }));
    expect(e.result, JSON.stringify(e)).toEqual({ allow: true, violations: [] });
    // With two trails there is no input.trail.
    const two = await evaluate(
      body(
        { 'policy.cel': '!has(input.trail) && input.trails.size() == 2' },
        {
          trails: [
            { flow: FLOW, trail: GOOD },
            { flow: FLOW, trail: BAD },
          ],
        },
      ),
    );
    expect(two.result, JSON.stringify(two)).toEqual({ allow: true, violations: [] });
  });

  it('deny: a rule that denies one trail of two gives completed, allow false and its violation', async () => {
    const e = await evaluate(
      body(
        { 'policy.cel': ALL_COMPLIANT },
        {
          trails: [
            { flow: FLOW, trail: GOOD },
            { flow: FLOW, trail: BAD },
            { flow: FLOW, trail: GOOD },
          ],
        },
      ),
    );
    expect(e.status).toBe('completed');
    expect(e.result).toEqual({ allow: false, violations: [`${FLOW}/${BAD} is NON-COMPLIANT`] });
    expect(e).not.toHaveProperty('error');
  });

  it("the README's worked example: every trail compliant with a passing test attestation", async () => {
    const gate = `{
  "allow": input.trails.all(t,
      t.compliance_status == "COMPLIANT" &&
      t.attestations.exists(a, a.name == params.tests && a.is_compliant)),
  "violations":
      input.trails.filter(t, t.compliance_status != "COMPLIANT")
        .map(t, t.flow_name + "/" + t.trail_name + " is " + t.compliance_status) +
      input.trails.filter(t, !t.attestations.exists(a, a.name == params.tests && a.is_compliant))
        .map(t, t.flow_name + "/" + t.trail_name + " has no passing '" + params.tests + "'")
}`;
    const trails = [
      { flow: FLOW, trail: GOOD },
      { flow: FLOW, trail: BAD },
    ];
    const e = await evaluate(body({ 'release-gate.cel': gate }, { trails, params: { tests: 'tests' } }));
    expect(e.result).toEqual({
      allow: false,
      violations: [`${FLOW}/${BAD} is NON-COMPLIANT`, `${FLOW}/${BAD} has no passing 'tests'`],
    });
    const good = await evaluate(
      body({ 'release-gate.cel': gate }, { trails: [trails[0]!], params: { tests: 'tests' } }),
    );
    expect(good.result).toEqual({ allow: true, violations: [] });
  });

  it('a map literal result is accepted as standard CEL accepts it', async () => {
    const e = await evaluate(body({ 'policy.cel': '{"allow": false, "violations": ["x"]}' }));
    expect(e.result).toEqual({ allow: false, violations: ['x'] });
  });

  it('a bundle of several files is entered at policy.cel', async () => {
    const e = await evaluate(
      body({ 'policy.cel': 'false', 'lib/other.cel': 'true', 'README.md': '# notes' }),
    );
    expect(e.result).toEqual({ allow: false, violations: [] });
  });

  it.each([
    ['compile', { 'policy.cel': 'input.trails.all(t, ' }, /policy\.cel: /],
    [
      'result_shape',
      { 'policy.cel': '42' },
      /must give a bool or \{"allow": bool, "violations": \[string\]\}/,
    ],
    ['result_shape', { 'policy.cel': '{"allow": "yes"}' }, /allow is a string; it must be a bool/],
    [
      'result_shape',
      { 'policy.cel': '{"allow": true, "violations": [1]}' },
      /violations must be a list of strings/,
    ],
    ['evaluate', { 'policy.cel': 'input.trail.no_such_field == 1' }, /No such key: no_such_field/],
    ['no_policy', { 'a.cel': 'true', 'b.cel': 'true' }, /none is policy\.cel/],
  ])('%s: failed with error.kind and a message, no result', async (kind, files, message) => {
    const e = await evaluate(body(files));
    expect(e.status).toBe('failed');
    expect(e.error.kind).toBe(kind);
    expect(e.error.message).toMatch(message);
    expect(e).not.toHaveProperty('result');
    expect(e).not.toHaveProperty('decision_attestation_id');
  });

  it('the same files give the same bundle digest whatever the key order', async () => {
    const a = await evaluate(body({ 'policy.cel': 'true', 'x.cel': 'false' }));
    const b = await evaluate(body({ 'x.cel': 'false', 'policy.cel': 'true' }));
    const c = await evaluate(body({ 'policy.cel': 'true ', 'x.cel': 'false' }));
    expect(a.policy_digest).toBe(b.policy_digest);
    expect(c.policy_digest).not.toBe(a.policy_digest);
  });
});

describe('decisions', () => {
  it('with decision, a denial is written as a decision attestation citing the evaluation', async () => {
    const decision = { control: CONTROL, name: `${CONTROL}-decision`, flow: FLOW, trail: BAD };
    const e = await evaluate(
      body(
        { 'policy.cel': ALL_COMPLIANT },
        {
          trails: [
            { flow: FLOW, trail: GOOD },
            { flow: FLOW, trail: BAD },
          ],
          params: { env: 'prod', threshold: 2 },
          decision,
        },
      ),
    );
    expect(e.status).toBe('completed');
    expect(e.result).toEqual({ allow: false, violations: [`${FLOW}/${BAD} is NON-COMPLIANT`] });
    expect(typeof e.decision_attestation_id).toBe('string');
    const [written] = await decisionsOn(BAD, decision.name);
    expect(written).toBeDefined();
    expect(written!.attestation_id).toBe(e.decision_attestation_id);
    expect(written!.attestation_type).toBe('decision');
    expect(written!.is_compliant).toBe(false);
    expect(written!.control).toBe(CONTROL);
    expect(written!.attestation_data).toEqual({
      is_compliant: false,
      evaluation_id: e.id,
      policy_digest: e.policy_digest,
      params: { env: 'prod', threshold: 2 },
      input_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      violations: [`${FLOW}/${BAD} is NON-COMPLIANT`],
    });
    expect(written!.description).toBe(`Server-side evaluation ${e.id}: denied`);
  });

  it('an allow on an artifact is written on the artifact', async () => {
    const decision = {
      control: CONTROL,
      name: 'artifact-decision',
      flow: FLOW,
      trail: GOOD,
      fingerprint: FP,
    };
    const e = await evaluate(body({ 'policy.cel': 'true' }, { decision }));
    expect(e.status).toBe('completed');
    const [written] = await decisionsOn(GOOD, 'artifact-decision');
    expect(written!.attestation_id).toBe(e.decision_attestation_id);
    expect(written!.artifact_fingerprint).toBe(FP);
    expect(written!.is_compliant).toBe(true);
  });

  it('a failed evaluation writes no decision', async () => {
    const decision = { control: CONTROL, name: 'never-written', flow: FLOW, trail: GOOD };
    const e = await evaluate(body({ 'policy.cel': '1 +' }, { decision }));
    expect(e.status).toBe('failed');
    expect(e.error.kind).toBe('compile');
    expect(e).not.toHaveProperty('decision_attestation_id');
    expect(await decisionsOn(GOOD, 'never-written')).toEqual([]);
  });

  it('the destination is checked before anything is queued: the pinned 404s', async () => {
    const missingControl = await post(
      body({ 'policy.cel': 'true' }, { decision: { control: 'NOPE-1', name: 'd', flow: FLOW, trail: GOOD } }),
    );
    expect(missingControl.status).toBe(404);
    expect(missingControl.json.message).toBe(`Control 'NOPE-1' does not exist in org '${ORG}'`);
    const missingTrail = await post(
      body(
        { 'policy.cel': 'true' },
        { decision: { control: CONTROL, name: 'd', flow: FLOW, trail: 'nope' } },
      ),
    );
    expect(missingTrail.status).toBe(404);
    expect(missingTrail.json.message).toBe(`These trails do not exist in org '${ORG}': ${FLOW}/nope`);
    const missingArtifact = await post(
      body(
        { 'policy.cel': 'true' },
        { decision: { control: CONTROL, name: 'd', flow: FLOW, trail: GOOD, fingerprint: 'c'.repeat(64) } },
      ),
    );
    expect(missingArtifact.status).toBe(404);
    expect(missingArtifact.json.message).toMatch(/^Artifact with fingerprint c{64} does not exist in trail/);
  });

  it('an archived destination flow: the pinned 400', async () => {
    expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: 'old', description: '' })).status).toBe(
      201,
    );
    expect((await cli.json('PUT', `/api/v2/trails/${ORG}/old`, { name: 'x' })).status).toBe(201);
    expect((await cli.json('PUT', `/api/v2/flows/${ORG}/old/archive`)).status).toBe(200);
    const r = await post(
      body({ 'policy.cel': 'true' }, { decision: { control: CONTROL, name: 'd', flow: 'old', trail: 'x' } }),
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(`Flow named 'old' has been archived for organization '${ORG}'`);
  });
});

describe('validation: every bad request is a 400 (or the pinned 404) and nothing is queued', () => {
  it('missing trails: the pinned 404 names each', async () => {
    const r = await post(
      body(
        { 'policy.cel': 'true' },
        {
          trails: [
            { flow: FLOW, trail: 'gone-1' },
            { flow: FLOW, trail: GOOD },
            { flow: 'nowhere', trail: 'gone-2' },
          ],
        },
      ),
    );
    expect(r.status).toBe(404);
    expect(r.json.message).toBe(`These trails do not exist in org '${ORG}': ${FLOW}/gone-1, nowhere/gone-2`);
  });

  it('a bundle over 1 MiB: the pinned message with its size', async () => {
    // 10 bytes of path plus 1,048,590 of source.
    const r = await post(body({ 'policy.cel': 'x'.repeat(1_048_590) }));
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('policy bundle is 1048600 bytes, over the 1048576 byte limit');
  });

  it('params over 64 KiB of JSON', async () => {
    const r = await post(body({ 'policy.cel': 'true' }, { params: { big: 'x'.repeat(65_536) } }));
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('params is 65546 bytes of JSON, over the 65536 byte limit');
  });

  it('Rego files are refused, named, with where Rego runs', async () => {
    const r = await post(
      body({
        'policy.rego': 'package policy\n\nallow := true\n',
        'lib/helpers': 'package lib\n',
        'ok.cel': 'true',
      }),
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(
      'Policy files lib/helpers, policy.rego are Rego: this server evaluates CEL policies, and Rego runs client-side (kosli evaluate trail without --server-side)',
    );
  });

  const manyTrails = Array.from({ length: 101 }, (_, i) => ({ flow: FLOW, trail: `t${i}` }));
  const manyFiles = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}.cel`, 'true']));
  it.each([
    ['an unknown top-level field', { ...body({ 'policy.cel': 'true' }), extra: 1 }, 'body.extra'],
    [
      'an unknown field in context',
      { ...body({ 'policy.cel': 'true' }), context: { trails: [{ flow: FLOW, trail: GOOD }], x: 1 } },
      'body.context.x',
    ],
    [
      'an unknown field in a trail',
      body({ 'policy.cel': 'true' }, { trails: [{ flow: FLOW, trail: GOOD, x: 1 } as never] }),
      'body.context.trails[0].x',
    ],
    [
      'an unknown field in decision',
      body(
        { 'policy.cel': 'true' },
        { decision: { control: CONTROL, name: 'd', flow: FLOW, trail: GOOD, x: 1 } },
      ),
      'body.decision.x',
    ],
    [
      'a decision without control',
      body({ 'policy.cel': 'true' }, { decision: { name: 'd', flow: FLOW, trail: GOOD } }),
      'body.decision.control',
    ],
    ['decision null', body({ 'policy.cel': 'true' }, { decision: null }), 'body.decision'],
    ['params null', body({ 'policy.cel': 'true' }, { params: null }), 'body.params'],
    ['params a list', body({ 'policy.cel': 'true' }, { params: [] }), 'body.params'],
    ['no trails', body({ 'policy.cel': 'true' }, { trails: [] }), 'body.context.trails'],
    ['101 trails', body({ 'policy.cel': 'true' }, { trails: manyTrails }), 'body.context.trails'],
    ['no policy', { context: { trails: [{ flow: FLOW, trail: GOOD }] }, params: {} }, 'body.policy'],
  ])('%s', async (_what, payload, field) => {
    const r = await post(payload);
    expect(r.status, r.body).toBe(400);
    expect(r.json.message).toBe('Input payload validation failed');
    expect(Object.keys(r.json.errors)).toContain(field);
  });

  it.each([
    ['no files', {}, 'policy bundle holds no files; send 1 to 100'],
    ['101 files', manyFiles, 'policy bundle holds 101 files, over the 100 file limit'],
    [
      'an absolute path',
      { '/etc/policy.cel': 'true' },
      "file path '/etc/policy.cel' is absolute; paths are relative to the bundle",
    ],
    ['a path with ..', { 'a/../policy.cel': 'true' }, "file path 'a/../policy.cel' contains '..'"],
  ])('%s', async (_what, files, message) => {
    const r = await post(body(files));
    expect(r.status, r.body).toBe(400);
    expect(r.json.message).toBe(message);
  });
});

describe('metrics', () => {
  it('counts evaluations by outcome and failure kind', async () => {
    const body = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
    expect(body).toMatch(/verity_evaluations_total\{outcome="allowed",kind=""\} [1-9]/);
    expect(body).toMatch(/verity_evaluations_total\{outcome="denied",kind=""\} [1-9]/);
    expect(body).toMatch(/verity_evaluations_total\{outcome="failed",kind="compile"\} [1-9]/);
  });
});

describe('reads, roles and the feature switch', () => {
  it('an unknown evaluation: the pinned 404', async () => {
    const r = await cli.get(`/api/v2/evaluations/${ORG}/0190abcd-0000-0000-0000-00000000`);
    expect(r.status).toBe(404);
    expect(r.json.message).toBe(
      `Evaluation '0190abcd-0000-0000-0000-00000000' does not exist in org '${ORG}'`,
    );
  });

  it('a reader polls but may not evaluate', async () => {
    const created = await post(body({ 'policy.cel': 'true' }));
    expect((await reader.get(`/api/v2/evaluations/${ORG}/${created.json.id}`)).status).toBe(200);
    expect((await post(body({ 'policy.cel': 'true' }), reader)).status).toBe(403);
    await terminal(created.json.id);
  });

  it('switched off by an admin, the pinned 403 answers; switched on again, evaluations run', async () => {
    const url = `/api/v2/organizations/${ORG}/features/server-side-evaluation`;
    expect((await cli.get(url)).json).toEqual({ feature: 'server-side-evaluation', enabled: true });
    expect((await member.json('PUT', url, { enabled: false })).status).toBe(403);
    const off = await cli.json('PUT', url, { enabled: false });
    expect(off.status, off.body).toBe(200);
    expect(off.json).toEqual({ feature: 'server-side-evaluation', enabled: false });
    const refused = await post(body({ 'policy.cel': 'true' }));
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe('Server-side evaluation is not enabled for this organization');
    expect((await cli.json('PUT', url, { enabled: null })).status).toBe(400);
    expect(
      (await cli.json('PUT', `/api/v2/organizations/${ORG}/features/other`, { enabled: true })).status,
    ).toBe(404);
    expect((await cli.json('PUT', url, { enabled: true })).status).toBe(200);
    const e = await evaluate(body({ 'policy.cel': 'true' }));
    expect(e.status).toBe('completed');
  });
});
