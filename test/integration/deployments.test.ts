/**
 * Deployments and lead times as a client sees them, over the history of
 * helpers/delivery-history.ts, whose answers are worked out by hand: a first deployment, a
 * scaling-only change, a deployment of several commits, a second environment, an artifact without
 * provenance that makes production non-compliant and its restore, a rollback, and a fingerprint
 * scaled to zero and back (a restart, no deployment).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from '../helpers/runtime.js';
import {
  A1,
  A2,
  A3,
  C1,
  C2,
  C3,
  deliveryHistory,
  FLOW,
  ORG,
  OTHER,
  REPO,
  sha,
  X,
  type DeliveryHistory,
} from '../helpers/delivery-history.js';

let h: DeliveryHistory;
let t: DeliveryHistory['t'];
let reader: DeliveryHistory['reader'];
let other: DeliveryHistory['other'];
const at = (hours: number) => h.at(hours);

beforeAll(async () => {
  h = await deliveryHistory();
  ({ t, reader, other } = h);
});
afterAll(async () => t?.close());

const commitRow = (c: string, ts: number) => ({
  sha1: c,
  timestamp: ts,
  author: 'Dev <dev@example.com>',
  message: `change ${c.slice(0, 2)}`,
});

describe('deployments', () => {
  it('lists what started where, newest first, with what it replaced, its commits and lead times', async () => {
    const r = await reader.get(`/api/v2/deployments/${ORG}`);
    expect(r.status, r.body).toBe(200);
    const body = r.json as { deployments: any[]; next: string | null };
    expect(body.next).toBeNull();
    expect(body.deployments.map((d) => [d.environment, d.snapshot_index, d.artifact.fingerprint])).toEqual([
      ['prod', 5, A1],
      ['prod', 3, X],
      ['prod', 2, A3],
      ['staging', 1, A3],
      ['prod', 1, A1],
    ]);
    const [rollback, stranger, several, staging, first] = body.deployments;
    expect(first).toEqual({
      environment: 'prod',
      snapshot_index: 1,
      started_at: at(1),
      artifact: {
        name: 'registry.example/shop:1',
        fingerprint: A1,
        flow: FLOW,
        trail: 'b1',
        git_commit: C1,
        html_url: expect.stringMatching(/^http:\/\/verity\.test\/acme\/flows\/shop\/artifacts\/a1a1/),
      },
      replaced: [],
      rollback: false,
      commit_lead_time: 3 * 3600,
      build_lead_time: 3600,
      change_lead_time: 3 * 3600,
      commits: [commitRow(C1, at(-2))],
      compliant: true,
    });
    // Several commits: C2 (never deployed on its own) and C3, after A1's C1.
    expect(several).toMatchObject({
      replaced: [{ name: 'registry.example/shop:1', fingerprint: A1, git_commit: C1 }],
      rollback: false,
      commit_lead_time: 1.5 * 3600,
      build_lead_time: 3600,
      change_lead_time: 2 * 3600,
      commits: [commitRow(C2, at(2)), commitRow(C3, at(2.5))],
      compliant: true,
    });
    expect(staging).toMatchObject({
      replaced: [],
      commit_lead_time: 3600,
      build_lead_time: 1800,
      change_lead_time: 3600,
      commits: [commitRow(C3, at(2.5))],
      compliant: null,
    });
    expect(stranger).toEqual({
      environment: 'prod',
      snapshot_index: 3,
      started_at: at(5),
      artifact: {
        name: 'registry.example/debug:1',
        fingerprint: X,
        flow: null,
        trail: null,
        git_commit: null,
        html_url: null,
      },
      replaced: [],
      rollback: false,
      commit_lead_time: null,
      build_lead_time: null,
      change_lead_time: null,
      commits: [],
      compliant: false,
    });
    // A rollback brings no change: no commits, no change lead time.
    expect(rollback).toMatchObject({
      started_at: at(7),
      replaced: [{ name: 'registry.example/shop:3', fingerprint: A3, git_commit: C3 }],
      rollback: true,
      commit_lead_time: 9 * 3600,
      build_lead_time: 7 * 3600,
      change_lead_time: null,
      commits: [],
      compliant: true,
    });
  });

  it('filters by environment, flow, repository and time, ISO 8601 or epoch seconds', async () => {
    const fps = async (q: string) => {
      const r = await reader.get(`/api/v2/deployments/${ORG}?${q}`);
      expect(r.status, r.body).toBe(200);
      return (r.json as { deployments: any[] }).deployments.map(
        (d) => `${d.environment}#${d.snapshot_index}`,
      );
    };
    expect(await fps('environment=staging')).toEqual(['staging#1']);
    expect(await fps(`repo=${encodeURIComponent(REPO)}`)).toEqual([
      'prod#5',
      'prod#2',
      'staging#1',
      'prod#1',
    ]);
    expect(await fps(`flow=${FLOW}&environment=prod`)).toEqual(['prod#5', 'prod#2', 'prod#1']);
    expect(await fps(`from=${at(4)}&to=${at(7)}`)).toEqual(['prod#3', 'prod#2']);
    const iso = (h: number) => encodeURIComponent(new Date(at(h) * 1000).toISOString());
    expect(await fps(`from=${iso(4)}&to=${iso(7)}`)).toEqual(['prod#3', 'prod#2']);
    // Failed within a day: A3's deployment (rolled back 3 h later) and the stranger (non-compliant at once).
    expect(await fps('failed_within=86400')).toEqual(['prod#3', 'prod#2']);
    expect(await fps('failed_within=3600')).toEqual(['prod#3']);
    expect(await fps('repo=nobody')).toEqual([]);
  });

  it('pages with a next link that carries the filters, until there is no more, saying where and of how many', async () => {
    const seen: string[] = [];
    let url: string | null = `/api/v2/deployments/${ORG}?environment=prod&per_page=2`;
    const links: string[] = [];
    const counts: Array<[number | null, number, boolean]> = [];
    while (url) {
      const r = await reader.get(url.replace('http://verity.test', ''));
      expect(r.status, r.body).toBe(200);
      const body = r.json as {
        deployments: any[];
        next: string | null;
        offset: number | null;
        total_count: number;
        total_count_capped: boolean;
      };
      seen.push(...body.deployments.map((d) => `${d.environment}#${d.snapshot_index}`));
      counts.push([body.offset, body.total_count, body.total_count_capped]);
      if (body.next) {
        links.push(body.next);
      }
      url = body.next;
    }
    expect(seen).toEqual(['prod#5', 'prod#3', 'prod#2', 'prod#1']);
    // the second page starts after the first two of the four
    expect(counts).toEqual([
      [0, 4, false],
      [2, 4, false],
    ]);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(
      /^http:\/\/verity\.test\/api\/v2\/deployments\/acme\?environment=prod&per_page=2&page=/,
    );
  });

  it('refuses bad input with a 400 that names it', async () => {
    const cases: Array<[string, string]> = [
      ['page=not-a-cursor', 'query.page'],
      ['from=yesterday', 'query.from'],
      [`from=${at(5)}&to=${at(1)}`, 'query.from'],
      ['per_page=0', 'query.per_page'],
      ['per_page=501', 'query.per_page'],
      ['failed_within=0', 'query.failed_within'],
      ['colour=red', 'query'],
    ];
    for (const [q, field] of cases) {
      const r = await reader.get(`/api/v2/deployments/${ORG}?${q}`);
      expect(r.status, `${q}: ${r.body}`).toBe(400);
      expect(JSON.stringify(r.json), q).toContain(field.replace('query', ''));
    }
    const unknown = await reader.get(`/api/v2/deployments/${ORG}?environment=nowhere`);
    expect(unknown.status).toBe(404);
    expect((unknown.json as { message: string }).message).toBe(
      "Environment named 'nowhere' does not exist for organization 'acme'",
    );
  });

  it("shows another organization none of this organization's deployments", async () => {
    const r = await other.get(`/api/v2/deployments/${OTHER}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      deployments: [],
      next: null,
      offset: 0,
      total_count: 0,
      total_count_capped: false,
    });
    expect((await other.get(`/api/v2/deployments/${ORG}`)).status).toBe(403);
  });

  it('counts deployments per organization and environment on the metrics port', async () => {
    const text = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
    expect(text).toContain('verity_deployments_total{org="acme",environment="prod"} 4');
    expect(text).toContain('verity_deployments_total{org="acme",environment="staging"} 1');
    // Change lead times observed: 3 h, 1 h (staging), 2 h; rollbacks and the stranger have none.
    expect(text).toContain('verity_deployment_lead_time_seconds_count{org="acme"} 3');
    expect(text).toContain(`verity_deployment_lead_time_seconds_sum{org="acme"} ${6 * 3600}`);
  });
});

describe('lead times', () => {
  const artifact = async (f: string) => {
    const r = await reader.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${f}`);
    expect(r.status, r.body).toBe(200);
    return r.json as { commit_lead_times: Record<string, number>; build_lead_times: Record<string, number> };
  };

  it('records on each artifact the time from its commit and its build to its first run in each environment', async () => {
    expect(await artifact(A3)).toMatchObject({
      commit_lead_times: { prod: 1.5 * 3600, staging: 3600 },
      build_lead_times: { prod: 3600, staging: 1800 },
    });
    expect(await artifact(A2)).toMatchObject({ commit_lead_times: {}, build_lead_times: {} });
  });

  it('keeps them once known: a rollback and a restart do not change them', async () => {
    expect(await artifact(A1)).toMatchObject({
      commit_lead_times: { prod: 3 * 3600 },
      build_lead_times: { prod: 3600 },
    });
  });

  it("shows commit_lead_time on each flow of a snapshot's artifacts", async () => {
    const r = await reader.get(`/api/v2/snapshots/${ORG}/prod/2`);
    expect(r.status, r.body).toBe(200);
    const a3 = (r.json as { artifacts: any[] }).artifacts.find((a) => a.fingerprint === A3);
    expect(a3.flows).toHaveLength(1);
    expect(a3.flows[0]).toMatchObject({ flow_name: FLOW, commit_lead_time: 1.5 * 3600 });
    const latest = await reader.get(`/api/v2/snapshots/${ORG}/prod/7`);
    const a1 = (latest.json as { artifacts: any[] }).artifacts.find((a) => a.fingerprint === A1);
    expect(a1.flows[0].commit_lead_time).toBe(3 * 3600);
  });

  it('measures an artifact reported after it started running from the start of that run, and attributes its deployment', async () => {
    const late = fp('b7');
    const latest = async () => {
      const r = await reader.get(`/api/v2/deployments/${ORG}?environment=staging&per_page=1`);
      expect(r.status, r.body).toBe(200);
      return (r.json as { deployments: any[] }).deployments[0];
    };
    h.advanceTo(10);
    await h.report(
      'staging',
      [...h.shop('3', A3, 1), ...deployment('late', 'registry.example/late:1', late, 1)],
      'Snapshot #2 created',
    );
    expect(await latest()).toMatchObject({
      snapshot_index: 2,
      artifact: { fingerprint: late, flow: null, git_commit: null },
      change_lead_time: null,
    });
    h.advanceTo(11);
    await h.attestArtifact(late, sha('d4'), at(9), 'b4', 'registry.example/late:1');
    await t.app.runtime.processMarks();
    expect(await artifact(late)).toMatchObject({
      commit_lead_times: { staging: 3600 },
      // Reported an hour after it started.
      build_lead_times: { staging: -3600 },
    });
    expect(await latest()).toMatchObject({
      snapshot_index: 2,
      started_at: at(10),
      artifact: { fingerprint: late, flow: FLOW, trail: 'b4', git_commit: sha('d4') },
      commit_lead_time: 3600,
      build_lead_time: -3600,
      change_lead_time: 3600,
      commits: [{ sha1: sha('d4'), timestamp: at(9) }],
    });
    const byRepo = await reader.get(`/api/v2/deployments/${ORG}?repo=${encodeURIComponent(REPO)}&per_page=1`);
    expect((byRepo.json as { deployments: any[] }).deployments[0].artifact.fingerprint).toBe(late);
  });

  it('counts a deployment as failed when its artifact later turns the environment non-compliant', async () => {
    const cli = h.cli;
    expect(
      (await cli.json('PUT', `/api/v2/environments/${ORG}`, { name: 'qa', type: 'K8S', description: '' }))
        .status,
    ).toBe(201);
    const policy = await putPolicy(
      t.app,
      await t.seedKey(ORG, 'admin'),
      ORG,
      'trail-ok',
      `${POLICY_SCHEMA}artifacts:\n  trail-compliance:\n    required: true\n`,
    );
    expect(policy.status).toBe(201);
    expect(
      (await cli.json('POST', `/api/v2/environments/${ORG}/qa/policies`, { policy_names: ['trail-ok'] }))
        .status,
    ).toBe(200);
    h.advanceTo(12);
    await h.report('qa', h.shop('3', A3, 1), 'Snapshot #1 created');
    const failed = async (within: number) => {
      const r = await reader.get(`/api/v2/deployments/${ORG}?environment=qa&failed_within=${within}`);
      expect(r.status, r.body).toBe(200);
      return (r.json as { deployments: any[] }).deployments.map(
        (d) => `${d.environment}#${d.snapshot_index}`,
      );
    };
    expect(await failed(86_400)).toEqual([]);
    // An hour later a failing test result lands on A3's trail: qa turns non-compliant because of A3.
    h.advanceTo(13);
    const attested = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/b3/generic`, [
      {
        name: 'data_json',
        value: JSON.stringify({ attestation_name: 'tests', is_compliant: false, user_data: {} }),
      },
    ]);
    expect(attested.status, attested.body).toBe(201);
    await t.app.runtime.processMarks();
    const latest = await reader.get(`/api/v2/snapshots/${ORG}/qa/-1`);
    expect(latest.json).toMatchObject({ index: 2, compliance_state: 'NON-COMPLIANT' });
    expect(await failed(7200)).toEqual(['qa#1']);
    expect(await failed(1800)).toEqual([]);
  });
});
