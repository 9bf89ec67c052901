/**
 * The reporter against the real API: client-node informers on the Kubernetes API server double,
 * reports delivered over HTTP to the Verity API listening on a port, on the test database (PGlite
 * or PostgreSQL). What the reporter did is read back through the API, as a user would; every wait
 * polls a condition with a timeout.
 */
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import type { ReporterConfig } from '../../services/reporter/src/config.js';
import type { DeliveredEvent } from '../../services/reporter/src/environment-loop.js';
import { Reporter } from '../../services/reporter/src/reporter.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { ApiServerDouble } from './api-server-double.js';
import { environment } from './harness.js';
import { deploymentPods, digestOf } from './pods.js';
import { nextEvent } from './wait.js';
import { until } from '../helpers/wait.js';

const ORG = 'acme';
const ENV = 'prod-cluster';
const WEB1 = 'ghcr.io/acme/web:1';
const WEB2 = 'ghcr.io/acme/web:2';
const WEB3 = 'ghcr.io/acme/web:3';
const API = 'ghcr.io/acme/api:7';

let t: TestApp;
/** The app currently listening (the first one, or the one started after a restart). */
let api: FastifyInstance;
let port: number;
let reader: ReturnType<typeof client>;
let readerKey: string;
let reporterKey: string;
let double: ApiServerDouble;
let reporter: Reporter | undefined;

const latestIndex = async (): Promise<number> =>
  (await reader.get(`/api/v2/environments/${ORG}/${ENV}`)).json.latest_snapshot_index;
const snapshot = async (expr = '-1') => (await reader.get(`/api/v2/snapshots/${ORG}/${ENV}/${expr}`)).json;
/** The latest snapshot once the environment has `index` snapshots. */
const snapshotNumber = (index: number) =>
  until(async () => ((await latestIndex()) >= index ? snapshot() : undefined));

/** `fingerprint -> [image, instance count, annotation]` of the running artifacts of a snapshot. */
function running(snap: any): Record<string, [string, number, string]> {
  return Object.fromEntries(
    snap.artifacts
      .filter((a: any) => a.annotation.now > 0)
      .map((a: any) => [a.fingerprint, [a.name, Object.keys(a.pods).length, a.annotation.type]]),
  );
}

function cluster() {
  for (const p of deploymentPods('prod', 'web', WEB1, 3)) {
    double.putPod(p);
  }
  for (const p of deploymentPods('prod', 'api', API, 2)) {
    double.putPod(p);
  }
}

/** A Deployment rollout done at once: the new ReplicaSet's pods run, the old ones are gone. */
function rollout(from: string, to: string, replicas = 3) {
  for (const p of deploymentPods('prod', 'web', from, replicas)) {
    double.deletePod('prod', p.metadata.name);
  }
  for (const p of deploymentPods('prod', 'web', to, replicas)) {
    double.putPod(p);
  }
}

/** The reporter's next delivery outcome matching `predicate`. */
const delivered = (r: Reporter, predicate: (d: DeliveredEvent) => boolean) =>
  nextEvent<[DeliveredEvent]>(r, 'delivered', predicate).then(([d]) => d);

/** Starts the reporter pointed at the listening API; resolves once its first report is accepted. */
async function startReporter(config: Partial<ReporterConfig> = {}): Promise<Reporter> {
  const r = new Reporter({
    config: {
      apiUrl: `http://127.0.0.1:${port}`,
      org: ORG,
      token: { kind: 'value', value: reporterKey },
      environments: [environment(ENV, { namespaces: ['prod'] })],
      debounceMs: 25,
      maxWaitMs: 250,
      heartbeatMs: 3_600_000,
      autoCreateEnvironments: false,
      environmentDescription: 'Auto-created by the Verity reporter',
      retryBaseMs: 20,
      retryMaxMs: 200,
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      shutdownTimeoutMs: 1000,
      ...config,
    },
    kubeConfig: double.kubeConfig(),
    log: { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined },
    watchRestartBaseMs: 10,
  });
  reporter = r;
  const first = delivered(r, (d) => d.result === 'accepted');
  r.start();
  await first;
  return r;
}

beforeEach(async () => {
  t = await createTestApp();
  api = t.app;
  await api.listen({ port: 0, host: '127.0.0.1' });
  port = (api.server.address() as AddressInfo).port;
  const admin = client(api, await t.seedKey(ORG, 'admin'));
  readerKey = await t.seedKey(ORG, 'reader');
  reader = client(api, readerKey);
  // The reporter's key is a Snapshotter's, as the agent chart's Secret holds it.
  reporterKey = await t.seedKey(ORG, 'snapshotter');
  expect(
    (await admin.put(`/api/v2/environments/${ORG}`, { name: ENV, type: 'K8S', description: 'cluster' }))
      .status,
  ).toBe(201);
  double = await new ApiServerDouble().start();
});
afterEach(async () => {
  await reporter?.stop();
  reporter = undefined;
  await double?.close();
  // The test database outlives a restarted app: close the app in use, then the database.
  if (api !== t.app) {
    await api.close();
  }
  await t?.close();
});

