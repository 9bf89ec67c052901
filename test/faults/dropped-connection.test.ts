/**
 * The network between the API and PostgreSQL stops forwarding without closing anything (a NAT or
 * firewall dropping packets). Queries must time out instead of hanging (503 within the bound),
 * the readiness probe must say so, the change listener must notice through its heartbeat, and
 * everything must come back on its own once packets flow again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { seed, sleep, startApi, type ApiProcess } from './api-process.js';
import { Clusters, type Cluster } from './cluster.js';
import { answers, lostWrites, startLoad, untilRecovered } from './load.js';

let clusters: Clusters;
let pg: Cluster;
let proxy: TcpProxy;
let api: ApiProcess | undefined;

/** With a 3 s statement timeout, a connection silent for 5 s is given up. */
const STATEMENT_TIMEOUT_MS = 3_000;

beforeAll(async () => {
  clusters = new Clusters();
  pg = await clusters.primary();
  proxy = new TcpProxy(pg.port);
  const port = await proxy.listen();
  api = await startApi(`postgres://postgres@127.0.0.1:${port}/postgres`, {
    VERITY_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    VERITY_NOTIFIER_POLL_MS: '200',
  });
  await seed(api.base, 'dropped', 'dropped-env');
}, 90_000);

afterAll(async () => {
  await api?.kill('SIGKILL');
  await proxy?.close();
  clusters?.removeAll();
});

describe('a silently dropped database connection', () => {
  it('times out into 503s instead of hanging, and recovers once packets flow again', async () => {
    const a = api!;
    const load = startLoad(() => a.base, { flow: 'dropped', env: 'dropped-env', writers: 3, reporters: 1 });
    await sleep(1_500);
    const cut = Date.now();
    proxy.pause();
    // Long enough for requests under way at the cut to give up their connections (5 s) and for
    // the next ones to be sent and refused while still cut off.
    await sleep(12_000);
    proxy.resume();
    const resumed = Date.now();
    const recovery = await untilRecovered(load, resumed, 20_000);
    await sleep(1_000);
    await load.stop();

    expect(a.alive(), a.output()).toBe(true);
    // Answers to requests sent while cut off. A request already under way at the cut may still
    // succeed, even seconds later: one sent 9 ms before the cut was answered 201 five seconds after
    // it, its write stored (lostWrites below finds none missing).
    const during = answers(load).filter((x) => x.at > cut && x.at + x.ms <= resumed);
    // How long each answer took once the connection was cut (from the cut, or from its start if later).
    const waits = [
      ...load.attestations.map((x) => ({ kind: 'attestation', answer: x.answer })),
      ...load.reports.map((x) => ({ kind: 'report', answer: x.answer })),
    ]
      .filter(({ answer: x }) => x.at + x.ms > cut)
      .map(({ kind, answer: x }) => ({ kind, status: x.status, ms: x.at + x.ms - Math.max(x.at, cut) }));
    const longest = waits.reduce((a, b) => (b.ms > a.ms ? b : a), { kind: 'none', status: 0, ms: 0 });
    const slowest = longest.ms;
    console.log(
      `dropped connection: ${during.length} answers while cut off, longest wait after the cut ${slowest} ms ` +
        `(${longest.kind}, ${longest.status}); writes served again ${recovery} ms after forwarding resumed`,
    );
    expect(recovery, 'writes succeed again within 10 s').toBeLessThan(10_000);
    const statuses = new Set(answers(load).map((x) => x.status));
    expect([...statuses].filter((s) => ![200, 201, 409, 503].includes(s))).toEqual([]);
    // The bound: the statement timeout plus 2 s for a query on a dead connection, or the 5 s
    // connect timeout for a new one.
    expect(slowest).toBeLessThan(STATEMENT_TIMEOUT_MS + 2_000 + 2_000);
    expect(during.length).toBeGreaterThan(0);
    for (const x of during) {
      expect(x.status).toBe(503);
      expect(x.json).toMatchObject({ message: expect.any(String) });
      expect(x.retryAfter).not.toBeNull();
    }
    const readyDuring = load.probes.filter(
      (p) => p.path === '/readyz' && p.answer.at >= cut + 500 && p.answer.at + p.answer.ms <= resumed,
    );
    expect(readyDuring.length).toBeGreaterThan(0);
    expect(readyDuring.every((p) => p.answer.status === 503 && p.answer.ms < 4_000)).toBe(true);
    expect(load.probes.filter((p) => p.path === '/healthz').every((p) => p.answer.status === 200)).toBe(true);
    // The change listener noticed through its heartbeat (and reconnected, as the writes show).
    expect(a.output()).toContain('No heartbeat heard on the change listener');

    expect(await lostWrites(a.base, load, 'dropped', 'dropped-env')).toEqual([]);
  }, 90_000);
});
