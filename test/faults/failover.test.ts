/**
 * A primary with a synchronous streaming standby, behind a TCP proxy standing in for the
 * Kubernetes Service of a database operator. The primary dies (immediate stop), the standby is
 * promoted and the proxy pointed at it: the API recovers without a restart, and every write it
 * acknowledged is on the new primary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { seed, sleep, startApi, type ApiProcess } from './api-process.js';
import { Clusters, type Cluster } from './cluster.js';
import { answers, lostWrites, startLoad, untilRecovered } from './load.js';

let clusters: Clusters;
let primary: Cluster;
let standby: Cluster;
let proxy: TcpProxy;
let api: ApiProcess | undefined;

beforeAll(async () => {
  clusters = new Clusters();
  primary = await clusters.primary();
  standby = await clusters.standby(primary);
  // Synchronous: a commit answers only once the standby has it.
  primary.sql("alter system set synchronous_standby_names = '*'");
  primary.sql('select pg_reload_conf()');
  const deadline = Date.now() + 30_000;
  while (primary.sql("select count(*) from pg_stat_replication where sync_state = 'sync'").trim() !== '1') {
    if (Date.now() > deadline) {
      throw new Error('the standby did not become synchronous');
    }
    await sleep(200);
  }
  proxy = new TcpProxy(primary.port);
  const port = await proxy.listen();
  api = await startApi(`postgres://postgres@127.0.0.1:${port}/postgres`, { VERITY_NOTIFIER_POLL_MS: '200' });
  await seed(api.base, 'failover', 'failover-env');
}, 120_000);

afterAll(async () => {
  await api?.kill('SIGKILL');
  await proxy?.close();
  clusters?.removeAll();
});

describe('a failover to a synchronous standby', () => {
  it('recovers without a restart and loses no acknowledged write', async () => {
    const a = api!;
    const load = startLoad(() => a.base, { flow: 'failover', env: 'failover-env', writers: 3, reporters: 1 });
    await sleep(1_500);
    const down = Date.now();
    primary.stop('immediate');
    await sleep(1_000);
    standby.promote();
    proxy.retarget(standby.port);
    const switched = Date.now();
    const recovery = await untilRecovered(load, switched, 20_000);
    await sleep(1_000);
    await load.stop();

    expect(a.alive(), a.output()).toBe(true);
    console.log(
      `failover: ${load.attestations.length} attestations, ${load.reports.length} reports; ` +
        `primary down to proxy switched ${switched - down} ms; writes served again ${recovery} ms after the switch`,
    );
    expect(recovery, 'writes succeed again within 10 s of the switch').toBeLessThan(10_000);
    const statuses = new Set(answers(load).map((x) => x.status));
    expect([...statuses].filter((s) => ![200, 201, 409, 503].includes(s))).toEqual([]);
    for (const x of answers(load).filter((y) => y.status === 503)) {
      expect(x.json).toMatchObject({ message: expect.any(String) });
      expect(x.retryAfter).not.toBeNull();
      expect(x.ms).toBeLessThan(6_000);
    }
    expect(await lostWrites(a.base, load, 'failover', 'failover-env')).toEqual([]);
    expect(load.attestations.filter((x) => x.answer.status === 201).length).toBeGreaterThan(10);
  }, 90_000);
});