describe('the reporter against the real API', () => {
  it('turns the pods it sees into a snapshot with their digests, pods and owners', async () => {
    cluster();
    await startReporter();
    const snap = await snapshotNumber(1);
    expect(snap).toMatchObject({ index: 1, type: 'K8S', summary: { started: 2, changed: 0, exited: 0 } });
    expect(running(snap)).toEqual({
      [digestOf(WEB1)]: [WEB1, 3, 'started-unknown'],
      [digestOf(API)]: [API, 2, 'started-unknown'],
    });
    const web = snap.artifacts.find((a: any) => a.fingerprint === digestOf(WEB1));
    const rs = `web-${digestOf(WEB1).slice(0, 10)}`;
    expect(Object.keys(web.pods).sort()).toEqual([0, 1, 2].map((i) => `${rs}-${i}`));
    expect(web.pods[`${rs}-0`]).toEqual({
      namespace: 'prod',
      creationTimestamp: Date.parse('2026-11-01T12:00:00Z') / 1000,
      owners: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs,
          uid: digestOf(rs).slice(0, 32),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(web.creationTimestamp).toEqual([1, 2, 3].map(() => Date.parse('2026-11-01T12:00:00Z') / 1000));
    expect(snap.user_name).toMatch(/^seed-snapshotter-/);

    // A workload that appears later starts in the next snapshot.
    for (const p of deploymentPods('prod', 'worker', WEB3, 1)) {
      double.putPod(p);
    }
    const next = await snapshotNumber(2);
    expect(next.summary).toEqual({ started: 1, changed: 0, exited: 0 });
    expect(running(next)[digestOf(WEB3)]).toEqual([WEB3, 1, 'started-unknown']);
  });

  it('makes exactly one snapshot for a rollout and none for scaling, even when the heartbeat resends', async () => {
    cluster();
    // A debounce wide enough that the rollout's deletes and adds, however slowly the watch
    // delivers them, make one change; no heartbeat may fall between them.
    const r = await startReporter({ debounceMs: 500, maxWaitMs: 5000 });
    await snapshotNumber(1);

    const accepted = delivered(r, (d) => d.result === 'accepted' && d.reason === 'change');
    rollout(WEB1, WEB2);
    await accepted;
    const snap = await snapshot();
    expect(snap.index).toBe(2);
    expect(snap.summary).toEqual({ started: 1, changed: 0, exited: 1 });
    expect(running(snap)).toEqual({
      [digestOf(WEB2)]: [WEB2, 3, 'started-unknown'],
      [digestOf(API)]: [API, 2, 'unchanged'],
    });
    expect(snap.artifacts.find((a: any) => a.fingerprint === digestOf(WEB1)).annotation).toEqual({
      type: 'exited',
      was: 3,
      now: 0,
    });

    // A restarted reporter with a short heartbeat: its first report is the same state (no
    // snapshot). Scale web 3 -> 5: the reporter skips the change; its next heartbeat carries the
    // five pods, which the latest snapshot shows live, and the API makes no snapshot of it.
    await r.stop();
    const hb = await startReporter({ heartbeatMs: 200 });
    expect(await latestIndex()).toBe(2);
    for (const p of deploymentPods('prod', 'web', WEB2, 5).slice(3)) {
      double.putPod(p);
    }
    const scaled = await until(async () => {
      const s = await snapshot();
      return running(s)[digestOf(WEB2)]?.[1] === 5 ? s : undefined;
    });
    expect(scaled.index).toBe(2);
    // More heartbeats of the same state: still no snapshot.
    await delivered(hb, (d) => d.result === 'accepted' && d.reason === 'heartbeat');
    await delivered(hb, (d) => d.result === 'accepted' && d.reason === 'heartbeat');
    expect(await latestIndex()).toBe(2);
    const list = (
      await reader.get(`/api/v2/snapshots/${ORG}/${ENV}?page=1&per_page=15&interval=&reverse=false`)
    ).json;
    expect(list.map((i: any) => i.index)).toEqual([2, 1]);
  });

  it('retries while the API is down or restarting, and the snapshot lands once it is back', async () => {
    cluster();
    const r = await startReporter();
    await snapshotNumber(1);

    // The API stops; the database (and what it holds) stays.
    await api.close();
    const retried = delivered(r, (d) => d.result === 'retried');
    rollout(WEB1, WEB2);
    expect(await retried).toMatchObject({ reason: 'change', status: 0 });
    // A second change while it is down: only the newest state is sent later.
    const retriedAgain = delivered(r, (d) => d.result === 'retried');
    rollout(WEB2, WEB3);
    await retriedAgain;

    // A new API process on the same port and database.
    api = await buildApp({ config: testConfig(), database: t.db, clock: t.clock.now, logger: false });
    const accepted = delivered(r, (d) => d.result === 'accepted');
    await api.listen({ port, host: '127.0.0.1' });
    reader = client(api, readerKey);
    await accepted;
    const snap = await snapshotNumber(2);
    expect(snap.summary).toEqual({ started: 1, changed: 0, exited: 1 });
    expect(running(snap)).toEqual({
      [digestOf(WEB3)]: [WEB3, 3, 'started-unknown'],
      [digestOf(API)]: [API, 2, 'unchanged'],
    });
    // WEB2 never reached the API: it is in no snapshot.
    expect(snap.artifacts.map((a: any) => a.fingerprint)).not.toContain(digestOf(WEB2));
    await r.loops[0]!.idle();
    expect(await latestIndex()).toBe(2);
  });
});
