/**
 * Two API replicas on one cluster; one is killed (SIGKILL) while attestation and report batches
 * and notification deliveries are in flight. Every acknowledged write is stored, every pending
 * notification is sent at least once (by the surviving replica, once the dead one's lease runs
 * out), and duplicates come only from deliveries in flight at the kill.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fingerprint, ORG, seed, sleep, startApi, type ApiProcess } from './api-process.js';
import { Clusters, type Cluster } from './cluster.js';
import { lostWrites, startLoad } from './load.js';

let clusters: Clusters;
let pg: Cluster;
let a: ApiProcess | undefined;
let b: ApiProcess | undefined;
let replacement: ApiProcess | undefined;
let receiver: Server;

/** Deliveries the webhook receiver got: the artifact's fingerprint, when it came, when it was answered. */
const deliveries: Array<{ fingerprint: string; at: number; answeredAt?: number }> = [];
const LEASE_MS = 3_000;
const env = {
  VERITY_OUTBOUND_ALLOW: '127.0.0.1',
  VERITY_NOTIFIER_POLL_MS: '200',
  VERITY_NOTIFIER_LEASE_MS: String(LEASE_MS),
  VERITY_OUTBOUND_TIMEOUT_MS: '2000',
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const entry: (typeof deliveries)[number] = {
        fingerprint:
          (JSON.parse(body) as { artifact?: { fingerprint?: string } }).artifact?.fingerprint ?? '',
        at: Date.now(),
      };
      deliveries.push(entry);
      // A slow receiver: deliveries are in flight long enough to be caught by the kill.
      setTimeout(() => {
        entry.answeredAt = Date.now();
        res.writeHead(200).end('ok');
      }, 400);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  clusters = new Clusters();
  pg = await clusters.primary();
  a = await startApi(pg.url, env);
  // Only A delivers notifications, so the deliveries in flight at the kill are A's; A's
  // replacement (as Kubernetes would start one) takes over its rows after their lease.
  b = await startApi(pg.url, { ...env, VERITY_NOTIFIER_ENABLED: 'false' });
  await seed(a.base, 'killed', 'killed-env');
  const action = await call(a.base, 'PUT', `/api/v2/actions/${ORG}/environments`, {
    json: {
      name: 'starts',
      environments: ['killed-env'],
      triggers: ['ON_STARTED_ARTIFACT'],
      targets: [{ type: 'WEBHOOK', webhook: hook, payload_version: '1.0' }],
    },
  });
  expect(action.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await a?.kill('SIGKILL');
  await b?.kill('SIGKILL');
  await replacement?.kill('SIGKILL');
  clusters?.removeAll();
  await new Promise((r) => receiver?.close(r));
});

describe('an API replica killed under load', () => {
  it('loses no acknowledged write and sends every pending notification at least once', async () => {
    const [ra, rb] = [a!, b!];
    let turn = 0;
    // Both replicas take the load until A dies, then B alone.
    const base = () => (ra.alive() && turn++ % 2 === 0 ? ra.base : rb.base);
    const load = startLoad(base, {
      flow: 'killed',
      env: 'killed-env',
      writers: 4,
      reporters: 2,
      pauseMs: 10,
    });
    await sleep(2_000);
    // Kill A while deliveries are in flight at the receiver (received, not yet answered).
    const deadline = Date.now() + 10_000;
    while (!deliveries.some((d) => d.answeredAt === undefined) && Date.now() < deadline) {
      await sleep(5);
    }
    const killedAt = Date.now();
    await ra.kill('SIGKILL');
    // Any delivery of the last moments before the kill may not have been recorded as delivered.
    const inFlight = deliveries.filter(
      (d) => d.answeredAt === undefined || d.answeredAt > killedAt - 1_000,
    ).length;
    await sleep(1_500);
    await load.stop();
    replacement = await startApi(pg.url, env);

    expect(rb.alive(), rb.output()).toBe(true);
    expect(await lostWrites(rb.base, load, 'killed', 'killed-env')).toEqual([]);
    const acknowledged = load.reports.filter((r) => r.answer.status === 200).map((r) => fingerprint(r.n));
    expect(acknowledged.length).toBeGreaterThan(0);

    // Every acknowledged report's start is delivered, those A had claimed after their lease.
    const started = Date.now();
    const missing = () => acknowledged.filter((f) => !deliveries.some((d) => d.fingerprint === f));
    while (missing().length > 0 && Date.now() - started < LEASE_MS + 20_000) {
      await sleep(100);
    }
    expect(missing()).toEqual([]);
    const allDeliveredAfter = Date.now() - killedAt;
    // Rows A had claimed come back after their lease; give the replacement time to send them all.
    await sleep(1_000);
    const counts = new Map<string, number>();
    for (const d of deliveries) {
      counts.set(d.fingerprint, (counts.get(d.fingerprint) ?? 0) + 1);
    }
    const duplicates = [...counts.values()].reduce((n, c) => n + (c - 1), 0);
    console.log(
      `API killed: ${load.attestations.filter((x) => x.answer.status === 201).length} attestations and ` +
        `${acknowledged.length} reports acknowledged, none lost; ${deliveries.length} deliveries, ` +
        `${duplicates} duplicates, ${inFlight} deliveries in flight at the kill; ` +
        `every pending notification delivered ${allDeliveredAfter} ms after the kill`,
    );
    expect(duplicates).toBeLessThanOrEqual(inFlight);
  }, 120_000);
});
