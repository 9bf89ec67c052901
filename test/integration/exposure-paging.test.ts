/**
 * Exposure by package name over many versions, as a client sees it: a purl is answered in pages
 * of matching (artifact, component) rows (`page`, `per_page`, 100 by default), newest artifact
 * first, then by purl; each artifact says how many components match in all and whether some are
 * not on this page. A trail-level SBOM counts once per artifact of its trail. A page costs what it
 * shows: 100 rows of 50,000 answer well within the time a client waits, at any depth.
 */
import { createGzip } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as m0383 from '../../services/api/src/storage/migrations/0383_sbom_components_paging.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { fp } from '../helpers/runtime.js';

const ORG = 'acme';
const FLOW = 'shop';
const BIG = fp('b1');
const T1 = fp('c1');
const T2 = fp('c2');
const VERSIONS = 50_000;

const cyclonedx = (purls: string[]) =>
  JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', components: purls.map((purl) => ({ purl })) });
const gzip = async (text: string) => {
  const gz = createGzip();
  gz.end(text);
  const chunks: Buffer[] = [];
  for await (const c of gz) {
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
};

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

async function artifact(fingerprint: string, trail: string) {
  const sha = fingerprint.slice(0, 40);
  const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
    fingerprint,
    filename: `registry.example/shop:${fingerprint.slice(0, 4)}`,
    git_commit: sha,
    git_commit_info: { sha1: sha, message: 'm', author: 'Dev <d@example.com>', branch: 'main', timestamp: 1 },
    build_url: 'https://ci.example/1',
    commit_url: `https://git.example/${sha}`,
    trail_name: trail,
  });
  expect(r.status, r.body).toBe(201);
}

