/**
 * `GET /environments-now/{org}`: a page of environments by name, each with what runs in it now
 * and how many deployments started there since a time, as the snapshots and the deployments list
 * answer them; over the history of helpers/delivery-history.ts, with two more environments: one
 * never reported, one running more artifacts than the answer names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployment, fp } from '../helpers/runtime.js';
import { A1, A3, deliveryHistory, ORG, OTHER, type DeliveryHistory } from '../helpers/delivery-history.js';

let h: DeliveryHistory;
const MANY = Array.from({ length: 7 }, (_, i) => ({ name: `svc-${i}`, fp: fp(`d${i}`) }));

beforeAll(async () => {
  h = await deliveryHistory();
  for (const name of ['yard', 'zeta']) {
    const r = await h.cli.json('PUT', `/api/v2/environments/${ORG}`, { name, type: 'K8S', description: '' });
    expect(r.status, r.body).toBe(201);
  }
  // reported in reverse order: the answer names them by name all the same
  await h.report(
    'zeta',
    [...MANY].reverse().flatMap((m) => deployment(m.name, `registry.example/${m.name}:1`, m.fp, 1)),
    'Snapshot #1 created',
  );
});
afterAll(async () => h?.t.close());

async function now(query = '', client = h.reader) {
  const r = await client.get(`/api/v2/environments-now/${ORG}${query}`);
  expect(r.status, r.body).toBe(200);
  return r.json;
}

describe('environments now', () => {
  it('answers per environment what runs now and its deployments since a time, as the snapshots and deployments do', async () => {
    const since = h.at(4.5);
    const answer = await now(`?since=${since}`);
    expect(answer).toMatchObject({ since, page: 1, per_page: 20, total_count: 4, next: null });
    expect(answer.environments.map((e: any) => e.environment.name)).toEqual([
      'prod',
      'staging',
      'yard',
      'zeta',
    ]);
    const [prod, staging, yard, zeta] = answer.environments;

    // prod runs shop:1 again (rolled back), compliant under its provenance policy; staging shop:3
    expect(prod.running).toEqual([
      expect.objectContaining({ name: 'registry.example/shop:1', fingerprint: A1, compliant: true }),
    ]);
    expect(prod.running[0].html_url).toMatch(new RegExp(`/acme/flows/shop/artifacts/${A1}\\?`));
    expect(staging.running).toEqual([
      expect.objectContaining({ name: 'registry.example/shop:3', fingerprint: A3, compliant: null }),
    ]);
    expect([prod.running_count, staging.running_count]).toEqual([1, 1]);
    // since 4.5 h: the debug container (5 h) and the rollback (7 h) in prod; none in staging
    expect([prod.deployments, staging.deployments]).toEqual([2, 0]);
    for (const e of [prod, staging]) {
      const list = await h.reader.get(e.deployments_url.replace(/^.*\/api\/v2/, '/api/v2'));
      expect(list.status).toBe(200);
      expect(list.json.deployments).toHaveLength(e.deployments);
      const snapshot = (await h.reader.get(`/api/v2/snapshots/${ORG}/${e.environment.name}/-1`)).json;
      expect(e.running.map((a: any) => [a.name, a.fingerprint, a.compliant, a.html_url])).toEqual(
        snapshot.artifacts.map((a: any) => [a.name, a.fingerprint, a.compliant, a.html_url]),
      );
    }
    // never reported: nothing runs, nothing deployed, and the environment says so
    expect(yard).toMatchObject({ running: [], running_count: 0, deployments: 0 });
    expect(yard.environment.latest_snapshot_index).toBeNull();
    // seven run: the first five by name are named, all seven counted
    expect(zeta.running.map((a: any) => a.name)).toEqual(
      MANY.slice(0, 5).map((m) => `registry.example/${m.name}:1`),
    );
    expect(zeta.running_count).toBe(7);
    expect(zeta.deployments).toBe(7);
  });

  it('counts the last week by default', async () => {
    const answer = await now();
    expect(answer.since).toBe(h.at(9) - 7 * 86_400);
    const prod = answer.environments[0];
    const all = (await h.reader.get(`/api/v2/deployments/${ORG}?environment=prod`)).json;
    expect(prod.deployments).toBe(all.deployments.length);
    expect(prod.deployments).toBeGreaterThan(2);
  });

  it('pages by name with a next link and the total', async () => {
    const first = await now('?per_page=3');
    expect(first.total_count).toBe(4);
    expect(first.environments.map((e: any) => e.environment.name)).toEqual(['prod', 'staging', 'yard']);
    expect(first.next).toMatch(/\/api\/v2\/environments-now\/acme\?since=[\d.]+&page=2&per_page=3$/);
    const second = await now(first.next.replace(/^.*\/environments-now\/acme/, ''));
    expect(second).toMatchObject({ page: 2, total_count: 4, next: null, since: first.since });
    expect(second.environments.map((e: any) => e.environment.name)).toEqual(['zeta']);
    const beyond = await now('?page=9');
    expect(beyond).toMatchObject({ environments: [], total_count: 4, next: null });
  });

  it('refuses bad input with a 400 that names it', async () => {
    const cases: Array<[string, string]> = [
      ['since=soon', 'query.since'],
      ['per_page=51', 'query.per_page'],
      ['page=0', 'query.page'],
      ['environment=prod', 'environment'],
    ];
    for (const [q, field] of cases) {
      const r = await h.reader.get(`/api/v2/environments-now/${ORG}?${q}`);
      expect(r.status, `${q}: ${r.body}`).toBe(400);
      expect(JSON.stringify(r.json), q).toContain(field);
    }
  });

  it("shows another organization nothing of this one's", async () => {
    expect((await h.other.get(`/api/v2/environments-now/${ORG}`)).status).toBe(403);
    const r = await h.other.get(`/api/v2/environments-now/${OTHER}`);
    expect(r.status, r.body).toBe(200);
    expect(r.json).toMatchObject({ environments: [], total_count: 0, next: null });
  });
});
