/** Search by name (`GET /search/{org}/names?q=`): flows, trails, environments and artifacts, bounded. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  NAME_SEARCH_WINDOW,
  nameSearchQueries,
} from '../../services/api/src/storage/repositories/name-search.js';
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

  it('finds a name among thousands through the trigram index of each kind', async () => {
    // 3,000 of each kind in an organization of its own, seeded in SQL, with table statistics;
    // each name holds a hash of its number, so most of its trigrams are rare.
    const initech = cliClient(t.app, await t.seedKey('initech', 'reader'));
    const db = t.db.db;
    const { rows } = await sql<{ id: string }>`select id from orgs where name = 'initech'`.execute(db);
    const org = rows[0]!.id;
    const at = new Date('2026-01-01T00:00:00Z');
    await sql`insert into flows (org_id, id, name, created_by, created_at, last_modified_at)
      select ${org}, 'f' || i, 'team-' || md5(i::text), 'seed', ${at}, ${at} from generate_series(1, 3000) i`.execute(
      db,
    );
    await sql`insert into trails (org_id, id, flow_id, name, created_by, created_at, last_modified_at,
        compliance, compliance_state, evaluated_at)
      select ${org}, 't' || i, 'f1', 'build-' || md5(i::text), 'seed', ${at}::timestamptz + i * interval '1 second',
        ${at}, '{}'::jsonb, 'COMPLIANT', ${at} from generate_series(1, 3000) i`.execute(db);
    await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, created_by,
        created_at, last_modified_at, state, compliance)
      select ${org}, 'a' || i, 'f1', 't' || i, lpad(to_hex(i), 64, '0'), 'registry.example/svc-' || md5(i::text) || ':1.0',
        'seed', ${at}::timestamptz + i * interval '1 second', ${at}, 'COMPLIANT', '{}'::jsonb
      from generate_series(1, 3000) i`.execute(db);
    // 10,000 more artifacts newer than these, on the last trail
    await sql`insert into artifacts (org_id, id, flow_id, trail_id, fingerprint, filename, created_by,
        created_at, last_modified_at, state, compliance)
      select ${org}, 'b' || i, 'f1', 't3000', lpad(to_hex(i), 63, '0') || 'f', 'registry.example/new-' || i || ':1.0',
        'seed', ${at}::timestamptz + interval '1 hour' + i * interval '1 second', ${at}, 'COMPLIANT', '{}'::jsonb
      from generate_series(1, ${NAME_SEARCH_WINDOW}) i`.execute(db);
    await sql`insert into environments (org_id, id, name, type, created_by, created_at, last_modified_at)
      select ${org}, 'e' || i, 'env-' || md5(i::text), 'K8S', 'seed', ${at}, ${at} from generate_series(1, 3000) i`.execute(
      db,
    );
    await sql`analyze flows, trails, artifacts, environments`.execute(db);

    const hash = createHash('md5').update('2718').digest('hex');
    const text = hash.slice(4, 16);
    const r = await names(text.toUpperCase(), initech, 'initech');
    expect(r.status).toBe(200);
    expect(r.json.flows.map((f: any) => f.name)).toEqual([`team-${hash}`]);
    expect(r.json.trails.map((x: any) => x.name)).toEqual([`build-${hash}`]);
    expect(r.json.environments.map((e: any) => e.name)).toEqual([`env-${hash}`]);
    expect(r.json.artifacts.map((a: any) => [a.name, a.trail])).toEqual([
      [`registry.example/svc-${hash}:1.0`, `build-${hash}`],
    ]);

    const plan = async (query: { explain(): Promise<Record<string, unknown>[]> }) =>
      (await query.explain()).map((row) => Object.values(row).join(' ')).join('\n');
    expect(await plan(nameSearchQueries.flows(db, org, text, 20))).toContain('flows_name_trgm_idx');
    expect(await plan(nameSearchQueries.trails(db, org, text, 20))).toContain('trails_name_trgm_idx');
    expect(await plan(nameSearchQueries.environments(db, org, text, 20))).toContain(
      'environments_name_trgm_idx',
    );
    expect(await plan(nameSearchQueries.artifacts(db, org, text, 20))).toContain(
      'artifacts_filename_trgm_idx',
    );
  }, 120_000);

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
