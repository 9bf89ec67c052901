/**
 * Reads of one artifact's evidence as a client sees them, on an artifact whose trail holds many
 * reports of a few names: every read (by fingerprint, by artifact id, in the flow's listing, by
 * commit) answers with the latest report of each name, built here from the full list of reports,
 * and with its whole history (fewer events than an answer's bound), in report order, counted in
 * `history_total`. A flow's attestations, page by page, are its
 * reports newest first, each once, with the total on every page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

type Cli = ReturnType<typeof cliClient>;
let t: TestApp;
let cli: Cli;
const FLOW = 'ci';
const TRAIL = 'run-1';
const COMMIT = 'c'.repeat(40);
const FP = 'a'.repeat(64);
const OTHER_FP = 'b'.repeat(64);
const NAMES = ['unit', 'lint', 'scan'];
const ROUNDS = 12;

/** What the test posted, in order: the full list the expected answer is built from. */
const posted: Array<{
  name: string;
  fingerprint: string | null;
  compliant: boolean;
  origin: string;
  at: number;
}> = [];

async function attest(name: string, fingerprint: string | null, compliant: boolean, origin: string) {
  const r = await cli.multipart('POST', `/api/v2/attestations/acme/${FLOW}/trail/${TRAIL}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({
        attestation_name: name,
        is_compliant: compliant,
        origin_url: origin,
        user_data: { round: origin },
        ...(fingerprint ? { artifact_fingerprint: fingerprint } : {}),
      }),
    },
  ]);
  expect(r.status).toBe(201);
  posted.push({ name, fingerprint, compliant, origin, at: t.clock.seconds() });
}

async function reportArtifact(fingerprint: string, filename: string) {
  const r = await cli.json('POST', `/api/v2/artifacts/acme/${FLOW}`, {
    fingerprint,
    filename,
    git_commit: COMMIT,
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: TRAIL,
  });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme'));
  expect((await cli.json('PUT', `/api/v2/flows/acme`, { name: FLOW, description: '' })).status).toBe(201);
  expect((await cli.json('PUT', `/api/v2/trails/acme/${FLOW}`, { name: TRAIL })).status).toBe(201);
  await reportArtifact(FP, 'backend');
  await reportArtifact(OTHER_FP, 'frontend');
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, name] of NAMES.entries()) {
      t.clock.advance(1000);
      // The last round leaves `lint` non-compliant, the others compliant.
      const compliant = round === ROUNDS - 1 ? name !== 'lint' : (round + i) % 3 !== 0;
      await attest(name, FP, compliant, `https://ci/${round}/${name}`);
    }
    await attest('unit', OTHER_FP, round % 2 === 0, `https://ci/other/${round}`);
    await attest('security', null, true, `https://ci/trail/${round}`);
    // Reports to another flow, between this flow's: its pages and totals must leave them out.
    const other = await cli.multipart('POST', `/api/v2/attestations/acme/elsewhere/trail/e1/generic`, [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'unit', is_compliant: true }) },
    ]);
    expect(other.status).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await t?.close();
});

type Evidence = Record<string, { is_compliant: boolean; build_url: string | null; attestation_id: string }>;
interface ArtifactAnswer {
  id: string;
  fingerprint: string;
  state: string;
  state_info: string | null;
  evidence: Evidence;
  history: Array<{ event: string; timestamp: number }>;
  history_total: number;
}

/** Every report of `name` on the artifact, newest first, as the API lists them. */
async function reportsNamed(name: string): Promise<Array<{ attestation_id: string; is_compliant: boolean }>> {
  const r = await cli.get(`/api/v2/attestations/acme/${FLOW}/artifact/${FP}/${name}`);
  expect(r.status).toBe(200);
  return r.json as Array<{ attestation_id: string; is_compliant: boolean }>;
}

