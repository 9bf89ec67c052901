/** Search by name (`GET /search/{org}/names?q=`): flows, trails, environments and artifacts, bounded. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { fp } from '../helpers/runtime.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;
let other: ReturnType<typeof cliClient>;

async function flow(client: ReturnType<typeof cliClient>, org: string, name: string) {
  const r = await client.multipart('PUT', `/api/v2/flows/${org}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ name, description: `the ${name} pipeline` }) },
    { name: 'template_file', filename: 'template.yml', content: 'version: 1\n' },
  ]);
  expect(r.status, r.body).toBe(201);
}

const names = (q: string, client = reader, org = 'acme') =>
  client.get(`/api/v2/search/${org}/names?q=${encodeURIComponent(q)}`);

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  reader = cliClient(t.app, await t.seedKey('acme', 'reader'));
  other = cliClient(t.app, await t.seedKey('globex', 'admin'));
  await flow(cli, 'acme', 'payments');
  await flow(cli, 'acme', 'web_shop');
  await flow(other, 'globex', 'payments-globex');
  const trail = await cli.multipart('PUT', '/api/v2/trails/acme/payments', [
    { name: 'data_json', value: JSON.stringify({ name: 'payments-build-7', description: '' }) },
  ]);
  expect(trail.status, trail.body).toBe(201);
  const artifact = await cli.json('POST', '/api/v2/artifacts/acme/payments', {
    fingerprint: fp('7'),
    filename: 'ghcr.io/acme/payments-api:1.4.13',
    git_commit: '7'.repeat(40),
    build_url: 'https://ci.example/7',
    commit_url: 'https://git.example/7',
    trail_name: 'payments-build-7',
  });
  expect(artifact.status, artifact.body).toBe(201);
  expect(
    (await cli.json('PUT', '/api/v2/environments/acme', { name: 'payments-prod', type: 'K8S' })).status,
  ).toBe(201);
});
afterAll(async () => t?.close());

describe('search by name', () => {
  it('finds flows, trails, environments and artifacts whose name contains the text, any case, with links', async () => {
    const r = await names('PAYMENTS');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      query: 'PAYMENTS',
      limit: 20,
      flows: [
        {
          name: 'payments',
          description: 'the payments pipeline',
          html_url: 'http://verity.test/acme/flows/payments',
        },
      ],
      trails: [
        {
          flow: 'payments',
          name: 'payments-build-7',
          compliance_state: expect.any(String),
          html_url: 'http://verity.test/acme/flows/payments/trails/payments-build-7',
        },
      ],
      environments: [
        {
          name: 'payments-prod',
          type: 'K8S',
          html_url: 'http://verity.test/acme/environments/payments-prod',
        },
      ],
      artifacts: [
        {
          name: 'ghcr.io/acme/payments-api:1.4.13',
          fingerprint: fp('7'),
          flow: 'payments',
          trail: 'payments-build-7',
          compliance_state: expect.any(String),
          html_url: expect.stringMatching(
            new RegExp(`^http://verity\\.test/acme/flows/payments/artifacts/${fp('7')}\\?artifact_id=`),
          ),
        },
      ],
      more: { flows: false, trails: false, environments: false, artifacts: false },
    });
    // another organization's names never show
    expect(JSON.stringify(r.json)).not.toContain('globex');
    expect((await names('globex')).json.flows).toEqual([]);
    expect((await names('globex', other, 'globex')).json.flows.map((f: any) => f.name)).toEqual([
      'payments-globex',
    ]);
  });

  it('takes wildcards literally: _ and % match only themselves', async () => {
    expect((await names('b_s')).json.flows.map((f: any) => f.name)).toEqual(['web_shop']);
    expect((await names('b%s')).json.flows).toEqual([]);
    expect((await names('ymen')).json.flows.map((f: any) => f.name)).toEqual(['payments']);
  });

  it('answers at most 20 of a kind and says there are more', async () => {
    for (let i = 0; i < 21; i++) {
      await flow(cli, 'acme', `svc-${String(i).padStart(2, '0')}`);
    }
    const r = await names('svc-');
    expect(r.json.flows).toHaveLength(20);
    expect(r.json.flows[0].name).toBe('svc-00');
    expect(r.json.more).toEqual({ flows: true, trails: false, environments: false, artifacts: false });
  });

  it('refuses a missing, too short or too long text with a clear 400', async () => {
    const missing = await reader.get('/api/v2/search/acme/names');
    expect(missing.status).toBe(400);
    const short = await names('a');
    expect(short.status).toBe(400);
    expect(JSON.stringify(short.json)).toContain('give at least 2 characters of a name');
    const long = await names('x'.repeat(101));
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.json)).toContain('a name to search for is at most 100 characters');
    expect((await t.app.inject({ url: '/api/v2/search/acme/names?q=pay' })).statusCode).toBe(401);
  });
});
