/**
 * An artifact's answer reads the attestations it shows, not its trail's: on a trail of thousands
 * of attestations whose statistics were never analyzed (a trail that grew since the last
 * `ANALYZE`), the read of an artifact's evidence fetches each attestation its compliance names by
 * key, and the client sees the latest of each name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { artifactsRepository } from '../../services/api/src/storage/repositories/artifacts.js';
import { rowsRead } from '../helpers/table-reads.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const FLOW = 'ci';
const TRAIL = 'run-1';
const FP = 'd'.repeat(64);
const NAMES = ['unit', 'lint', 'scan'];
const OLDER = 3_000;

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme'));
  expect((await cli.json('PUT', `/api/v2/flows/acme`, { name: FLOW, description: '' })).status).toBe(201);
  expect((await cli.json('PUT', `/api/v2/trails/acme/${FLOW}`, { name: TRAIL })).status).toBe(201);
  const artifact = await cli.json('POST', `/api/v2/artifacts/acme/${FLOW}`, {
    fingerprint: FP,
    filename: 'backend',
    git_commit: 'c'.repeat(40),
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: TRAIL,
  });
  expect(artifact.status).toBe(201);
  // Thousands of older reports of the same names, written as rows (the trail grew)...
  await sql`insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
      artifact_fingerprint, created_by, created_at)
    select t.org_id, 'older-' || i, t.flow_id, t.id, (array['unit', 'lint', 'scan'])[1 + i % 3], 'generic',
      'generic', false, ${FP}, 'test', now() - interval '1 day'
    from trails t, generate_series(1, ${OLDER}::int) i where t.name = ${TRAIL}`.execute(t.db.db);
  // ...then the reports the artifact's compliance names, through the API.
  for (const name of NAMES) {
    t.clock.advance(1000);
    const r = await cli.multipart('POST', `/api/v2/attestations/acme/${FLOW}/trail/${TRAIL}/generic`, [
      {
        name: 'data_json',
        value: JSON.stringify({ attestation_name: name, is_compliant: true, artifact_fingerprint: FP }),
      },
    ]);
    expect(r.status, r.body).toBe(201);
  }
});
afterAll(async () => t?.close());

describe("an artifact's evidence on a large trail", () => {
  it('shows the latest report of each name', async () => {
    const r = await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${FP}`);
    expect(r.status, r.body).toBe(200);
    const evidence = r.json.evidence as Record<string, { attestation_id: string; is_compliant: boolean }>;
    expect(Object.keys(evidence).sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      // The older reports were non-compliant; the latest of each name, through the API, is.
      expect(evidence[name]!.is_compliant).toBe(true);
      expect(evidence[name]!.attestation_id).not.toMatch(/^older-/);
    }
  });

  it('reads the attestations it names, not the trail', async () => {
    const orgId = (await sql<{ id: string }>`select id from orgs where name = 'acme'`.execute(t.db.db))
      .rows[0]!.id;
    const { read, answer } = await t.db.db.connection().execute(async (c) => {
      const before = await rowsRead(c, 'attestations');
      const found = await artifactsRepository.readWithEvidence(c, orgId, FLOW, FP, undefined);
      return { read: (await rowsRead(c, 'attestations')) - before, answer: found };
    });
    expect(answer?.attestations.map((a) => a.id).filter((id) => id.startsWith('older-'))).toEqual([]);
    expect(answer?.attestations).toHaveLength(NAMES.length);
    expect(read).toBeLessThan(50);
  });
});