describe('reads of an artifact with many reports of a few names', () => {
  it('show the latest report of each name, and every report in the history', async () => {
    const r = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP}`);
    expect(r.status).toBe(200);
    const answer = r.json as ArtifactAnswer;

    const mine = posted.filter((p) => p.fingerprint === FP);
    expect(Object.keys(answer.evidence).sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const all = await reportsNamed(name);
      expect(all).toHaveLength(ROUNDS);
      const latest = mine.filter((p) => p.name === name).at(-1)!;
      expect(answer.evidence[name]).toMatchObject({
        attestation_id: all[0]!.attestation_id,
        is_compliant: latest.compliant,
        build_url: latest.origin,
      });
    }
    expect(answer.state).toBe('NON-COMPLIANT');
    expect(answer.state_info).toBe('non-compliant: lint');
    expect(answer.history.map((h) => h.event)).toEqual([
      'Reported to trail by seed-admin-1',
      ...mine.map(
        (p) => `Attestation '${p.name}' (generic) reported: ${p.compliant ? 'compliant' : 'non-compliant'}`,
      ),
    ]);
    expect(answer.history_total).toBe(1 + mine.length);
  });

  it('answers the same, byte for byte, on every path that reads it', async () => {
    const byFingerprint = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP}`);
    const answer = byFingerprint.json as ArtifactAnswer;
    const byPrefix = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP.slice(0, 12)}`);
    const byId = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP}?artifact_id=${answer.id}`);
    const byTrail = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP}?trail=${TRAIL}`);
    expect(byPrefix.body).toBe(byFingerprint.body);
    expect(byId.body).toBe(byFingerprint.body);
    expect(byTrail.body).toBe(byFingerprint.body);

    const listed = await cli.get(`/api/v2/artifacts/acme?flow_name=${FLOW}&page=1&per_page=15`);
    expect(listed.status).toBe(200);
    const fromList = (listed.json as ArtifactAnswer[]).find((a) => a.fingerprint === FP);
    expect(JSON.stringify(fromList)).toBe(byFingerprint.body);

    const byCommit = await cli.get(`/api/v2/artifacts/acme/${FLOW}/commit_sha/${COMMIT}`);
    expect(byCommit.status).toBe(200);
    const fromCommit = (byCommit.json as ArtifactAnswer[]).find((a) => a.fingerprint === FP);
    expect(JSON.stringify(fromCommit)).toBe(byFingerprint.body);
  });

  it('keeps the evidence of another artifact in the same trail apart', async () => {
    const r = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${OTHER_FP}`);
    expect(r.status).toBe(200);
    const answer = r.json as ArtifactAnswer;
    const latest = posted.filter((p) => p.fingerprint === OTHER_FP).at(-1)!;
    expect(Object.keys(answer.evidence)).toEqual(['unit']);
    expect(answer.evidence.unit).toMatchObject({ is_compliant: latest.compliant, build_url: latest.origin });
    expect(answer.history).toHaveLength(1 + ROUNDS);
    expect(answer.history_total).toBe(1 + ROUNDS);
  });
});

describe("a flow's attestations, page by page", () => {
  interface Page {
    data: Array<{ attestation_name: string; origin_url: string | null; attestation_id: string }>;
    pagination: { total: number; page: number; page_count?: number };
  }
  const pageOf = async (page: number, perPage: number, span = '') => {
    const r = await cli.get(`/api/v2/attestations/acme/${FLOW}?page=${page}&per_page=${perPage}${span}`);
    expect(r.status).toBe(200);
    return r.json as Page;
  };
  /** Every page of `perPage` until an empty one: each page's total, and the items in order. */
  async function allPages(perPage: number, span = '') {
    const items: Page['data'] = [];
    const totals = new Set<number>();
    for (let page = 1; page < 100; page++) {
      const p = await pageOf(page, perPage, span);
      totals.add(p.pagination.total);
      if (p.data.length === 0) {
        break;
      }
      expect(p.data.length).toBeLessThanOrEqual(perPage);
      items.push(...p.data);
    }
    return { items, totals: [...totals] };
  }

  it('lists every report of the flow once, newest first, with the same total on each page', async () => {
    // Reads carry log_index, filled in when the log sequences them: both readings after that.
    await t.app.transparencyLog.sequence();
    const { items, totals } = await allPages(7);
    const newestFirst = [...posted].reverse();
    expect(totals).toEqual([posted.length]);
    expect(new Set(items.map((i) => i.attestation_id)).size).toBe(items.length);
    expect(items.map((i) => [i.attestation_name, i.origin_url])).toEqual(
      newestFirst.map((p) => [p.name, p.origin]),
    );
    // The same order, whatever the page size.
    expect((await allPages(25)).items).toEqual(items);
  });

  it('counts and pages only the reports in a time span', async () => {
    const from = posted[3 * 5]!.at;
    const to = posted[8 * 5]!.at;
    const inSpan = posted.filter((p) => p.at >= from && p.at <= to).reverse();
    expect(inSpan.length).toBeGreaterThan(0);
    expect(inSpan.length).toBeLessThan(posted.length);
    const { items, totals } = await allPages(4, `&from_timestamp=${from}&to_timestamp=${to}`);
    expect(totals).toEqual([inSpan.length]);
    expect(items.map((i) => [i.attestation_name, i.origin_url])).toEqual(
      inSpan.map((p) => [p.name, p.origin]),
    );
  });
});
