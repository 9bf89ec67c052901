/**
 * Policy preview (POST /environments/{org}/{env}/policy-preview): for each snapshot of a range,
 * which running artifacts' compliance would flip with policies detached or attached, judged on
 * the evidence as it stands now; nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';

const ORG = 'acme';
const SHOP = fp('a1');
const REDIS = fp('b2');
const PROVENANCE = `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`;
const LENIENT = `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: false\n`;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;

const report = (env: string, pods: unknown[]) =>
  cli.json('PUT', `/api/v2/environments/${ORG}/${env}/report/K8S`, { artifacts: pods });
const preview = (env: string, body: unknown, c = cli) =>
  c.json('POST', `/api/v2/environments/${ORG}/${env}/policy-preview`, body);
const shop = () => deployment('shop', 'registry.example/shop:1', SHOP, 1);
const redis = () => deployment('redis', 'redis:7', REDIS, 1);

beforeAll(async () => {
  t = await createTestApp();
  const key = await t.seedKey(ORG, 'admin');
  cli = cliClient(t.app, key);
  reader = cliClient(t.app, await t.seedKey(ORG, 'reader'));
  expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: 'shop', description: '' })).status).toBe(201);
  expect((await cli.json('PUT', `/api/v2/trails/${ORG}/shop`, { name: 'build-1' })).status).toBe(201);
  const art = await cli.json('POST', `/api/v2/artifacts/${ORG}/shop`, {
    fingerprint: SHOP,
    filename: 'registry.example/shop:1',
    build_url: 'https://ci.example/1',
    commit_url: 'https://git.example/c/1',
    trail_name: 'build-1',
  });
  expect(art.status, art.body).toBe(201);
  expect((await putPolicy(t.app, key, ORG, 'needs-provenance', PROVENANCE)).status).toBe(201);
  expect((await putPolicy(t.app, key, ORG, 'lenient', LENIENT)).status).toBe(201);
  for (const env of ['prod', 'dev']) {
    const r = await cli.json('PUT', `/api/v2/environments/${ORG}`, {
      name: env,
      type: 'K8S',
      description: '',
    });
    expect(r.status).toBe(201);
  }
  const attach = (env: string, names: string[]) =>
    cli.json('POST', `/api/v2/environments/${ORG}/${env}/policies`, { policy_names: names });
  expect((await attach('prod', ['needs-provenance', 'lenient'])).status).toBe(200);
  expect((await attach('dev', ['lenient'])).status).toBe(200);
  // prod: shop alone, then redis beside it (no provenance), then shop alone again.
  expect((await report('prod', shop())).json).toBe('Snapshot #1 created');
  expect((await report('prod', [...shop(), ...redis()])).json).toBe('Snapshot #2 created');
  expect((await report('prod', shop())).json).toBe('Snapshot #3 created');
  expect((await report('dev', [...shop(), ...redis()])).json).toBe('Snapshot #1 created');
});
afterAll(async () => t?.close());

describe('policy preview', () => {
  it('detaching the provenance policy: the snapshot where redis ran flips to compliant', async () => {
    const r = await preview('prod', { detach: ['needs-provenance'], snapshots: { from: 1, to: 3 } }, reader);
    expect(r.status, r.body).toBe(200);
    expect(r.json.summary).toEqual({
      snapshots: 3,
      flipped_snapshots: 1,
      flipped_artifacts: 1,
      changes_truncated: false,
    });
    expect(r.json.snapshots.map((s: any) => [s.index, s.compliant_now, s.compliant_with_change])).toEqual([
      [1, true, true],
      [2, false, true],
      [3, true, true],
    ]);
    expect(r.json.snapshots[0].changes).toEqual([]);
    expect(r.json.snapshots[1].changes).toEqual([
      {
        fingerprint: REDIS,
        name: 'redis:7',
        compliant_now: false,
        compliant_with_change: true,
        reasons: [expect.stringContaining("policy 'needs-provenance'")],
      },
    ]);
    expect(typeof r.json.snapshots[1].taken_at).toBe('number');
  });

  it('attaching it to dev shows what would fail there; the default is the latest snapshot', async () => {
    const r = await preview('dev', { attach: [{ name: 'needs-provenance', content: PROVENANCE }] });
    expect(r.status, r.body).toBe(200);
    expect(r.json.snapshots).toHaveLength(1);
    expect(r.json.snapshots[0]).toMatchObject({
      index: 1,
      compliant_now: true,
      compliant_with_change: false,
    });
    expect(r.json.snapshots[0].changes).toEqual([
      expect.objectContaining({ fingerprint: REDIS, compliant_now: true, compliant_with_change: false }),
    ]);
    expect(r.json.snapshots[0].changes[0].reasons.length).toBeGreaterThan(0);
  });

  it('changes nothing', async () => {
    // Every record in the transparency log first: sequencing alone would change a log_index.
    await t.app.transparencyLog.sequence();
    const before = [
      await cli.get(`/api/v2/environments/${ORG}/dev`),
      await cli.get(`/api/v2/snapshots/${ORG}/dev`),
    ];
    expect((await preview('dev', { attach: [{ name: 'x', content: PROVENANCE }] })).status).toBe(200);
    const after = [
      await cli.get(`/api/v2/environments/${ORG}/dev`),
      await cli.get(`/api/v2/snapshots/${ORG}/dev`),
    ];
    expect(before.map((r) => r.status)).toEqual([200, 200]);
    expect(after.map((r) => r.body)).toEqual(before.map((r) => r.body));
    expect((await cli.get(`/api/v2/policies/${ORG}/x`)).status).toBe(404);
  });

  it.each([
    ['from after to', { snapshots: { from: 3, to: 2 } }, 400, 'snapshots.from (3) is after snapshots.to (2)'],
    [
      'past the latest',
      { snapshots: { from: 1, to: 4 } },
      400,
      "snapshots.to is 4, but environment 'prod' has 3 snapshots",
    ],
    [
      'over 1,000 snapshots',
      { snapshots: { from: 1, to: 1001 } },
      400,
      'snapshots 1 to 1001 are 1001 snapshots, over the limit of 1000',
    ],
    [
      'an unknown policy to detach',
      { detach: ['nope'] },
      404,
      "Policy 'nope' does not exist in organization 'acme'",
    ],
    [
      'an attached policy that does not parse',
      { attach: [{ name: 'bad', content: 'artifacts: [' }] },
      400,
      'An attached policy is not a valid policy',
    ],
  ])('%s', async (_what, body, status, message) => {
    const r = await preview('prod', body);
    expect(r.status, r.body).toBe(status);
    expect(r.json.message).toBe(message);
  });

  it('an unknown field or environment', async () => {
    expect((await preview('prod', { detach: [], extra: 1 })).status).toBe(400);
    const r = await preview('nowhere', {});
    expect(r.status).toBe(404);
    expect(r.json.message).toBe("Environment named 'nowhere' does not exist for organization 'acme'");
  });
});
