/** Environments, reports and snapshots over HTTP: spec rules 2-4 and section 5 as a client sees them. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp, pod, putPolicy, POLICY_SCHEMA } from '../helpers/runtime.js';
import type {
  DiffArtifact,
  Environment,
  EnvironmentEvent,
  SnapshotArtifact,
  SnapshotListItem,
} from '../suite/wire.js';

let t: TestApp;
let api: ReturnType<typeof client>;
let snapshotter: ReturnType<typeof client>;
let reader: ReturnType<typeof client>;
const ORG = 'acme';
const API_V1 = fp('1');
const API_V2 = fp('2');
const WEB = fp('3');

beforeAll(async () => {
  t = await createTestApp();
  api = client(t.app, await t.seedKey(ORG, 'member'));
  snapshotter = client(t.app, await t.seedKey(ORG, 'snapshotter'));
  reader = client(t.app, await t.seedKey(ORG, 'reader'));
});
afterAll(async () => t?.close());

const report = (env: string, artifacts: unknown[], who = snapshotter) =>
  who.put(`/api/v2/environments/${ORG}/${env}/report/K8S`, { artifacts });
const latest = async (env: string) => (await api.get(`/api/v2/snapshots/${ORG}/${env}/-1`)).json;
const count = async (env: string) =>
  (await api.get(`/api/v2/environments/${ORG}/${env}`)).json.latest_snapshot_index;

describe('environments', () => {
  it('is 404 exactly when missing, then created (201) and re-PUT (200) by a Snapshotter', async () => {
    const missing = await snapshotter.get(`/api/v2/environments/${ORG}/prod`);
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe(`Environment named 'prod' does not exist for organization '${ORG}'`);
    const body = { name: 'prod', type: 'K8S', description: 'Auto-created by kosli snapshot' };
    const created = await snapshotter.put(`/api/v2/environments/${ORG}`, body);
    expect(created.status).toBe(201);
    expect(created.json).toBe('OK');
    expect((await snapshotter.put(`/api/v2/environments/${ORG}`, body)).status).toBe(200);
    const got = await reader.get(`/api/v2/environments/${ORG}/prod`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      org: ORG,
      name: 'prod',
      type: 'K8S',
      description: 'Auto-created by kosli snapshot',
      state: null,
      tags: {},
      policies: [],
      include_scaling: false,
      last_reported_at: null,
    });
  });

  it('refuses bad input with field errors and changes nothing', async () => {
    const bad = await api.put(`/api/v2/environments/${ORG}`, {
      name: '-bad',
      type: 'K9S',
      description: '',
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.errors)).toEqual(
      expect.arrayContaining(['body.name', 'body.type', 'body.extra']),
    );
    const typeChange = await api.put(`/api/v2/environments/${ORG}`, {
      name: 'prod',
      type: 'ECS',
      description: '',
    });
    expect(typeChange.status).toBe(400);
    expect(typeChange.json.errors).toEqual({ 'body.type': 'must be K8S' });
    expect(
      (await reader.put(`/api/v2/environments/${ORG}`, { name: 'x', type: 'K8S', description: '' })).status,
    ).toBe(403);
  });

  it('sets and removes tags with PATCH /tags/{org}/env/{name}, as the CLI sends it', async () => {
    const tag = (who: ReturnType<typeof client>, type: string, name: string, body: unknown) =>
      who.patch(`/api/v2/tags/${ORG}/${type}/${name}`, body);
    expect((await tag(api, 'env', 'prod', { set_tags: { team: 'core', tier: '1' } })).json).toBe('OK');
    const changed = await tag(api, 'environment', 'prod', { set_tags: { tier: '2' }, remove_tags: ['team'] });
    expect(changed.status).toBe(200);
    // A key both set and removed ends up removed, as on flows.
    expect(
      (await tag(api, 'environments', 'prod', { set_tags: { x: '1' }, remove_tags: ['x'] })).status,
    ).toBe(200);
    const missing = await tag(api, 'env', 'nope', { set_tags: { a: 'b' } });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe(`Environment named 'nope' does not exist for organization '${ORG}'`);
    expect((await tag(reader, 'env', 'prod', { set_tags: { a: 'b' } })).status).toBe(403);
    expect((await tag(api, 'env', 'prod', { set_tags: { a: 1 } })).status).toBe(400);
    expect((await reader.get(`/api/v2/environments/${ORG}/prod`)).json.tags).toEqual({ tier: '2' });
    expect(
      (await reader.get(`/api/v2/environments/${ORG}?tag=tier:2`)).json.map((e: Environment) => e.name),
    ).toEqual(['prod']);
    expect((await reader.get(`/api/v2/environments/${ORG}?tag=tier:3`)).json).toEqual([]);
    // Another organization's key never reaches these tags.
    const other = client(t.app, await t.seedKey('globex', 'admin'));
    expect((await other.patch(`/api/v2/tags/${ORG}/env/prod`, { set_tags: { evil: '1' } })).status).toBe(403);
    expect((await reader.get(`/api/v2/environments/${ORG}/prod`)).json.tags).toEqual({ tier: '2' });
  });

  it('lists as a plain array, or a page when asked, filtered by type', async () => {
    await api.put(`/api/v2/environments/${ORG}`, { name: 'lambdas', type: 'lambda', description: '' });
    const plain = await api.get(`/api/v2/environments/${ORG}`);
    expect(plain.json.map((e: Environment) => e.name)).toEqual(['lambdas', 'prod']);
    const page = await api.get(`/api/v2/environments/${ORG}?page=1&per_page=1&type=K8S`);
    expect(page.json).toMatchObject({ page: 1, per_page: 1, total_count: 1, total_pages: 1 });
    expect(page.json.environments.map((e: Environment) => e.name)).toEqual(['prod']);
  });
});

describe('snapshots: spec rules 2-4 over HTTP', () => {
  const base = [...deployment('api', 'registry/api:1', API_V1, 3), pod('web-0', { 'registry/web:1': WEB })];

  it('makes snapshot #1 on the first report, with started annotations and pods', async () => {
    const res = await report('prod', base);
    expect(res.status).toBe(200);
    expect(res.json).toBe('Snapshot #1 created');
    const snap = await latest('prod');
    expect(snap).toMatchObject({
      index: 1,
      is_latest: true,
      type: 'K8S',
      compliant: false,
      compliance_state: 'UNKNOWN',
    });
    const api1 = snap.artifacts.find((a: SnapshotArtifact) => a.fingerprint === API_V1);
    expect(api1).toMatchObject({
      name: 'registry/api:1',
      annotation: { type: 'started-unknown', was: 0, now: 3 },
      creationTimestamp: [1_700_000_000, 1_700_000_001, 1_700_000_002],
      flow_name: '',
      git_commit: '',
      compliant: null,
    });
    expect(Object.keys(api1.pods)).toEqual(['api-0', 'api-1', 'api-2']);
    expect(api1.pods['api-0']).toMatchObject({ namespace: 'prod', creationTimestamp: 1_700_000_000 });
    expect(snap.artifact_compliance_count).toEqual({ true: 0, false: 0, null: 2 });
  });

  it('rule 2: the same report twice makes no snapshot, but moves last_reported_at', async () => {
    t.clock.advance(60_000);
    const res = await report('prod', base);
    expect(res.json).toBe('No new snapshots to create');
    expect(await count('prod')).toBe(1);
    const env = (await api.get(`/api/v2/environments/${ORG}/prod`)).json;
    expect(env.last_reported_at).toBe(t.clock.seconds());
  });

  it('rule 4: 3 -> 5 replicas makes no snapshot', async () => {
    const res = await report('prod', [
      ...deployment('api', 'registry/api:1', API_V1, 5),
      pod('web-0', { 'registry/web:1': WEB }),
    ]);
    expect(res.json).toBe('No new snapshots to create');
    expect(await count('prod')).toBe(1);
    // The latest snapshot shows the instances running now.
    const snap = await latest('prod');
    expect(
      snap.artifacts.find((a: SnapshotArtifact) => a.fingerprint === API_V1).creationTimestamp,
    ).toHaveLength(5);
  });

  it('rule 3: a restarted pod (new name and timestamp, same image) makes no snapshot', async () => {
    const res = await report('prod', [
      ...deployment('api', 'registry/api:1', API_V1, 5),
      pod('web-restarted', { 'registry/web:1': WEB }, 1_700_009_999),
    ]);
    expect(res.json).toBe('No new snapshots to create');
    expect(await count('prod')).toBe(1);
  });

  it('a new image makes one snapshot with started and exited annotations', async () => {
    t.clock.advance(60_000);
    const res = await report('prod', [
      ...deployment('api', 'registry/api:2', API_V2, 2),
      pod('web-restarted', { 'registry/web:1': WEB }, 1_700_009_999),
    ]);
    expect(res.json).toBe('Snapshot #2 created');
    const snap = await latest('prod');
    expect(snap.summary).toEqual({ started: 1, changed: 0, exited: 1 });
    const byFp = Object.fromEntries(
      snap.artifacts.map((a: SnapshotArtifact) => [a.fingerprint, a.annotation]),
    );
    expect(byFp).toEqual({
      [API_V2]: { type: 'started-unknown', was: 0, now: 2 },
      [API_V1]: { type: 'exited', was: 5, now: 0 },
      [WEB]: { type: 'unchanged', was: 1, now: 1 },
    });
  });

  it('artifacts leaving in one report keep their own instance counts', async () => {
    await api.put(`/api/v2/environments/${ORG}`, { name: 'exits', type: 'K8S', description: '' });
    await report('exits', [
      ...deployment('api', 'registry/api:1', API_V1, 3),
      ...deployment('api2', 'registry/api:2', API_V2, 2),
      pod('web-0', { 'registry/web:1': WEB }),
    ]);
    t.clock.advance(60_000);
    expect((await report('exits', [pod('web-0', { 'registry/web:1': WEB })])).json).toBe(
      'Snapshot #2 created',
    );
    const byFp = Object.fromEntries(
      (await latest('exits')).artifacts.map((a: SnapshotArtifact) => [a.fingerprint, a.annotation]),
    );
    expect(byFp).toEqual({
      [API_V1]: { type: 'exited', was: 3, now: 0 },
      [API_V2]: { type: 'exited', was: 2, now: 0 },
      [WEB]: { type: 'unchanged', was: 1, now: 1 },
    });
  });

  it('a policy attached makes one snapshot, and compliance is frozen per snapshot', async () => {
    const key = await t.seedKey(ORG, 'member');
    expect(
      (
        await putPolicy(
          t.app,
          key,
          ORG,
          'needs-provenance',
          `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`,
        )
      ).status,
    ).toBe(201);
    const attach = await api.post(`/api/v2/environments/${ORG}/prod/policies`, {
      policy_names: ['needs-provenance'],
    });
    expect(attach.status).toBe(200);
    const snap = await latest('prod');
    expect(snap).toMatchObject({ index: 3, compliant: false, compliance_state: 'NON-COMPLIANT' });
    expect(snap.applied_policies).toMatchObject([
      { name: 'needs-provenance', version: 1, failing_artifacts: [API_V2, WEB].sort() },
    ]);
    expect(snap.applied_policies[0].policy_dump.artifacts.provenance).toEqual({
      required: true,
      exceptions: [],
    });
    const a = snap.artifacts.find((x: SnapshotArtifact) => x.fingerprint === API_V2);
    expect(a.compliant).toBe(false);
    expect(a.reasons_for_incompliance).toEqual(["policy 'needs-provenance' v1: provenance: no_provenance"]);
    expect(a.policy_decisions[0].rule_evaluations[0]).toMatchObject({
      satisfied: false,
      resolutions: [{ type: 'no_provenance' }],
    });
    expect((await api.get(`/api/v2/environments/${ORG}/prod`)).json).toMatchObject({
      state: false,
      policies: ['needs-provenance'],
    });
    // Attaching the same policy again changes nothing.
    await api.post(`/api/v2/environments/${ORG}/prod/policies`, { policy_names: ['needs-provenance'] });
    expect(await count('prod')).toBe(3);
    // Snapshot #2 keeps the verdict it recorded.
    expect((await api.get(`/api/v2/snapshots/${ORG}/prod/2`)).json.compliance_state).toBe('UNKNOWN');
  });

  it('an allow-listed fingerprint becomes compliant in a new snapshot', async () => {
    for (const [fingerprint, name] of [
      [API_V2, 'registry/api:2'],
      [WEB, 'registry/web:1'],
    ]) {
      const res = await api.put(`/api/v2/allowlists/${ORG}/prod`, {
        artifact_fingerprint: fingerprint,
        artifact_name: name,
        description: 'trusted',
      });
      expect(res.status).toBe(201);
    }
    const snap = await latest('prod');
    expect(snap).toMatchObject({ index: 5, compliant: true, compliance_state: 'COMPLIANT' });
    expect(snap.artifacts.find((a: SnapshotArtifact) => a.fingerprint === WEB)).toMatchObject({
      allowlisted: true,
      annotation: { type: 'became-compliant', was: 1, now: 1 },
    });
    const list = await reader.get(`/api/v2/allowlists/${ORG}`);
    expect(list.json).toHaveLength(2);
    expect(list.json[0]).toMatchObject({ environment_name: 'prod', description: 'trusted' });
  });
});

describe('reading snapshots', () => {
  it.each([
    ['1', 1],
    ['%231', 1],
    ['-1', 5],
    ['-2', 4],
    ['~1', 4],
    ['@%7Bnow%7D', 5],
  ])('resolves %s to #%d', async (expr, index) => {
    const res = await reader.get(`/api/v2/snapshots/${ORG}/prod/${expr}`);
    expect(res.status).toBe(200);
    expect(res.json.index).toBe(index);
  });

  it('resolves a time to the snapshot in force then', async () => {
    const iso = new Date(t.clock.now().getTime() - 90_000).toISOString().slice(0, 19);
    const res = await reader.get(`/api/v2/snapshots/${ORG}/prod/@%7B${iso}%7D`);
    expect(res.json.index).toBe(1);
  });

  it('answers 404 out of range and 400 for nonsense', async () => {
    const out = await reader.get(`/api/v2/snapshots/${ORG}/prod/%2399`);
    expect(out.status).toBe(404);
    expect(out.json.message).toContain('Indexes are 1-based');
    const bad = await reader.get(`/api/v2/snapshots/${ORG}/prod/yesterday`);
    expect(bad.status).toBe(400);
    expect((await reader.get(`/api/v2/snapshots/${ORG}/nope/-1`)).status).toBe(404);
  });

  it('counts the artifacts running in the latest snapshot on the environment and in the list', async () => {
    const running = (await latest('prod')).artifacts.filter(
      (a: SnapshotArtifact) => a.annotation.type !== 'exited',
    ).length;
    expect(running).toBeGreaterThan(0);
    expect((await reader.get(`/api/v2/environments/${ORG}/prod`)).json.running_artifacts).toBe(running);
    const page = (await reader.get(`/api/v2/environments/${ORG}?page=1&per_page=50`)).json;
    expect(page.environments.find((e: Environment) => e.name === 'prod').running_artifacts).toBe(running);
  });

  it('lists each snapshot with the same summary and compliance state as reading it', async () => {
    const list = (await reader.get(`/api/v2/snapshots/${ORG}/prod?per_page=100`)).json;
    expect(list.length).toBeGreaterThan(1);
    for (const item of list) {
      const one = (await reader.get(`/api/v2/snapshots/${ORG}/prod/${item.index}`)).json;
      expect(item.summary).toEqual(one.summary);
      expect(item.compliance_state).toBe(one.compliance_state);
    }
    expect(list.some((s: SnapshotListItem) => s.summary.started > 0)).toBe(true);
  });

  it('lists snapshots newest first with from, to (0 = current), duration and compliant', async () => {
    const res = await reader.get(`/api/v2/snapshots/${ORG}/prod?page=1&per_page=2&interval=&reverse=false`);
    expect(res.json.map((s: SnapshotListItem) => s.index)).toEqual([5, 4]);
    expect(res.json[0]).toMatchObject({ to: 0, compliant: true });
    expect(typeof res.json[1].duration).toBe('number');
    const range = await reader.get(`/api/v2/snapshots/${ORG}/prod?interval=1..2&reverse=true`);
    expect(range.json.map((s: SnapshotListItem) => s.index)).toEqual([1, 2]);
    expect(range.json[0].to).toBe(range.json[1].from);
  });

  it('lists events newest first with pagination headers', async () => {
    const res = await reader.get(
      `/api/v2/environments/${ORG}/prod/events?page=1&per_page=3&interval=&reverse=false`,
    );
    expect(res.status).toBe(200);
    expect(res.headers['x-total-count']).toBe('8');
    expect(res.json).toHaveLength(3);
    const all = (await reader.get(`/api/v2/environments/${ORG}/prod/events?per_page=100&reverse=true`)).json;
    expect(all.map((e: EnvironmentEvent) => [e.snapshot_index, e.type])).toEqual([
      [1, 'started-unknown'],
      [1, 'started-unknown'],
      [2, 'exited'],
      [2, 'started-unknown'],
      [3, 'became-non-compliant'],
      [3, 'became-non-compliant'],
      [4, 'became-compliant'],
      [5, 'became-compliant'],
    ]);
    expect(all[0]).toMatchObject({
      environment_name: 'prod',
      description: '3 instances started running (from 0 to 3)',
      pipeline: '',
    });
  });

  it('pages and filters events in the database: a page reads its own snapshots only', async () => {
    await api.put(`/api/v2/environments/${ORG}`, { name: 'long', type: 'K8S', description: '' });
    for (let i = 0; i < 30; i++) {
      t.clock.advance(60_000);
      const seed = i.toString(16).padStart(2, '0');
      expect((await report('long', deployment('app', `app:${i}`, fp(seed), 1 + (i % 2)))).status).toBe(200);
    }
    const events = (q: string) => reader.get(`/api/v2/environments/${ORG}/long/events?${q}`);
    const everything = (await events('per_page=100&reverse=true')).json as EnvironmentEvent[];
    expect(everything).toHaveLength(59);

    // The largest result any one query hands back while a page is read.
    const executor = t.db.db.getExecutor();
    const original = executor.executeQuery.bind(executor);
    let largest = 0;
    executor.executeQuery = (async (...args: Parameters<typeof original>) => {
      const result = await original(...args);
      largest = Math.max(largest, result.rows.length);
      return result;
    }) as typeof executor.executeQuery;
    try {
      const page = await events('page=3&per_page=4&reverse=false');
      expect(page.headers['x-total-count']).toBe('59');
      expect(page.json).toEqual(everything.slice().reverse().slice(8, 12));
      expect(largest).toBeLessThanOrEqual(8);
    } finally {
      executor.executeQuery = original;
    }

    // Pages join up to the whole list, both ways, and time bounds select by snapshot time.
    for (const reverse of ['true', 'false']) {
      const pages: EnvironmentEvent[] = [];
      for (let page = 1; page <= 15; page++) {
        pages.push(...(await events(`page=${page}&per_page=4&reverse=${reverse}`)).json);
      }
      expect(pages).toEqual(reverse === 'true' ? everything : everything.slice().reverse());
    }
    const [from, to] = [everything[10]!.reported_at, everything[40]!.reported_at];
    const between = await events(`per_page=100&reverse=true&start_ts=${from}&end_ts=${to}`);
    const expected = everything.filter((e) => e.reported_at >= from && e.reported_at <= to);
    expect(between.json).toEqual(expected);
    expect(between.headers['x-total-count']).toBe(String(expected.length));
    expect((await events(`page=9&per_page=4&start_ts=${from}&end_ts=${to}`)).json).toEqual([]);
  });

  it('filters events by the repo the artifacts were reported from (log environment --repo)', async () => {
    const FROM_REPO = fp('9');
    const ELSEWHERE = fp('8');
    const repo_info = { name: 'acme/svc', url: 'https://github.com/acme/svc', id: '7', provider: 'github' };
    expect((await api.put(`/api/v2/flows/${ORG}`, { name: 'svc', description: '' })).status).toBeLessThan(
      300,
    );
    const reported = await api.post(`/api/v2/artifacts/${ORG}/svc`, {
      fingerprint: FROM_REPO,
      filename: 'registry/svc:1',
      build_url: 'b',
      commit_url: 'c',
      trail_name: 'svc-1',
      repo_info,
    });
    expect(reported.status).toBe(201);
    await api.put(`/api/v2/environments/${ORG}`, { name: 'repo-env', type: 'K8S', description: '' });
    const snapshot = await report('repo-env', [
      ...deployment('svc', 'registry/svc:1', FROM_REPO, 1),
      ...deployment('other', 'registry/other:1', ELSEWHERE, 1),
    ]);
    expect(snapshot.json).toBe('Snapshot #1 created');
    const events = (q: string) => reader.get(`/api/v2/environments/${ORG}/repo-env/events?per_page=100${q}`);
    expect((await events('')).json.map((e: EnvironmentEvent) => e.sha256).sort()).toEqual(
      [FROM_REPO, ELSEWHERE].sort(),
    );
    const filtered = await events('&repo_name=acme/svc');
    expect(filtered.status).toBe(200);
    expect(filtered.json.map((e: EnvironmentEvent) => [e.sha256, e.pipeline])).toEqual([[FROM_REPO, 'svc']]);
    expect(filtered.headers['x-total-count']).toBe('1');
    expect((await events('&repo_name=acme/nothing&repo_name=acme/svc')).json).toHaveLength(1);
    expect((await events('&repo_name=acme/nothing')).json).toEqual([]);
  });

  it('diffs two snapshots by fingerprint', async () => {
    const res = await reader.get(`/api/v2/env-diff/${ORG}?snappish1=prod%231&snappish2=prod`);
    expect(res.status).toBe(200);
    expect(res.json.snappish1.artifacts.map((a: DiffArtifact) => a.fingerprint)).toEqual([API_V1]);
    expect(res.json.snappish2.artifacts.map((a: DiffArtifact) => a.fingerprint)).toEqual([API_V2]);
    expect(res.json['not-changed'].artifacts.map((a: DiffArtifact) => a.fingerprint)).toEqual([WEB]);
    expect(res.json.snappish1.artifacts[0]).toMatchObject({
      s1_instance_count: 3,
      s2_instance_count: 0,
      pods: ['api-0', 'api-1', 'api-2'],
    });
    expect((await reader.get(`/api/v2/env-diff/${ORG}?snappish1=nope&snappish2=prod`)).json.message).toBe(
      'Bad snappish nope',
    );
  });
});

describe('reports', () => {
  it('refuses invalid reports with field errors, unknown environments with 404, and the wrong type', async () => {
    const bad = await report('prod', [
      { podName: 'x', namespace: 'n', digests: { img: 'nothex' }, creationTimestamp: 1 },
    ]);
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.json.errors)[0]).toMatch(/^body\.artifacts\[0\]\.digests/);
    expect((await report('nope', [])).status).toBe(404);
    const wrong = await snapshotter.put(`/api/v2/environments/${ORG}/prod/report/ECS`, { artifacts: [] });
    expect(wrong.status).toBe(400);
    expect((await reader.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts: [] })).status).toBe(
      403,
    );
  });

  it('takes every report type through the same path', async () => {
    await api.put(`/api/v2/environments/${ORG}`, { name: 'ecs', type: 'ECS', description: '' });
    const res = await snapshotter.put(`/api/v2/environments/${ORG}/ecs/report/ECS`, {
      artifacts: [
        {
          taskArn: 'arn:t1',
          cluster_name: 'c',
          service_name: 's',
          digests: { 'api:1': API_V1, sidecar: '' },
          creationTimestamp: 5,
        },
      ],
    });
    expect(res.json).toBe('Snapshot #1 created');
    const snap = (await api.get(`/api/v2/snapshots/${ORG}/ecs/-1`)).json;
    expect(snap.artifacts).toHaveLength(1);
    expect(snap.artifacts[0]).toMatchObject({
      pods: null,
      ecs_context: { task_arn: 'arn:t1', cluster_name: 'c' },
    });
    const lambda = await snapshotter.put(`/api/v2/environments/${ORG}/lambdas/report/lambda`, {
      artifacts: [{ digests: { fn: WEB }, creationTimestamp: 5 }],
    });
    expect(lambda.json).toBe('Snapshot #1 created');
  });

  it('exposes runtime metrics with bounded labels', async () => {
    await api.put(`/api/v2/environments/${ORG}`, { name: 'never-reported', type: 'K8S', description: '' });
    const res = await t.app.metrics.server.inject({ url: '/metrics' });
    expect(res.body).toMatch(/verity_environment_compliant\{org="acme",environment="prod"\} 1/);
    expect(res.body).not.toMatch(/verity_environment_compliant\{org="acme",environment="ecs"\}/);
    expect(res.body).toMatch(
      /verity_environment_last_report_age_seconds\{org="acme",environment="prod"\} \d/,
    );
    expect(res.body).toMatch(/verity_environment_snapshot_age_seconds\{org="acme",environment="prod"\} \d/);
    // An environment never reported has no age.
    expect(res.body).not.toMatch(
      /verity_environment_snapshot_age_seconds\{org="acme",environment="never-reported"\}/,
    );
    expect(res.body).not.toMatch(
      /verity_environment_last_report_age_seconds\{org="acme",environment="never-reported"\}/,
    );
    expect(res.body).toMatch(/verity_snapshots_created_total\{cause="report"\} \d+/);
    expect(res.body).toMatch(/verity_reports_total\{result="unchanged"\} 3/);
    expect(res.body).toMatch(/verity_reports_total\{result="rejected"\} \d/);
    expect(res.body).not.toContain(API_V1);
  });

  it('exports every metric the alerts of the Helm chart read', async () => {
    const rules = readFileSync(
      new URL('../../charts/verity/templates/prometheusrule.yaml', import.meta.url),
      'utf8',
    );
    const names = [...rules.matchAll(/"(verity_[a-z_]+)"/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThanOrEqual(4);
    const res = await t.app.metrics.server.inject({ url: '/metrics' });
    for (const name of names) {
      expect(res.body, name).toContain(`# TYPE ${name} `);
    }
  });
});

describe('rename, archive, logical environments', () => {
  it('renames, joins a logical environment and archives', async () => {
    expect(
      (await api.put(`/api/v2/environments/${ORG}/lambdas/rename`, { new_name: 'functions' })).status,
    ).toBe(200);
    expect((await api.get(`/api/v2/environments/${ORG}/lambdas`)).status).toBe(404);
    expect((await api.put(`/api/v2/environments/${ORG}/functions/rename`, { new_name: 'prod' })).status).toBe(
      400,
    );
    await api.put(`/api/v2/environments/${ORG}`, {
      name: 'all',
      type: 'logical',
      description: '',
      included_environments: ['prod'],
    });
    expect(
      (await api.put(`/api/v2/environments/${ORG}/all/join`, { physical_env_name: 'functions' })).status,
    ).toBe(200);
    expect((await api.get(`/api/v2/environments/${ORG}/all`)).json.included_environments).toEqual([
      'functions',
      'prod',
    ]);
    expect((await report('all', [])).status).toBe(400);
    expect((await snapshotter.put(`/api/v2/environments/${ORG}/functions/archive`, null)).status).toBe(403);
    expect((await api.put(`/api/v2/environments/${ORG}/functions/archive`, null)).status).toBe(200);
    expect((await api.get(`/api/v2/environments/${ORG}`)).json.map((e: Environment) => e.name)).not.toContain(
      'functions',
    );
    // An archived environment reads as gone, saying so (Kosli's answer, which the Terraform provider
    // and `kosli snapshot --auto-environment` act on).
    const archived = await api.get(`/api/v2/environments/${ORG}/functions`);
    expect(archived.status).toBe(404);
    expect(archived.json.message).toBe(
      "Environment named 'functions' has been archived for organization 'acme'",
    );
  });

  it('lets kosli snapshot --auto-environment bring an archived environment back with a member key only', async () => {
    // What the CLI does before a snapshot: GET, and on 404 PUT the environment, then report.
    const autoEnvironment = async (client: typeof api, env: string) => {
      const got = await client.get(`/api/v2/environments/${ORG}/${env}`);
      if (got.status === 404) {
        const body = { name: env, type: 'K8S', description: 'Auto-created by kosli snapshot' };
        const put = await client.put(`/api/v2/environments/${ORG}`, body);
        if (put.status >= 300) {
          return put;
        }
      }
      return report(env, []);
    };
    expect((await api.put(`/api/v2/environments/${ORG}`, { name: 'staging', type: 'K8S' })).status).toBe(201);
    expect((await api.put(`/api/v2/environments/${ORG}/staging/archive`, null)).status).toBe(200);
    // Archiving is a member's decision: a snapshotter's re-create of it is refused, and it stays archived.
    const refused = await autoEnvironment(snapshotter, 'staging');
    expect(refused.status).toBe(403);
    expect(refused.json.message).toContain('archived');
    expect((await api.get(`/api/v2/environments/${ORG}/staging`)).status).toBe(404);
    // The 404 of its read makes the CLI re-create it; with a member key that un-archives it.
    const reported = await autoEnvironment(api, 'staging');
    expect(reported.status).toBe(200);
    expect((await api.get(`/api/v2/environments/${ORG}/staging`)).json.archived).toBe(false);
  });

  it('patches description and policies (Terraform)', async () => {
    const res = await api.patch(`/api/v2/environments/${ORG}/prod`, {
      description: 'production',
      policies: [],
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ description: 'production', policies: [], state: null });
    const snap = await latest('prod');
    expect(snap).toMatchObject({ index: 6, compliance_state: 'UNKNOWN', applied_policies: [] });
    expect((await api.patch(`/api/v2/environments/${ORG}/prod`, { policies: ['nope'] })).status).toBe(400);
  });
});
