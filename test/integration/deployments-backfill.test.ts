/**
 * Deployments recorded from the snapshot history (`npm run admin -- deployments backfill [org]`),
 * as after an upgrade from a version that recorded none: the history of
 * helpers/delivery-history.ts (a first deployment, a scaling-only change, a deployment of several
 * commits, a second environment, an artifact without provenance breaking compliance, a rollback,
 * a restart), an artifact CI reported after it started, and one deployment in another organization are written through the API, their
 * deployment rows removed, and the backfill must give back the answers a client saw before. The
 * API runs it once at start, in the background, after the upgrade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { AdminUsageError } from '../../services/api/src/admin-commands.js';
import { deploymentsCommand } from '../../services/api/src/admin-deployments.js';
import { buildApp } from '../../services/api/src/app.js';
import * as m0425 from '../../services/api/src/storage/migrations/0425_deployments_backfill.js';
import { backfillDeployments } from '../../services/api/src/usecases/runtime/delivery-backfill.js';
import { testConfig } from '../helpers/app.js';
import { until } from '../helpers/wait.js';
import { deliveryHistory, ORG, OTHER, REPO, type DeliveryHistory } from '../helpers/delivery-history.js';
import { deployment, fp } from '../helpers/runtime.js';

let h: DeliveryHistory;
let t: DeliveryHistory['t'];

/** What a client sees of delivery in an organization. */
async function answers(org: string) {
  const cli = org === ORG ? h.reader : h.other;
  const range = `from=${h.at(-1)}&to=${h.at(24)}`;
  const urls = [
    `/api/v2/deployments/${org}`,
    `/api/v2/deployments/${org}?failed_within=86400`,
    `/api/v2/dora/${org}?${range}&bucket=day`,
    `/api/v2/dora/${org}?${range}&environment=prod&bucket=week`,
    `/api/v2/environments-now/${org}?since=${h.at(-1)}`,
    ...(org === ORG ? [`/api/v2/repos/${ORG}/${encodeURIComponent(REPO)}/delivery?${range}`] : []),
  ];
  const out: Record<string, unknown> = {};
  for (const url of urls) {
    const r = await cli.get(url);
    expect(r.status, r.body).toBe(200);
    out[url] = r.json;
  }
  return out;
}

let before: { acme: Record<string, unknown>; globex: Record<string, unknown> };

/** Runs the command as `npm run admin` does; returns the lines it printed. */
async function backfill(...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  await deploymentsCommand(['deployments', 'backfill', ...args], t.db.db, (l) => lines.push(l));
  return lines;
}

const rows = async () =>
  (await t.db.db.selectFrom('deployments').select(['org_id', 'snapshot_index']).execute()).length;

beforeAll(async () => {
  h = await deliveryHistory();
  t = h.t;
  // An image CI reports an hour after it started in staging: its deployment is attributed then.
  const late = fp('b7');
  h.advanceTo(10);
  await h.report(
    'staging',
    [...h.shop('3', fp('a3'), 1), ...deployment('late', 'registry.example/late:1', late, 1)],
    'Snapshot #2 created',
  );
  h.advanceTo(11);
  await h.attestArtifact(late, 'd4'.repeat(20), h.at(9), 'b4', 'registry.example/late:1');
  expect((await t.app.runtime.processMarks()).length).toBe(1);
  const G1 = fp('61');
  const env = await h.other.json('PUT', `/api/v2/environments/${OTHER}`, {
    name: 'prod',
    type: 'K8S',
    description: '',
  });
  expect(env.status, env.body).toBe(201);
  const built = await h.other.json('POST', `/api/v2/artifacts/${OTHER}/web`, {
    fingerprint: G1,
    filename: 'registry.example/web:1',
    git_commit: 'f'.repeat(40),
    git_commit_info: { sha1: 'f'.repeat(40), message: 'web', author: 'Dev', timestamp: h.at(8) },
    build_url: 'https://ci.example/2',
    commit_url: `https://github.com/globex/web/commit/${'f'.repeat(40)}`,
    trail_name: 'w1',
  });
  expect(built.status, built.body).toBe(201);
  const r = await h.other.json('PUT', `/api/v2/environments/${OTHER}/prod/report/K8S`, {
    artifacts: deployment('web', 'registry.example/web:1', G1, 1),
  });
  expect(r.status, r.body).toBe(200);
  await t.app.transparencyLog.sequence();
  before = { acme: await answers(ORG), globex: await answers(OTHER) };
  const staging = await h.reader.get(`/api/v2/deployments/${ORG}?environment=staging&per_page=1`);
  expect(staging.json.deployments[0]).toMatchObject({
    snapshot_index: 2,
    artifact: { fingerprint: late, flow: 'shop', trail: 'b4' },
    change_lead_time: 3600,
  });
  // As before the upgrade: the snapshots are there, their deployments are not.
  await t.db.db.deleteFrom('deployments').execute();
});
afterAll(async () => t?.close());

