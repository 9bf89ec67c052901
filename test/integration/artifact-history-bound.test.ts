/**
 * The history an artifact's answer carries, as a client sees it, on an artifact with more events
 * than an answer shows: its first event (its report to the trail) and its 100 most recent, oldest
 * first, with `history_total` counting them all. Where it runs and ran (`running`, `exited`) still
 * comes from every environment's latest runtime event, however old, and every path that shows the
 * artifact (by fingerprint, by id, in the flow's listing, by commit, in a search) shows the same.
 * The whole history is offered page by page. The trail's own answer bounds its event log the
 * same way (`events`, `events_total`), pages it, and its audit package keeps all of it.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp } from '../helpers/runtime.js';
import { untar } from '../helpers/tar.js';
import { until } from '../helpers/wait.js';

const ORG = 'acme';
const FLOW = 'ci';
const TRAIL = 'run-1';
const COMMIT = 'e'.repeat(40);
const FP = fp('f7');
const FEW = fp('a3');
const ATTESTATIONS = 150;
const SHOWN_RECENT = 100;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

interface Answer {
  id: string;
  fingerprint: string;
  running: Array<{ environment_name: string; snapshot_index: number }>;
  exited: Array<{ environment_name: string; snapshot_index: number }>;
  history: Array<{ event: string; timestamp: number }>;
  history_total: number;
}

const artifact = async (fingerprint: string, query = '') => {
  const r = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${fingerprint}${query}`);
  expect(r.status, r.body).toBe(200);
  return r;
};

async function report(env: string, fingerprints: string[]) {
  const artifacts = fingerprints.flatMap((f) => deployment('backend', `registry.example/backend@${f}`, f, 1));
  const r = await cli.json('PUT', `/api/v2/environments/${ORG}/${env}/report/K8S`, { artifacts });
  expect(r.status, r.body).toBeLessThan(300);
}

async function attest(fingerprint: string, i: number) {
  t.clock.advance(1000);
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${TRAIL}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: `check-${i % 4}`,
        is_compliant: i % 5 !== 0,
        artifact_fingerprint: fingerprint,
      }),
    },
  ]);
  expect(r.status, r.body).toBe(201);
}

const line = (i: number) =>
  `Attestation 'check-${i % 4}' (generic) reported: ${i % 5 !== 0 ? 'compliant' : 'non-compliant'}`;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: FLOW, description: '' })).status).toBe(201);
  expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${FLOW}`, { name: TRAIL })).status).toBe(201);
  for (const f of [FP, FEW]) {
    const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
      fingerprint: f,
      filename: `backend-${f.slice(0, 4)}`,
      git_commit: COMMIT,
      build_url: 'https://ci/1',
      commit_url: 'https://git/1',
      trail_name: TRAIL,
    });
    expect(r.status, r.body).toBe(201);
  }
  for (const env of ['prod', 'staging']) {
    const r = await cli.json('PUT', `/api/v2/environments/${ORG}`, {
      name: env,
      type: 'K8S',
      description: '',
    });
    expect(r.status, r.body).toBe(201);
  }
  // Early runtime events: it ran in staging and left, and runs in prod.
  t.clock.advance(1000);
  await report('staging', [FP]);
  t.clock.advance(1000);
  await report('staging', []);
  t.clock.advance(1000);
  await report('prod', [FP]);
  await until(async () => {
    const a = (await artifact(FP)).json as Answer;
    return a.running.length === 1 && a.exited.length === 1 ? a : undefined;
  });
  for (let i = 0; i < ATTESTATIONS; i++) {
    await attest(FP, i);
  }
  await attest(FEW, 0);
}, 120_000);
afterAll(async () => t?.close());

describe("an artifact's history in its answer", () => {
  it('shows its first event and its most recent ones, and counts them all', async () => {
    const a = (await artifact(FP)).json as Answer;
    // Its report, three runtime events and its attestations.
    expect(a.history_total).toBe(1 + 3 + ATTESTATIONS);
    expect(a.history).toHaveLength(1 + SHOWN_RECENT);
    expect(a.history[0]!.event).toBe('Reported to trail by seed-admin-1');
    const recent = Array.from({ length: SHOWN_RECENT }, (_, k) => line(ATTESTATIONS - SHOWN_RECENT + k));
    expect(a.history.slice(1).map((h) => h.event)).toEqual(recent);
    const times = a.history.map((h) => h.timestamp);
    expect(times).toEqual([...times].sort((x, y) => x - y));
  });

  it('still says where it runs and ran from runtime events the history no longer shows', async () => {
    const a = (await artifact(FP)).json as Answer;
    expect(a.history.some((h) => /running|Exited/.test(h.event))).toBe(false);
    expect(a.running.map((p) => p.environment_name)).toEqual(['prod']);
    expect(a.exited.map((p) => p.environment_name)).toEqual(['staging']);
  });

  it('shows a short history whole, with its count', async () => {
    const a = (await artifact(FEW)).json as Answer;
    expect(a.history.map((h) => h.event)).toEqual(['Reported to trail by seed-admin-1', line(0)]);
    expect(a.history_total).toBe(2);
  });

  it('shows the same history on every path that shows the artifact', async () => {
    const byFingerprint = await artifact(FP);
    const id = (byFingerprint.json as Answer).id;
    expect((await artifact(FP, `?artifact_id=${id}`)).body).toBe(byFingerprint.body);
    const listed = await cli.get(`/api/v2/artifacts/${ORG}?flow_name=${FLOW}&page=1&per_page=10`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify((listed.json as Answer[]).find((x) => x.fingerprint === FP))).toBe(
      byFingerprint.body,
    );
    const byCommit = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/commit_sha/${COMMIT}`);
    expect(byCommit.status).toBe(200);
    expect(JSON.stringify((byCommit.json as Answer[]).find((x) => x.fingerprint === FP))).toBe(
      byFingerprint.body,
    );
    const found = await cli.get(`/api/v2/search/${ORG}/sha/${FP}`);
    expect(found.status, found.body).toBe(200);
    const hit = (found.json as { artifacts: Array<Answer & { running_in: string[] }> }).artifacts[0]!;
    expect(hit.history).toEqual((byFingerprint.json as Answer).history);
    expect(hit.history_total).toBe(1 + 3 + ATTESTATIONS);
    expect(hit.running_in).toEqual(['prod']);
  });
});

describe("an artifact's whole history, page by page", () => {
  interface HistoryPage {
    data: Array<{ event: string; timestamp: number }>;
    pagination: { total: number; page: number; per_page: number; page_count: number };
  }
  const historyPage = async (query: string, fingerprint = FP) => {
    const r = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${fingerprint}/history?${query}`);
    expect(r.status, r.body).toBe(200);
    return r.json as HistoryPage;
  };

  it('lists every line once, oldest first, with the total on each page', async () => {
    const all: string[] = [];
    const total = 1 + 3 + ATTESTATIONS;
    for (let p = 1; p <= 4; p++) {
      const page = await historyPage(`page=${p}&per_page=50`);
      expect(page.pagination).toEqual({ total, page: p, per_page: 50, page_count: 4 });
      all.push(...page.data.map((h) => h.event));
    }
    expect(all).toHaveLength(total);
    expect(all[0]).toBe('Reported to trail by seed-admin-1');
    expect(all.slice(1, 4)).toEqual([
      'Started running in staging#1',
      'Exited from staging#2',
      'Started running in prod#1',
    ]);
    expect(all.slice(4)).toEqual(Array.from({ length: ATTESTATIONS }, (_, i) => line(i)));
    // The answer's history is the first line and the last ones of the same list.
    const answer = (await artifact(FP)).json as Answer;
    expect(answer.history.map((h) => h.event)).toEqual([all[0], ...all.slice(-SHOWN_RECENT)]);
  });

  it('defaults to 100 lines a page, answers a page past the end empty, and 404 for an unknown artifact', async () => {
    const first = await historyPage('');
    expect(first.data).toHaveLength(100);
    expect(first.pagination).toMatchObject({ page: 1, per_page: 100, page_count: 2 });
    expect((await historyPage('page=9')).data).toEqual([]);
    expect((await historyPage('', FEW)).data.map((h) => h.event)).toHaveLength(2);
    const r = await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${fp('99')}/history`);
    expect(r.status).toBe(404);
    expect(
      (await cli.get(`/api/v2/artifacts/${ORG}/${FLOW}/fingerprint/${FP}/history?per_page=0`)).status,
    ).toBe(400);
  });
});

describe("a trail's event log in its answer", () => {
  type TrailEvent = { type: string; timestamp: number } & Record<string, unknown>;
  const eventsPage = async (query: string, trail = TRAIL) => {
    const r = await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${trail}/events?${query}`);
    expect(r.status, r.body).toBe(200);
    return r.json as { data: TrailEvent[]; pagination: { total: number; page: number; page_count: number } };
  };
  /** The whole log, read a page of 1,000 at a time. */
  const wholeLog = async () => {
    const out: TrailEvent[] = [];
    for (let p = 1; ; p++) {
      const page = await eventsPage(`page=${p}&per_page=1000`);
      out.push(...page.data);
      if (p >= page.pagination.page_count) {
        return out;
      }
    }
  };

  it('shows its first event and its 100 most recent, and counts them all', async () => {
    const all = await wholeLog();
    // The trail's start, two artifacts reported, and every attestation, at least.
    expect(all.length).toBeGreaterThan(ATTESTATIONS + 3);
    const r = await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}`);
    expect(r.status, r.body).toBe(200);
    expect(r.json.events_total).toBe(all.length);
    expect(r.json.events).toEqual([all[0], ...all.slice(-SHOWN_RECENT)]);
    const times = all.map((e) => e.timestamp);
    expect(times).toEqual([...times].sort((x, y) => x - y));
  });

  it('pages through the whole log once, oldest first, with its total on every page', async () => {
    const all = await wholeLog();
    const seen: TrailEvent[] = [];
    const pages = Math.ceil(all.length / 40);
    for (let p = 1; p <= pages; p++) {
      const page = await eventsPage(`page=${p}&per_page=40`);
      expect(page.pagination).toMatchObject({ total: all.length, page: p, page_count: pages });
      seen.push(...page.data);
    }
    expect(seen).toEqual(all);
    expect((await eventsPage(`page=${pages + 1}&per_page=40`)).data).toEqual([]);
  });

  it('keeps every event in the audit package, and answers 404 and 400 as the trail does', async () => {
    const all = await wholeLog();
    const pkg = (await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}/audit_package`)) as unknown as {
      status: number;
      raw: Buffer;
    };
    expect(pkg.status).toBe(200);
    const files = await untar(gunzipSync(pkg.raw));
    const record = JSON.parse(files.get('trail.json')!.toString('utf8'));
    expect(record.events).toEqual(all);
    expect(record.events_total).toBe(all.length);
    expect((await cli.get(`/api/v2/trails/${ORG}/${FLOW}/no-such-trail/events`)).status).toBe(404);
    expect((await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}/events?per_page=0`)).status).toBe(400);
    expect((await cli.get(`/api/v2/trails/${ORG}/${FLOW}/${TRAIL}/events?per_page=1001`)).status).toBe(400);
  });
});
