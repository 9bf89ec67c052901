/**
 * What runs now is kept on the current states (migration 0433): counts and instance details that
 * moved without making a snapshot (rules 3 and 4) show on the latest snapshot and are recorded by
 * the next one, before and after the upgrade that moved them out of a table of their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import * as m0433 from '../../services/api/src/storage/migrations/0433_live_in_current_states.js';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp, pod } from '../helpers/runtime.js';
import type { SnapshotArtifact } from '../suite/wire.js';

let t: TestApp;
let snapshotter: ReturnType<typeof client>;
let reader: ReturnType<typeof client>;
const ORG = 'acme';
const API = fp('a');
const WEB = fp('b');
const JOB = fp('c');

beforeAll(async () => {
  t = await createTestApp();
  snapshotter = client(t.app, await t.seedKey(ORG, 'snapshotter'));
  reader = client(t.app, await t.seedKey(ORG, 'reader'));
  await snapshotter.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
});
afterAll(async () => t?.close());

const report = async (artifacts: unknown[]) =>
  (await snapshotter.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts })).json;

/** Each artifact of a snapshot as a reader sees it: its count, pods and annotation. */
async function snapshot(index: number) {
  const r = await reader.get(`/api/v2/snapshots/${ORG}/prod/${index}`);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return Object.fromEntries(
    r.json.artifacts.map((a: SnapshotArtifact & { pods?: unknown }) => [
      a.fingerprint,
      { annotation: a.annotation, creationTimestamp: a.creationTimestamp, pods: a.pods },
    ]),
  );
}

/** What a reader sees of the environment now and of its first snapshot. */
async function answers() {
  const now = await reader.get(`/api/v2/environments-now/${ORG}`);
  expect(now.status).toBe(200);
  return { latest: await snapshot(-1), first: await snapshot(1), now: now.json };
}

describe('what runs now, on the current states', () => {
  let before: Awaited<ReturnType<typeof answers>>;

  it('shows counts and pods that moved without a snapshot on the latest snapshot only', async () => {
    expect(await report([...deployment('api', 'r/api:1', API, 2), pod('web-0', { 'r/web:1': WEB })])).toBe(
      'Snapshot #1 created',
    );
    t.clock.advance(60_000);
    // API scaled to 3 and WEB's pod restarted: no snapshot (rules 3 and 4).
    expect(
      await report([
        ...deployment('api', 'r/api:1', API, 3),
        pod('web-1', { 'r/web:1': WEB }, 1_700_000_500),
      ]),
    ).toBe('No new snapshots to create');
    before = await answers();
    expect(before.latest[API].creationTimestamp).toHaveLength(3);
    expect(before.latest[WEB].creationTimestamp).toEqual([1_700_000_500]);
  });

  it('answers the same after the upgrade from a table of its own', async () => {
    const db = t.db.db as unknown as Kysely<unknown>;
    await m0433.down(db);
    const live = await sql<{ fingerprint: string; instance_count: number }>`
      select fingerprint, instance_count from runtime_live order by fingerprint`.execute(db);
    expect(live.rows).toEqual([
      { fingerprint: API, instance_count: 3 },
      { fingerprint: WEB, instance_count: 1 },
    ]);
    await m0433.up(db);
    expect(await answers()).toEqual(before);
    // Left for the replicas of the version before, which read it until the rolling upgrade ends.
    const kept = await sql<{ n: number }>`select count(*)::int as n from runtime_live`.execute(db);
    expect(kept.rows[0]?.n).toBe(2);
  });

  it('records the moved count with the next snapshot, and the first keeps what it recorded', async () => {
    t.clock.advance(60_000);
    expect(
      await report([
        ...deployment('api', 'r/api:1', API, 3),
        pod('web-1', { 'r/web:1': WEB }, 1_700_000_500),
        pod('job-0', { 'r/job:1': JOB }),
      ]),
    ).toBe('Snapshot #2 created');
    const second = await snapshot(2);
    expect(second[API].annotation).toEqual({ type: 'unchanged', was: 2, now: 3 });
    expect(second[WEB].creationTimestamp).toEqual([1_700_000_500]);
    expect(second[JOB].annotation).toMatchObject({ now: 1 });
    const first = await snapshot(1);
    expect(first[API].creationTimestamp).toHaveLength(2);
    expect(first[WEB].creationTimestamp).toEqual([1_700_000_000]);
  });

  it('an exit records the count last reported, and the next start begins from nothing', async () => {
    t.clock.advance(60_000);
    // API scales to 4 without a snapshot, then exits.
    await report([
      ...deployment('api', 'r/api:1', API, 4),
      pod('web-1', { 'r/web:1': WEB }, 1_700_000_500),
      pod('job-0', { 'r/job:1': JOB }),
    ]);
    t.clock.advance(60_000);
    expect(
      await report([pod('web-1', { 'r/web:1': WEB }, 1_700_000_500), pod('job-0', { 'r/job:1': JOB })]),
    ).toBe('Snapshot #3 created');
    expect((await snapshot(3))[API].annotation).toEqual({ type: 'exited', was: 4, now: 0 });
    t.clock.advance(60_000);
    expect(
      await report([
        ...deployment('api', 'r/api:1', API, 1),
        pod('web-1', { 'r/web:1': WEB }, 1_700_000_500),
        pod('job-0', { 'r/job:1': JOB }),
      ]),
    ).toBe('Snapshot #4 created');
    const fourth = await snapshot(4);
    expect(fourth[API].annotation).toMatchObject({ was: 0, now: 1 });
    expect(fourth[API].creationTimestamp).toHaveLength(1);
  });
});
