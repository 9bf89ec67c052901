/**
 * The runtime states' key leads with the fingerprint (migration 0434), and answers the reads the
 * index by fingerprint answered before: where and when an artifact ran (exposure), what runs now,
 * and each snapshot, the same before and after the migration is undone and redone. The key still
 * refuses a second state of a fingerprint from the same snapshot of an environment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import * as m0434 from '../../services/api/src/storage/migrations/0434_runtime_states_key_by_fingerprint.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { fp, pod } from '../helpers/runtime.js';

const ORG = 'acme';
const FLOW = 'shop';
const OLD = fp('d1');
const NEW = fp('d2');
const PURL = 'pkg:npm/left-pad@1.3.0';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

async function artifact(fingerprint: string) {
  const sha = fingerprint.slice(0, 40);
  const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint,
    filename: `registry.example/shop:${fingerprint.slice(0, 4)}`,
    git_commit: sha,
    git_commit_info: { sha1: sha, message: 'm', author: 'Dev <d@example.com>', branch: 'main', timestamp: 1 },
    build_url: 'https://ci.example/1',
    commit_url: `https://git.example/${sha}`,
    trail_name: fingerprint.slice(0, 8),
  });
  expect(r.status, r.body).toBe(201);
  const bom = JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', components: [{ purl: PURL }] });
  const a = await cli.multipart(
    'POST',
    `/api/v2/attestations/${ORG}/${FLOW}/trail/${fingerprint.slice(0, 8)}/generic`,
    [
      {
        name: 'data_json',
        value: JSON.stringify({
          attestation_name: 'sbom',
          is_compliant: true,
          artifact_fingerprint: fingerprint,
        }),
      },
      { name: 'attachment_file', filename: 'bom.json', content: bom },
    ],
  );
  expect(a.status, a.body).toBe(201);
}

async function report(env: string, images: Record<string, string>) {
  const r = await cli.json('PUT', `/api/v2/environments/${ORG}/${env}/report/K8S`, {
    artifacts: Object.entries(images).map(([image, f]) => pod(`${image}-0`, { [image]: f })),
  });
  expect(r.status, r.body).toBe(200);
  t.clock.advance(60_000);
}

/** What a reader sees: where the package ran, what runs now, and every snapshot. */
async function answers() {
  const get = async (path: string) => {
    const r = await cli.get(path);
    expect(r.status, r.body).toBe(200);
    return r.json;
  };
  return {
    exposure: await get(`/api/v2/exposure/${ORG}?purl=${encodeURIComponent(PURL)}`),
    now: await get(`/api/v2/environments-now/${ORG}`),
    prod: [await get(`/api/v2/snapshots/${ORG}/prod/1`), await get(`/api/v2/snapshots/${ORG}/prod/2`)],
    staging: await get(`/api/v2/snapshots/${ORG}/staging/1`),
  };
}

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  for (const name of ['prod', 'staging']) {
    const r = await cli.json('PUT', `/api/v2/environments/${ORG}`, { name, type: 'K8S', description: '' });
    expect(r.status, r.body).toBeLessThan(300);
  }
  await artifact(OLD);
  await artifact(NEW);
  await report('prod', { 'r/shop:1': OLD });
  await report('prod', { 'r/shop:2': NEW });
  await report('staging', { 'r/shop:1': OLD });
});
afterAll(async () => t?.close());

describe('runtime states keyed by fingerprint', () => {
  it('answers where an artifact ran, what runs now and each snapshot the same across the migration', async () => {
    const after = await answers();
    const old = after.exposure.artifacts.find((a: { fingerprint: string }) => a.fingerprint === OLD);
    // OLD ran in prod for snapshot 1 only, and runs in staging since its snapshot 1.
    expect(
      old.environments.map((e: any) => [
        e.environment_name,
        e.intervals.map((i: any) => [i.from_snapshot, i.to_snapshot]),
      ]),
    ).toEqual([
      ['prod', [[1, 2]]],
      ['staging', [[1, null]]],
    ]);
    const db = t.db.db as unknown as Kysely<unknown>;
    await m0434.down(db);
    expect(await answers()).toEqual(after);
    await m0434.up(db);
    expect(await answers()).toEqual(after);
  });

  it('refuses a second state of a fingerprint from the same snapshot of an environment', async () => {
    const db = t.db.db as unknown as Kysely<unknown>;
    const copy = sql`insert into runtime_states (org_id, environment_id, fingerprint, from_index, name,
        instance_count, was_count, change, detail_hash, verdict_hash, run_start)
      select org_id, environment_id, fingerprint, from_index, name, instance_count, was_count, change,
        detail_hash, verdict_hash, run_start
      from runtime_states where fingerprint = ${NEW}`;
    await expect(copy.execute(db)).rejects.toThrow(/runtime_states_pkey/);
  });
});
