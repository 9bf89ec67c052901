/**
 * Concurrent reports (issue rule): 20 at once to one environment, and to ten environments,
 * give gap-free numbering, no duplicate numbers, and a final state equal to the last report
 * applied. Meaningful on PostgreSQL (TEST_DATABASE_URL); on PGlite the same test runs serialised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment } from '../helpers/runtime.js';

const ORG = 'acme';
let t: TestApp;
let api: ReturnType<typeof client>;
const fingerprint = (i: number) => i.toString(16).padStart(2, '0').repeat(32);

beforeAll(async () => {
  t = await createTestApp();
  api = client(t.app, await t.seedKey(ORG, 'member'));
  for (let e = 0; e < 10; e++) {
    await api.put(`/api/v2/environments/${ORG}`, { name: `env-${e}`, type: 'K8S', description: '' });
  }
  await api.put(`/api/v2/environments/${ORG}`, { name: 'busy', type: 'K8S', description: '' });
});
afterAll(async () => t?.close());

async function snapshotsOf(env: string) {
  const list = (await api.get(`/api/v2/snapshots/${ORG}/${env}?per_page=100`)).json as Array<{
    index: number;
  }>;
  return list.map((s) => s.index).sort((a, b) => a - b);
}

describe('concurrent reports', () => {
  it('20 reports to one environment: gap-free numbers, final state = the last report applied', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.put(`/api/v2/environments/${ORG}/busy/report/K8S`, {
          artifacts: deployment('app', `app:${i}`, fingerprint(i), 2),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const created = results.map((r) => Number(/#(\d+)/.exec(r.json)?.[1]));
    expect(created.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await snapshotsOf('busy')).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const last = (await api.get(`/api/v2/snapshots/${ORG}/busy/20`)).json;
    const running = last.artifacts.filter((a: any) => a.annotation.now > 0);
    expect(running).toHaveLength(1);
    expect(running[0].annotation.type).toBe('started-unknown');
    // Every report's fingerprint started exactly once, in the snapshot that report made.
    const starts = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, i) => (await api.get(`/api/v2/snapshots/${ORG}/busy/${i + 1}`)).json,
      ),
    );
    const startedFps = starts.map(
      (s) => s.artifacts.find((a: any) => a.annotation.type === 'started-unknown').fingerprint,
    );
    expect(new Set(startedFps).size).toBe(20);
    expect(startedFps[19]).toBe(running[0].fingerprint);
    // The live state is that report: reporting it again changes nothing.
    const i = Array.from({ length: 20 }, (_, k) => k).find((k) => fingerprint(k) === running[0].fingerprint)!;
    const again = await api.put(`/api/v2/environments/${ORG}/busy/report/K8S`, {
      artifacts: deployment('app', `app:${i}`, fingerprint(i), 2),
    });
    expect(again.json).toBe('No new snapshots to create');
  });

  it('20 reports over ten environments: each numbered 1, 2 without gaps or duplicates', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.put(`/api/v2/environments/${ORG}/env-${i % 10}/report/K8S`, {
          artifacts: deployment('svc', `svc:${i}`, fingerprint(100 + i), 1),
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (let e = 0; e < 10; e++) {
      expect(await snapshotsOf(`env-${e}`)).toEqual([1, 2]);
    }
  });
});
