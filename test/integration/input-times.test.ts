/**
 * Times a request carries, as epoch seconds or ISO 8601, lie between year 1 and year 9999: any
 * other is a 400 naming the field before a query runs, never a 500 after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';

const ORG = 'acme';
const FP = 'a'.repeat(64);
const COMMIT = 'c'.repeat(40);
const RANGE = 'must be a time from 0001-01-01 to 9999-12-31';
let t: TestApp;
let api: ReturnType<typeof client>;

const artifact = (name: string, timestamp: number) =>
  api.post(`/api/v2/artifacts/${ORG}/f1`, {
    fingerprint: FP,
    filename: name,
    git_commit: COMMIT,
    git_commit_info: { sha1: COMMIT, message: 'm', author: 'a', branch: 'main', timestamp },
    build_url: 'https://ci.example/1',
    commit_url: 'https://git.example/1',
    trail_name: 't1',
  });
const report = (creationTimestamp: number) =>
  api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
    artifacts: [{ podName: 'p', namespace: 'n', digests: { img: FP }, creationTimestamp }],
  });

beforeAll(async () => {
  t = await createTestApp();
  api = client(t.app, await t.seedKey(ORG, 'admin'));
  expect((await api.put(`/api/v2/flows/${ORG}`, { name: 'f1' })).status).toBe(201);
  expect((await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S' })).status).toBe(201);
  expect((await artifact('app', 1_700_000_000)).status).toBe(201);
  expect((await report(1_700_000_000)).status).toBe(200);
});
afterAll(async () => t?.close());

describe('query times', () => {
  it('refuses exposure from=99999999999999999999 with 400 naming the field', async () => {
    const res = await api.get(`/api/v2/exposure/${ORG}?fingerprint=${FP}&from=99999999999999999999`);
    expect(res.status, res.body).toBe(400);
    expect(res.json.errors).toEqual({ 'query.from': RANGE });
  });

  it('refuses an exposure ISO time before year 1, and takes one inside the range', async () => {
    const early = await api.get(`/api/v2/exposure/${ORG}?fingerprint=${FP}&to=0000-01-01T00:00:00Z`);
    expect(early.status, early.body).toBe(400);
    expect(early.json.errors).toEqual({ 'query.to': RANGE });
    const fine = await api.get(`/api/v2/exposure/${ORG}?fingerprint=${FP}&to=9999-12-31T00:00:00Z`);
    expect(fine.status, fine.body).toBe(200);
  });

  it('refuses environment events with start_ts or end_ts out of range', async () => {
    for (const q of ['start_ts=1e20', 'end_ts=-1e15']) {
      const res = await api.get(`/api/v2/environments/${ORG}/prod/events?${q}`);
      expect(res.status, `${q}: ${res.body}`).toBe(400);
      expect(res.json.errors).toEqual({ [`query.${q.split('=')[0]}`]: RANGE });
    }
    expect((await api.get(`/api/v2/environments/${ORG}/prod/events?start_ts=0`)).status).toBe(200);
  });

  it('refuses a snapshot N.unit.ago further back than 10000 years, and answers one before year 1', async () => {
    const far = await api.get(`/api/v2/snapshots/${ORG}/prod/@%7B99999999999999.years.ago%7D`);
    expect(far.status, far.body).toBe(400);
    expect(far.json.message).toMatch(/further back than 10000 years/);
    const early = await api.get(`/api/v2/snapshots/${ORG}/prod/@%7B9000.years.ago%7D`);
    expect(early.status, early.body).toBe(404);
    const events = await api.get(`/api/v2/environments/${ORG}/prod/events?start=9000%20years`);
    expect(events.status, events.body).toBe(200);
  });
});

describe('body times', () => {
  it('refuses a git commit timestamp past year 9999, and stores nothing', async () => {
    const res = await artifact('late', 1e20);
    expect(res.status, res.body).toBe(400);
    expect(res.json.errors).toEqual({ 'body.git_commit_info.timestamp': RANGE });
    const record = await api.get(`/api/v2/artifacts/${ORG}/f1/fingerprint/${FP}`);
    expect(record.json.filename).toBe('app');
  });

  it("takes Go's zero time (year 1) as a commit timestamp", async () => {
    // The artifact exists already: reporting it again is a 200.
    const res = await artifact('zero', -62_135_596_800);
    expect(res.status, res.body).toBe(200);
  });

  it('refuses a pod creationTimestamp past year 9999 in an environment report', async () => {
    const res = await report(9e15);
    expect(res.status, res.body).toBe(400);
    expect(res.json.errors).toEqual({ 'body.artifacts[0].creationTimestamp': RANGE });
  });
});