describe('deployments backfill', () => {
  it('has nothing to show once the rows are gone (the history before the upgrade)', async () => {
    const r = await h.reader.get(`/api/v2/deployments/${ORG}`);
    expect(r.json.deployments).toEqual([]);
  });

  it("records one organization's deployments, each environment's progress shown, and no other's", async () => {
    const lines = await backfill(ORG);
    expect(lines).toEqual([
      'acme/prod: 7/7 snapshots, 4 deployments recorded',
      'acme/staging: 3/3 snapshots, 2 deployments recorded',
      '6 deployments recorded from 10 snapshots in 2 environments',
    ]);
    await t.app.transparencyLog.sequence();
    expect(await answers(ORG)).toEqual(before.acme);
    const other = await h.other.get(`/api/v2/deployments/${OTHER}`);
    expect(other.json.deployments).toEqual([]);
  });

  it('records the rest for every organization, and nothing twice', async () => {
    const lines = await backfill();
    expect(lines).toEqual([
      'acme/prod: 7/7 snapshots, 0 deployments recorded',
      'acme/staging: 3/3 snapshots, 0 deployments recorded',
      'globex/prod: 1/1 snapshots, 1 deployments recorded',
      '1 deployments recorded from 11 snapshots in 3 environments',
    ]);
    await t.app.transparencyLog.sequence();
    expect(await answers(OTHER)).toEqual(before.globex);
    expect(await answers(ORG)).toEqual(before.acme);
    const count = await rows();
    expect(count).toBe(7);
    expect((await backfill()).at(-1)).toBe('0 deployments recorded from 11 snapshots in 3 environments');
    expect(await rows()).toBe(count);
    expect(await answers(ORG)).toEqual(before.acme);
  });

  it('gives the same deployments when what ran before each snapshot is read anew', async () => {
    await t.db.db.deleteFrom('deployments').execute();
    const r = await backfillDeployments(t.db.db, null, { stretch: 0 });
    expect(r).toEqual({ environments: 3, snapshots: 11, deployments: 7 });
    await t.app.transparencyLog.sequence();
    expect(await answers(ORG)).toEqual(before.acme);
    expect(await answers(OTHER)).toEqual(before.globex);
  });

  it('leaves alone what later snapshots recorded, and goes on from there', async () => {
    h.advanceTo(12);
    await h.report('prod', h.shop('3', fp('a3'), 2), 'Snapshot #8 created');
    const count = await rows();
    expect((await backfill(ORG))[0]).toBe('acme/prod: 8/8 snapshots, 0 deployments recorded');
    expect(await rows()).toBe(count);
  });

  it('refuses an organization that does not exist, and a command it does not know', async () => {
    await expect(backfill('nowhere')).rejects.toThrow(
      new AdminUsageError("organization 'nowhere' does not exist"),
    );
    await expect(deploymentsCommand(['deployments', 'undo'], t.db.db, () => {})).rejects.toThrow(
      AdminUsageError,
    );
    await expect(backfill(ORG, 'extra')).rejects.toThrow(AdminUsageError);
  });
});

describe('deployments backfill at start', () => {
  const finished = async () =>
    (await t.db.db.selectFrom('deployments_backfill').selectAll().executeTakeFirst()) !== undefined;

  it('has nothing to do on a database that had no snapshots when deployments began', async () => {
    expect(await finished()).toBe(true);
    await t.db.db.deleteFrom('deployments').where('snapshot_index', '=', 8).execute();
    expect(await t.app.runtime.backfillDeployments()).toBeNull();
    expect(await rows()).toBe(7);
    // The command is not held back by the note.
    expect((await backfill(ORG))[0]).toBe('acme/prod: 8/8 snapshots, 1 deployments recorded');
    expect(await rows()).toBe(8);
  });

  it('runs once in the background after the upgrade, and never again', async () => {
    await t.app.transparencyLog.sequence();
    const now = { acme: await answers(ORG), globex: await answers(OTHER) };
    await t.db.db.deleteFrom('deployments').execute();
    // The upgrade on a database with snapshots: no note that the backfill is done.
    const db = t.db.db as unknown as Kysely<unknown>;
    await m0425.down(db);
    await m0425.up(db);
    expect(await finished()).toBe(false);
    const app = await buildApp({
      config: testConfig({ VERITY_NOTIFIER_ENABLED: 'true' }),
      database: t.db,
      clock: t.clock.now,
      logger: false,
    });
    try {
      await app.ready();
      await until(async () => ((await finished()) ? true : undefined));
    } finally {
      await app.close();
    }
    await t.app.transparencyLog.sequence();
    expect(await answers(ORG)).toEqual(now.acme);
    expect(await answers(OTHER)).toEqual(now.globex);
    const count = await rows();
    expect(await t.app.runtime.backfillDeployments()).toBeNull();
    expect(await rows()).toBe(count);
  });

  it('stops between two snapshots when the app closes, and goes on at the next run', async () => {
    await t.db.db.deleteFrom('deployments').execute();
    await t.db.db.deleteFrom('deployments_backfill').execute();
    const stop = new AbortController();
    stop.abort();
    await expect(t.app.runtime.backfillDeployments(stop.signal)).rejects.toThrow();
    expect(await rows()).toBe(0);
    expect(await finished()).toBe(false);
    expect(await t.app.runtime.backfillDeployments()).toMatchObject({ environments: 3, deployments: 8 });
    expect(await finished()).toBe(true);
  });
});