async function attest(trail: string, content: Buffer | string, fingerprint?: string) {
  // A gzipped document alone is no evidence.tgz: send it as the CLI would, raw JSON.
  const r = await cli.multipart('POST', `/api/v2/attestations/${ORG}/${FLOW}/trail/${trail}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: 'sbom',
        is_compliant: true,
        ...(fingerprint ? { artifact_fingerprint: fingerprint } : {}),
      }),
    },
    { name: 'attachment_file', filename: 'bom.json', content },
  ]);
  expect(r.status, r.body).toBe(201);
}

const page = async (query: string) => {
  const r = await cli.get(`/api/v2/exposure/${ORG}?purl=pkg:npm/x&${query}`);
  expect(r.status, r.body).toBe(200);
  return r.json;
};

beforeAll(async () => {
  t = await createTestApp({
    env: { VERITY_SBOM_MAX_COMPONENTS: '60000', VERITY_SBOM_MAX_VERSIONS: '60000' },
  });
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  // A trail-level SBOM of 150 versions, bound to both artifacts of its trail (older).
  await artifact(T1, 'trail-level');
  await artifact(T2, 'trail-level');
  const few = Array.from({ length: 150 }, (_, i) => `pkg:npm/x@0.0.${String(i).padStart(3, '0')}`);
  await attest('trail-level', cyclonedx(few));
  // One artifact whose SBOM holds 50,000 versions of one package (newest).
  t.clock.advance(60_000);
  await artifact(BIG, 'big');
  const many = Array.from({ length: VERSIONS }, (_, i) => `pkg:npm/x@1.0.${String(i).padStart(5, '0')}`);
  const body = cyclonedx(many);
  expect((await gzip(body)).length).toBeLessThan(body.length / 5);
  await attest('big', body, BIG);
});
afterAll(async () => t?.close());

describe('exposure by package name in pages', () => {
  it('answers 100 rows a page by default, with the pages in all and each artifact capped', async () => {
    const first = await page('');
    expect(first.pagination).toEqual({
      total: VERSIONS + 300,
      page: 1,
      per_page: 100,
      page_count: Math.ceil((VERSIONS + 300) / 100),
    });
    expect(first.truncated).toBe(true);
    expect(first.artifacts).toHaveLength(1);
    expect(first.artifacts[0]).toMatchObject({
      fingerprint: BIG,
      components_total: VERSIONS,
      components_truncated: true,
    });
    expect(first.artifacts[0].components).toHaveLength(100);
    expect(first.artifacts[0].components[0].purl).toBe('pkg:npm/x@1.0.00000');
  });

  it('pages through every version once, in a stable order, and the trail-level SBOM once per artifact', async () => {
    const seen: string[] = [];
    let pages = 0;
    for (let p = 1; ; p++) {
      const r = await page(`page=${p}&per_page=1000`);
      pages += 1;
      for (const a of r.artifacts) {
        for (const c of a.components) {
          seen.push(`${a.fingerprint} ${c.purl}`);
        }
      }
      if (!r.truncated) {
        expect(r.pagination.page_count).toBe(p);
        break;
      }
    }
    expect(pages).toBe(Math.ceil((VERSIONS + 300) / 1000));
    expect(seen).toHaveLength(VERSIONS + 300);
    expect(new Set(seen).size).toBe(seen.length);
    const big = seen.filter((s) => s.startsWith(BIG)).map((s) => s.split(' ')[1]);
    expect(big).toEqual([...big].sort());
    expect(seen.filter((s) => s.startsWith(T1))).toHaveLength(150);
    expect(seen.filter((s) => s.startsWith(T2))).toHaveLength(150);
    // The newest artifact first, then the trail's two.
    expect(seen.slice(0, VERSIONS).every((s) => s.startsWith(BIG))).toBe(true);
  }, 300_000);

  it('shows an artifact cut across a page boundary on both pages, flagged', async () => {
    const r = await page(`page=${VERSIONS / 100 + 1}&per_page=100`);
    expect(
      r.artifacts.map((a: any) => [a.components.length, a.components_total, a.components_truncated]),
    ).toEqual([[100, 150, true]]);
    const end = await page(`page=${VERSIONS / 100 + 2}&per_page=100`);
    expect(end.artifacts.map((a: any) => a.components.length)).toEqual([50, 50]);
    expect(end.truncated).toBe(true);
    const past = await page(`page=${VERSIONS}&per_page=100`);
    expect(past).toMatchObject({ artifacts: [], truncated: false, pagination: { total: VERSIONS + 300 } });
  });

  it('matches an exact version with the same bounds', async () => {
    const r = await page('').then(() =>
      cli.get(`/api/v2/exposure/${ORG}?purl=${encodeURIComponent('pkg:npm/x@0.0.007')}`),
    );
    expect(r.json.artifacts.map((a: any) => [a.components.length, a.components_total])).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(r.json.pagination).toMatchObject({ total: 2, page: 1 });
  });

  // How fast a page answers is measured by `npx tsx bench/limits-exposure.ts`, not here.
  it('answers a full page of 100 rows at the start, middle and end, none shared', async () => {
    const seen = new Set<string>();
    for (const p of [1, VERSIONS / 200, VERSIONS / 100]) {
      const r = await page(`page=${p}&per_page=100`);
      const purls = r.artifacts.flatMap((a: any) =>
        a.components.map((c: any) => `${a.fingerprint} ${c.purl}`),
      );
      expect(purls).toHaveLength(100);
      expect(r.pagination.page).toBe(p);
      expect(purls.filter((x: string) => seen.has(x))).toEqual([]);
      purls.forEach((x: string) => seen.add(x));
    }
  });

  it('answers the same after the counts per package are rebuilt from the components', async () => {
    const before = await page('page=2&per_page=100');
    // Down and up again: the counts come from the components indexed so far, as on upgrade.
    const db = t.db.db as unknown as Parameters<typeof m0383.up>[0];
    await m0383.down(db);
    expect((await sql`select to_regclass('sbom_packages') as t`.execute(db)).rows).toEqual([{ t: null }]);
    await m0383.up(db);
    expect(await page('page=2&per_page=100')).toEqual(before);
    expect(before.pagination.total).toBe(VERSIONS + 300);
  });
});
