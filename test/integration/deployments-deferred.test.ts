/**
 * Deployments recorded after their snapshot (usecases/runtime/delivery-deferred.ts): a snapshot
 * that starts at least VERITY_DEPLOYMENTS_DEFER_FROM fingerprints answers its report without its
 * deployments, and they are recorded later, by the worker or by the environment's next snapshot,
 * as the snapshot would have recorded them. Here every snapshot defers (the setting at 1), over the
 * history of helpers/delivery-history.ts (a first deployment, several commits, a second
 * environment, a deployment that breaks compliance, a rollback, a restart), and a client must see
 * what it sees when each snapshot records its own.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';
import { deliveryHistory, ORG, REPO, type DeliveryHistory } from '../helpers/delivery-history.js';
import { deployment, fp } from '../helpers/runtime.js';
import { until } from '../helpers/wait.js';

const DEFER_ALL = { VERITY_DEPLOYMENTS_DEFER_FROM: '1' };
const A9 = fp('a9');

let sync: DeliveryHistory;
let deferred: DeliveryHistory;

/** What a client sees of delivery. */
async function answers(h: DeliveryHistory) {
  const range = `from=${h.at(-1)}&to=${h.at(24)}`;
  const urls = [
    `/api/v2/deployments/${ORG}`,
    `/api/v2/deployments/${ORG}?failed_within=86400`,
    `/api/v2/dora/${ORG}?${range}&bucket=day`,
    `/api/v2/environments-now/${ORG}?since=${h.at(-1)}`,
    `/api/v2/repos/${ORG}/${encodeURIComponent(REPO)}/delivery?${range}`,
  ];
  const out: Record<string, unknown> = {};
  for (const url of urls) {
    const r = await h.reader.get(url);
    expect(r.status, r.body).toBe(200);
    out[url] = r.json;
  }
  // Each app gave its artifact records ids of its own; links name them.
  return JSON.parse(JSON.stringify(out).replace(/artifact_id=[\w-]+/g, 'artifact_id=ID')) as unknown;
}

const stagingDeployments = async (h: DeliveryHistory) =>
  ((await h.reader.get(`/api/v2/deployments/${ORG}?environment=staging`)).json as { deployments: unknown[] })
    .deployments.length;

const deferredRows = async (t: TestApp) =>
  (await t.db.db.selectFrom('deployments_deferred').select('snapshot_index').execute()).length;

/** verity_deployments_total of the organization's staging, as /metrics shows it. */
async function countedInStaging(t: TestApp): Promise<number> {
  const body = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
  const m = body.match(/^verity_deployments_total\{org="acme",environment="staging"\} (\S+)$/m);
  return m ? Number(m[1]) : 0;
}

/** verity_deployments_deferred_age_seconds, as /metrics shows it. */
async function deferredAge(t: TestApp): Promise<number | undefined> {
  const body = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
  const m = body.match(/^verity_deployments_deferred_age_seconds (\S+)$/m);
  return m ? Number(m[1]) : undefined;
}

beforeAll(async () => {
  sync = await deliveryHistory();
  deferred = await deliveryHistory(DEFER_ALL);
});
afterAll(async () => {
  await sync?.t.close();
  await deferred?.t.close();
});

describe('deployments recorded after their snapshot', () => {
  it('records, snapshot by snapshot, what each snapshot records itself', async () => {
    // Each report recorded the deployments of the one before it first; the last of each environment
    // (prod #7, staging #1) is still deferred.
    expect(await deferredRows(deferred.t)).toBe(2);
    expect(await deferred.t.app.runtime.recordDeferredDeployments()).toBe(2);
    expect(await deferredRows(deferred.t)).toBe(0);
    await sync.t.app.transparencyLog.sequence();
    await deferred.t.app.transparencyLog.sequence();
    expect(await answers(deferred)).toEqual(await answers(sync));
  });

  it('answers the report first, and shows the deployments once the worker has recorded them', async () => {
    for (const h of [sync, deferred]) {
      h.advanceTo(10);
      await h.report(
        'staging',
        [...h.shop('3', fp('a3'), 1), ...deployment('new', 'registry.example/new:1', A9, 2)],
        'Snapshot #2 created',
      );
    }
    expect(await stagingDeployments(sync)).toBe(2);
    expect(await stagingDeployments(deferred)).toBe(1);
    expect(await countedInStaging(deferred.t)).toBe(1);
    // An SRE sees how long they have waited.
    deferred.t.clock.advance(90_000);
    expect(await deferredAge(deferred.t)).toBe(90);
    expect(await deferred.t.app.runtime.recordDeferredDeployments()).toBe(1);
    expect(await stagingDeployments(deferred)).toBe(2);
    expect(await countedInStaging(deferred.t)).toBe(2);
    expect(await deferredAge(deferred.t)).toBe(0);
    expect(await deferred.t.app.runtime.recordDeferredDeployments()).toBe(0);
    expect(await answers(deferred)).toEqual(await answers(sync));
  });

  it('keeps a deferred snapshot whose recording fails, and records it on the next pass', async () => {
    const t = deferred.t;
    await sql`create function fail_deployments() returns trigger language plpgsql as $$
      begin raise exception 'no room for deployments'; end $$`.execute(t.db.db);
    await sql`create trigger fail_deployments before insert on deployments
      for each statement execute function fail_deployments()`.execute(t.db.db);
    deferred.advanceTo(11);
    await deferred.report(
      'staging',
      [...deferred.shop('1', fp('a1'), 1), ...deployment('new', 'registry.example/new:1', A9, 2)],
      'Snapshot #3 created',
    );
    await expect(t.app.runtime.recordDeferredDeployments()).rejects.toThrow(/no room for deployments/);
    expect(await deferredRows(t)).toBe(1);
    expect(await stagingDeployments(deferred)).toBe(2);
    await sql`drop trigger fail_deployments on deployments`.execute(t.db.db);
    expect(await t.app.runtime.recordDeferredDeployments()).toBe(1);
    expect(await deferredRows(t)).toBe(0);
    const r = await deferred.reader.get(`/api/v2/deployments/${ORG}?environment=staging&per_page=1`);
    expect(r.json.deployments[0]).toMatchObject({ snapshot_index: 3, artifact: { fingerprint: fp('a1') } });
  });
});

describe('the deferred-deployments worker', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...DEFER_ALL, VERITY_NOTIFIER_ENABLED: 'true' } });
  });
  afterAll(async () => t?.close());

  it('is woken when a snapshot defers its deployments', async () => {
    const snapshotter = client(t.app, await t.seedKey('initech', 'snapshotter'));
    const env = await snapshotter.put('/api/v2/environments/initech', {
      name: 'prod',
      type: 'K8S',
      description: '',
    });
    expect(env.status, env.body).toBe(201);
    const r = await snapshotter.put('/api/v2/environments/initech/prod/report/K8S', {
      artifacts: deployment('web', 'registry.example/web:1', A9, 3),
    });
    expect(r.json).toBe('Snapshot #1 created');
    const listed = await until(async () => {
      const d = await snapshotter.get('/api/v2/deployments/initech');
      return d.status === 200 && d.json.deployments.length > 0 ? d.json.deployments : undefined;
    });
    expect(listed).toMatchObject([{ environment: 'prod', snapshot_index: 1, artifact: { fingerprint: A9 } }]);
  });
});
