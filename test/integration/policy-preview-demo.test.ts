/**
 * Policy preview on the demo organization's history (`npm run demo`): prod's snapshots where redis
 * ran without provenance flip when prod's provenance policies are detached, attaching them to
 * dev shows what would fail there, and nothing is stored.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import { DemoClock, seedDemo } from '../../services/api/src/demo/seed.js';
import { REDIS } from '../../services/api/src/demo/seed/plan.js';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { client, testConfig } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';

let db: DatabaseHandle;
let app: Awaited<ReturnType<typeof buildApp>>;
let api: ReturnType<typeof client>;
let org: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const clock = new DemoClock();
  app = await buildApp({ config: testConfig(), database: db, clock: clock.now, logger: false });
  await app.ready();
  const demo = await seedDemo({ app, db: db.db, clock, days: 8 });
  org = demo.org;
  api = client(app, demo.apiKey);
}, 300_000);
afterAll(async () => {
  await app?.close();
  await db?.close();
});

/** The preview of `change` over every prod snapshot. */
async function previewAll(env: string, change: Record<string, unknown>) {
  const latest = (await api.get(`/api/v2/environments/${org}/${env}`)).json.latest_snapshot_index as number;
  const r = await api.post(`/api/v2/environments/${org}/${env}/policy-preview`, {
    ...change,
    snapshots: { from: 1, to: latest },
  });
  expect(r.status, r.body).toBe(200);
  return r.json as { snapshots: Array<Record<string, any>>; summary: Record<string, unknown> };
}

/** The environment's snapshots as a client lists them (but for the running one's age, which grows). */
async function recorded(env: string) {
  const r = await api.get(`/api/v2/snapshots/${org}/${env}?per_page=100`);
  expect(r.status, r.body).toBe(200);
  return (r.json as Array<Record<string, unknown>>).map(({ duration: _age, ...rest }) => rest);
}

it("detaching prod's provenance policies flips exactly the snapshots where redis ran", async () => {
  const before = await api.get(`/api/v2/environments/${org}/prod`);
  const snapshotsBefore = await recorded('prod');
  const preview = await previewAll('prod', { detach: ['build-provenance', 'tested-code'] });
  const flipped = preview.snapshots.filter((s) => s.changes.length > 0);
  expect(flipped.length).toBeGreaterThan(0);
  for (const s of flipped) {
    // Only redis, which ran without provenance, stops failing: nothing is left to judge it.
    expect(s.changes.map((c: any) => c.fingerprint)).toEqual([REDIS.fingerprint]);
    expect(s.changes[0]).toMatchObject({ compliant_now: false, compliant_with_change: null });
    expect(s.changes[0].reasons.join(' ')).toMatch(/provenance/);
    expect(s).toMatchObject({ compliant_now: false, compliant_with_change: null });
  }
  const unflipped = preview.snapshots.filter((s) => s.changes.length === 0);
  expect(unflipped.length).toBeGreaterThan(0);
  for (const s of unflipped) {
    expect(s.compliant_now).toBe(true);
  }
  expect(preview.summary).toMatchObject({ flipped_snapshots: flipped.length, flipped_artifacts: 1 });
  // Nothing stored: prod reads as it did.
  expect((await api.get(`/api/v2/environments/${org}/prod`)).body).toBe(before.body);
  expect(await recorded('prod')).toEqual(snapshotsBefore);
});

it('attaching them to dev shows what would fail there', async () => {
  const preview = await previewAll('dev', {
    attach: [
      {
        name: 'build-provenance',
        content:
          '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n',
      },
    ],
  });
  const failing = new Set(
    preview.snapshots.flatMap((s) => s.changes.filter((c: any) => c.compliant_with_change === false)),
  );
  expect(failing.size).toBeGreaterThan(0);
  const redisFails = preview.snapshots.some((s) =>
    s.changes.some((c: any) => c.fingerprint === REDIS.fingerprint && c.compliant_with_change === false),
  );
  expect(redisFails).toBe(true);
  for (const s of preview.snapshots) {
    // dev has no policy of its own: today nothing judges it.
    expect(s.compliant_now).toBeNull();
  }
  expect((await api.get(`/api/v2/policies/${org}`)).json.map((p: any) => p.name).sort()).toEqual([
    'build-provenance',
    'tested-code',
  ]);
});
