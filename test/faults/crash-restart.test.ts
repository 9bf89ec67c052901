/**
 * PostgreSQL crashes (`pg_ctl -m immediate stop`) under write load and comes back 4 s later. The
 * API must stay up, answer 503 with a message and Retry-After meanwhile (never 500, never hang),
 * and serve again on its own once the database is back, with every acknowledged write stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, sleep, startApi, type ApiProcess } from './api-process.js';
import { Clusters, type Cluster } from './cluster.js';
import { answers, lostWrites, startLoad, untilRecovered } from './load.js';

let clusters: Clusters;
let pg: Cluster;
let api: ApiProcess | undefined;

beforeAll(async () => {
  clusters = new Clusters();
  pg = await clusters.primary();
  api = await startApi(pg.url, { VERITY_NOTIFIER_POLL_MS: '200' });
  await seed(api.base, 'crash', 'crash-env');
}, 90_000);

afterAll(async () => {
  await api?.kill('SIGKILL');
  clusters?.removeAll();
});

describe('a PostgreSQL crash and restart', () => {
  it('is an outage, not a crash: 503 with Retry-After meanwhile, recovery without a restart, nothing acknowledged lost', async () => {
    const a = api!;
    const load = startLoad(() => a.base, { flow: 'crash', env: 'crash-env', writers: 3, reporters: 1 });
    await sleep(1_500);
    const down = Date.now();
    pg.stop('immediate');
    await sleep(4_000);
    pg.start();
    const up = Date.now();
    const recovery = await untilRecovered(load, up, 20_000);
    await sleep(1_000);
    await load.stop();

    expect(a.alive(), a.output()).toBe(true);
    const during = answers(load).filter((x) => x.at >= down && x.at + x.ms <= up);
    console.log(
      `crash-restart: ${load.attestations.length} attestations, ${load.reports.length} reports; ` +
        `${during.length} answers during the outage, slowest ${Math.max(0, ...during.map((x) => x.ms))} ms; ` +
        `writes served again ${recovery} ms after the database was back`,
    );
    expect(recovery, 'writes succeed again within 10 s of the restart').toBeLessThan(10_000);
    // Every answer is a success, a concurrent-write conflict or a 503: never a 500 or no answer.
    const statuses = new Set(answers(load).map((x) => x.status));
    expect([...statuses].filter((s) => ![200, 201, 409, 503].includes(s))).toEqual([]);
    for (const x of answers(load).filter((y) => y.status === 503)) {
      expect(x.json).toMatchObject({ message: expect.any(String) });
      expect(Number(x.retryAfter)).toBeGreaterThan(0);
      expect(x.ms).toBeLessThan(6_000);
    }
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((x) => x.status === 503)).toBe(true);
    const probesDuring = load.probes.filter(
      (p) => p.answer.at >= down + 500 && p.answer.at + p.answer.ms <= up,
    );
    expect(probesDuring.filter((p) => p.path === '/readyz').map((p) => p.answer.status)).toContain(503);
    expect(load.probes.filter((p) => p.path === '/healthz').every((p) => p.answer.status === 200)).toBe(true);

    expect(await lostWrites(a.base, load, 'crash', 'crash-env')).toEqual([]);
    expect(load.attestations.filter((x) => x.answer.status === 201).length).toBeGreaterThan(10);
  }, 90_000);
});
