/**
 * Where a report's time goes, as an SRE reads it on /metrics: `verity_report_phase_seconds`
 * counts each step of every report that got past the same-bytes check, and only the steps it ran.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { fp, pod } from '../helpers/runtime.js';

let t: TestApp;
let snapshotter: ReturnType<typeof client>;
const ORG = 'acme';
const STEPS = ['validate', 'group', 'lock', 'live', 'plan', 'states', 'delivery', 'events', 'commit'];

beforeAll(async () => {
  t = await createTestApp();
  snapshotter = client(t.app, await t.seedKey(ORG, 'snapshotter'));
  const env = { name: 'prod', type: 'K8S', description: '' };
  expect((await snapshotter.put(`/api/v2/environments/${ORG}`, env)).status).toBe(201);
});
afterAll(async () => t?.close());

/** Each step's count and sum of seconds, as /metrics shows them. */
async function phases(): Promise<Record<string, { count: number; sum: number }>> {
  const body = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
  const out: Record<string, { count: number; sum: number }> = {};
  for (const m of body.matchAll(/^verity_report_phase_seconds_(count|sum)\{phase="(\w+)"\} (\S+)$/gm)) {
    const step = (out[m[2]!] ??= { count: 0, sum: 0 });
    step[m[1] as 'count' | 'sum'] = Number(m[3]);
  }
  return out;
}

/** Which steps a report added to the counts. */
async function stepsOf(send: () => Promise<unknown>): Promise<string[]> {
  const before = await phases();
  await send();
  const after = await phases();
  return STEPS.filter((s) => (after[s]?.count ?? 0) > (before[s]?.count ?? 0));
}

const report = (artifacts: unknown[]) =>
  snapshotter.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts });

describe('verity_report_phase_seconds', () => {
  const pods = [pod('web-1', { web: fp('1') }), pod('api-1', { api: fp('2') })];

  it('counts every step of a report that makes a snapshot, and the time in each', async () => {
    expect(await stepsOf(async () => expect((await report(pods)).json).toBe('Snapshot #1 created'))).toEqual(
      STEPS,
    );
    const seen = await phases();
    for (const step of STEPS) {
      expect(seen[step]!.sum, step).toBeGreaterThan(0);
    }
  });

  it('counts no snapshot steps for the same pods in another order, and nothing for the same bytes', async () => {
    const reordered = [...pods].reverse();
    expect(
      await stepsOf(async () => expect((await report(reordered)).json).toBe('No new snapshots to create')),
    ).toEqual(['validate', 'group', 'lock', 'commit']);
    expect(
      await stepsOf(async () => expect((await report(reordered)).json).toBe('No new snapshots to create')),
    ).toEqual([]);
  });

  it('counts the live rows and the events of a scaling-only report, and no snapshot steps', async () => {
    const scaled = [...pods, pod('web-2', { web: fp('1') })];
    expect(
      await stepsOf(async () => expect((await report(scaled)).json).toBe('No new snapshots to create')),
    ).toEqual(['validate', 'group', 'lock', 'live', 'events', 'commit']);
  });
});
