/**
 * A K8S report at the cap (MAX_REPORT_ARTIFACTS pods, each its own image) and then a rollout of
 * every image: both make the snapshot a client expects, with every start and exit in it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REPORT_ARTIFACTS } from '../../services/shared/contract/environment-reports.js';
import { sha256 } from '../../services/api/src/sha256.js';
import { client, createTestApp, type TestApp } from '../helpers/app.js';

const ORG = 'acme';
const PODS = MAX_REPORT_ARTIFACTS;
let t: TestApp;
let snapshotter: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp();
  snapshotter = client(t.app, await t.seedKey(ORG, 'snapshotter'));
  const created = await snapshotter.put(`/api/v2/environments/${ORG}`, { name: 'big', type: 'K8S' });
  expect(created.status).toBe(201);
});
afterAll(async () => t?.close());

const pods = (version: number) =>
  Array.from({ length: PODS }, (_, d) => ({
    podName: `svc-${d}-${version}`,
    namespace: `team-${d % 20}`,
    digests: { [`registry.example/svc-${d}:v${version}`]: sha256(`svc ${d} v${version}`) },
    creationTimestamp: 1_700_000_000 + version,
  }));

const environment = async () => (await snapshotter.get(`/api/v2/environments/${ORG}/big`)).json;
const summaryOf = async (index: number) =>
  (await snapshotter.get(`/api/v2/snapshots/${ORG}/big?interval=${index}..${index}`)).json[0].summary;
const eventCount = async () =>
  Number(
    (await snapshotter.get(`/api/v2/environments/${ORG}/big/events?per_page=1`)).headers['x-total-count'],
  );

describe(`a K8S report of ${PODS} pods`, () => {
  it('makes snapshot #1 with every fingerprint started', { timeout: 120_000 }, async () => {
    const res = await snapshotter.put(`/api/v2/environments/${ORG}/big/report/K8S`, { artifacts: pods(1) });
    expect(res.status).toBe(200);
    expect(res.json).toBe('Snapshot #1 created');
    expect(await environment()).toMatchObject({ latest_snapshot_index: 1, running_artifacts: PODS });
    expect(await summaryOf(1)).toEqual({ started: PODS, changed: 0, exited: 0 });
    expect(await eventCount()).toBe(PODS);
  });

  it(
    'then a rollout of every image makes snapshot #2: every fingerprint exits, every new one starts',
    { timeout: 120_000 },
    async () => {
      const res = await snapshotter.put(`/api/v2/environments/${ORG}/big/report/K8S`, { artifacts: pods(2) });
      expect(res.status).toBe(200);
      expect(res.json).toBe('Snapshot #2 created');
      expect(await environment()).toMatchObject({ latest_snapshot_index: 2, running_artifacts: PODS });
      expect(await summaryOf(2)).toEqual({ started: PODS, changed: 0, exited: PODS });
      expect(await eventCount()).toBe(3 * PODS);
      const again = await snapshotter.put(`/api/v2/environments/${ORG}/big/report/K8S`, {
        artifacts: pods(2),
      });
      expect(again.json).toBe('No new snapshots to create');
    },
  );
});
