/**
 * The four DORA keys and a repository's delivery as a client sees them, over the history of
 * helpers/delivery-history.ts. Worked out by hand, for T to T+24h:
 *  - deployments: prod#1 (change lead 3 h), staging#1 (1 h), prod#2 (2 h; rolled back 3 h later),
 *    prod#3 (no provenance, no lead; non-compliant at once), prod#5 (a rollback, no lead): 5;
 *  - lead time for changes over 3600, 7200, 10800 s: p50 7200, p90 7200 + 0.8 x 3600 = 10080;
 *  - change failures within 24 h: prod#2 (rolled back) and prod#3 (non-compliant): 2 of 5;
 *  - time to restore: prod non-compliant from T+5h to T+6h: one restore of 3600 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as m0387 from '../../services/api/src/storage/migrations/0387_deployments.js';
import {
  A1,
  A3,
  C1,
  C3,
  deliveryHistory,
  FLOW,
  ORG,
  OTHER,
  REPO,
  type DeliveryHistory,
} from '../helpers/delivery-history.js';

let h: DeliveryHistory;

beforeAll(async () => {
  h = await deliveryHistory();
});
afterAll(async () => h?.t.close());

const dora = async (query: string) => {
  const r = await h.reader.get(`/api/v2/dora/${ORG}?${query}`);
  expect(r.status, r.body).toBe(200);
  return r.json;
};
const day = () => `from=${h.at(0)}&to=${h.at(24)}&bucket=day`;
const follow = async (url: string) => {
  const r = await h.reader.get(url.replace('http://verity.test', ''));
  expect(r.status, r.body).toBe(200);
  return (r.json as { deployments: any[] }).deployments.map((d) => `${d.environment}#${d.snapshot_index}`);
};

describe('DORA keys', () => {
  it('answers the four keys for the whole range and per day', async () => {
    const a = await dora(day());
    expect(a.query).toEqual({
      environment: null,
      repo: null,
      from: h.at(0),
      to: h.at(24),
      bucket: 'day',
      failure_window: 86_400,
    });
    expect(a.total).toMatchObject({
      from: h.at(0),
      to: h.at(24),
      deployment_frequency: { deployments: 5, per_day: 5 },
      lead_time_for_changes: { p50: 7200, p90: 10080, deployments: 3 },
      change_failure_rate: { rate: 0.4, failures: 2, deployments: 5 },
      time_to_restore: { p50: 3600, p90: 3600, restores: 1 },
    });
    // T is noon: the first day holds half a day of the range, the second the other half.
    expect(a.buckets).toHaveLength(2);
    expect(a.buckets[0]).toMatchObject({
      from: h.at(0),
      to: h.at(12),
      deployment_frequency: { deployments: 5, per_day: 10 },
      lead_time_for_changes: { p50: 7200, p90: 10080, deployments: 3 },
      change_failure_rate: { rate: 0.4, failures: 2, deployments: 5 },
      time_to_restore: { p50: 3600, p90: 3600, restores: 1 },
    });
    expect(a.buckets[1]).toMatchObject({
      from: h.at(12),
      to: h.at(24),
      deployment_frequency: { deployments: 0, per_day: 0 },
      lead_time_for_changes: { p50: null, p90: null, deployments: 0 },
      change_failure_rate: { rate: null, failures: 0, deployments: 0 },
      time_to_restore: { p50: null, p90: null, restores: 0 },
    });
  });

  it('links each figure to the deployments it counts', async () => {
    const a = await dora(day());
    expect(await follow(a.total.deployment_frequency.deployments_url)).toEqual([
      'prod#5',
      'prod#3',
      'prod#2',
      'staging#1',
      'prod#1',
    ]);
    expect(await follow(a.total.change_failure_rate.failures_url)).toEqual(['prod#3', 'prod#2']);
    expect(await follow(a.buckets[1].deployment_frequency.deployments_url)).toEqual([]);
    const prod = await dora(`${day()}&environment=prod&failure_window=3600`);
    expect(await follow(prod.total.change_failure_rate.failures_url)).toEqual(['prod#3']);
    expect(a.total.time_to_restore.snapshots_url).toBeNull();
    const snapshots = await h.reader.get(
      prod.total.time_to_restore.snapshots_url.replace('http://verity.test', ''),
    );
    expect(snapshots.status, snapshots.body).toBe(200);
    expect((snapshots.json as any[]).find((s) => s.index === 3)).toMatchObject({
      compliance_state: 'NON-COMPLIANT',
    });
  });

  it('narrows to an environment, a repository and a failure window', async () => {
    expect((await dora(`${day()}&environment=prod`)).total).toMatchObject({
      deployment_frequency: { deployments: 4 },
      // 7200 and 10800: p50 9000, p90 7200 + 0.9 x 3600.
      lead_time_for_changes: { p50: 9000, p90: 10440, deployments: 2 },
      change_failure_rate: { rate: 0.5, failures: 2 },
      time_to_restore: { p50: 3600, restores: 1 },
    });
    expect((await dora(`${day()}&environment=staging`)).total).toMatchObject({
      deployment_frequency: { deployments: 1 },
      lead_time_for_changes: { p50: 3600, p90: 3600 },
      change_failure_rate: { rate: 0, failures: 0 },
      time_to_restore: { p50: null, restores: 0 },
    });
    // Rolled back after 3 h: not a failure within an hour; the stranger still is.
    expect(
      (await dora(`${day()}&environment=prod&failure_window=3600`)).total.change_failure_rate,
    ).toMatchObject({
      rate: 0.25,
      failures: 1,
    });
    // The stranger was built from no repository; restores stay environment-wide.
    expect((await dora(`${day()}&repo=${encodeURIComponent(REPO)}`)).total).toMatchObject({
      deployment_frequency: { deployments: 4 },
      lead_time_for_changes: { p50: 7200, p90: 10080 },
      change_failure_rate: { rate: 0.25, failures: 1 },
      time_to_restore: { restores: 1 },
    });
  });

  it('buckets by ISO week, and takes the last 30 days by default', async () => {
    const week = await dora(`from=${h.at(0)}&to=${h.at(24)}&bucket=week`);
    // Sunday noon to Monday noon: the end of one week and the start of the next.
    expect(week.buckets.map((b: any) => [b.from, b.to, b.deployment_frequency.deployments])).toEqual([
      [h.at(0), h.at(12), 5],
      [h.at(12), h.at(24), 0],
    ]);
    const recent = await dora('');
    expect(recent.query).toMatchObject({ from: h.at(9) - 30 * 86_400, to: h.at(9), bucket: 'week' });
    expect(recent.total.deployment_frequency.deployments).toBe(5);
  });

  it('refuses bad input with a 400 that names it', async () => {
    const cases: Array<[string, string]> = [
      ['bucket=month', 'query.bucket'],
      [`from=${h.at(5)}&to=${h.at(1)}`, 'query.from'],
      [`from=${h.at(0) - 500 * 86_400}&to=${h.at(0)}&bucket=day`, 'query.from'],
      ['failure_window=10', 'query.failure_window'],
      ['to=soon', 'query.to'],
    ];
    for (const [q, field] of cases) {
      const r = await h.reader.get(`/api/v2/dora/${ORG}?${q}`);
      expect(r.status, `${q}: ${r.body}`).toBe(400);
      expect(JSON.stringify(r.json), q).toContain(field);
    }
    expect((await h.reader.get(`/api/v2/dora/${ORG}?environment=nowhere`)).status).toBe(404);
  });

  it('writes each definition into the OpenAPI description', async () => {
    const doc = (await h.t.app.inject({ url: '/api/v2/openapi.json' })).json();
    const text: string = doc.paths['/api/v2/dora/{org}'].get.description;
    for (const key of [
      'Deployment frequency',
      'Lead time for changes',
      'Change failure rate',
      'Time to restore',
    ]) {
      expect(text).toContain(`**${key}**`);
    }
    expect(doc.paths['/api/v2/deployments/{org}'].get.description).toContain('rollback');
  });

  it("shows another organization nothing of this one's", async () => {
    expect((await h.other.get(`/api/v2/dora/${ORG}`)).status).toBe(403);
    const own = await h.other.get(`/api/v2/dora/${OTHER}?from=${h.at(0)}&to=${h.at(24)}`);
    expect(own.status).toBe(200);
    expect(own.json.total).toMatchObject({
      deployment_frequency: { deployments: 0 },
      time_to_restore: { restores: 0 },
    });
  });
});

describe('repository delivery', () => {
  const expected = () => ({
    repo: REPO,
    from: h.at(0),
    to: h.at(24),
    // A1 at T, A2 and A3 at T+3h.
    builds: [
      { from: h.at(0), builds: 3 },
      { from: h.at(12), builds: 0 },
    ],
    environments: [
      {
        environment: 'prod',
        deployments: 3,
        lead_time_for_changes: { p50: 9000, p90: 10440 },
        deployments_url: `http://verity.test/api/v2/deployments/acme?environment=prod&repo=acme%2Fshop&from=${h.at(0)}&to=${h.at(24)}`,
        running_count: 1,
        running: [
          {
            name: 'registry.example/shop:1',
            fingerprint: A1,
            flow: FLOW,
            trail: 'b1',
            git_commit: C1,
            commit_timestamp: h.at(-2),
            html_url: expect.stringContaining(`/acme/flows/shop/artifacts/${A1}`),
          },
        ],
      },
      {
        environment: 'staging',
        deployments: 1,
        lead_time_for_changes: { p50: 3600, p90: 3600 },
        deployments_url: expect.stringContaining('environment=staging'),
        running_count: 1,
        running: [
          {
            name: 'registry.example/shop:3',
            fingerprint: A3,
            flow: FLOW,
            trail: 'b3',
            git_commit: C3,
            commit_timestamp: h.at(2.5),
            html_url: expect.stringContaining(`/acme/flows/shop/artifacts/${A3}`),
          },
        ],
      },
    ],
  });

  it('gives builds over time, deployments and lead time per environment, and what runs now by commit', async () => {
    const r = await h.reader.get(`/api/v2/repos/${ORG}/${REPO}/delivery?${day()}`);
    expect(r.status, r.body).toBe(200);
    expect(r.json).toEqual(expected());
    const encoded = await h.reader.get(`/api/v2/repos/${ORG}/${encodeURIComponent(REPO)}/delivery?${day()}`);
    expect(encoded.status, encoded.body).toBe(200);
    expect(encoded.json).toEqual(expected());
  });

  it('answers 404 for a repository it does not know, and 400 for a bad range', async () => {
    const r = await h.reader.get(`/api/v2/repos/${ORG}/acme/nope/delivery`);
    expect(r.status).toBe(404);
    expect((r.json as { message: string }).message).toBe("Repo 'acme/nope' not found");
    expect((await h.reader.get(`/api/v2/repos/${ORG}/${REPO}/delivery?bucket=year`)).status).toBe(400);
    expect((await h.other.get(`/api/v2/repos/${ORG}/${REPO}/delivery`)).status).toBe(403);
    // The repo itself is still answered by its own path.
    expect((await h.reader.get(`/api/v2/repos/${ORG}/${REPO}`)).status).toBe(200);
  });
});

// Last: it rebuilds the tables from the history, as an upgrade does.
describe('upgrade', () => {
  it('fills time to restore and artifact lead times from the history recorded before it', async () => {
    const restores = async () => (await dora(day())).total.time_to_restore;
    const leadTimes = async () => {
      const r = await h.reader.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${A3}`);
      expect(r.status, r.body).toBe(200);
      const { commit_lead_times, build_lead_times } = r.json as Record<string, unknown>;
      return { commit_lead_times, build_lead_times };
    };
    const before = { restores: await restores(), leadTimes: await leadTimes() };
    expect(before.leadTimes).toEqual({
      commit_lead_times: { prod: 5400, staging: 3600 },
      build_lead_times: { prod: 3600, staging: 1800 },
    });
    const db = h.t.db.db as unknown as Parameters<typeof m0387.up>[0];
    await m0387.down(db);
    await m0387.up(db);
    // A write, so no reader is answered from a view cached before the rebuild.
    const write = await h.cli.json('PUT', `/api/v2/environments/${ORG}`, {
      name: 'dev',
      type: 'K8S',
      description: '',
    });
    expect(write.status, write.body).toBe(201);
    expect({ restores: await restores(), leadTimes: await leadTimes() }).toEqual(before);
    // What a past start replaced and brought was never recorded: deployments start with the upgrade.
    expect((await h.reader.get(`/api/v2/deployments/${ORG}`)).json).toEqual({
      deployments: [],
      next: null,
      offset: 0,
      total_count: 0,
      total_count_capped: false,
    });
  });
});
