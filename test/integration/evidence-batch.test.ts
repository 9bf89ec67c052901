/**
 * Attestations with an evidence file go with the batch: the file is stored first, in its own
 * statement, and served by its download URL as uploaded. A file whose attestation then failed
 * is collected once it is older than an hour; a file an attestation names is kept.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { trailStore } from '../../services/api/src/storage/trail-store/index.js';
import {
  collectOrphanedEvidence,
  EvidenceCollector,
} from '../../services/api/src/usecases/evidence/evidence-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;

const attest = (data: Record<string, unknown>, file?: { filename: string; content: string }) =>
  cli.multipart('POST', '/api/v2/attestations/acme/ci/trail/t1/generic', [
    { name: 'data_json', value: JSON.stringify({ is_compliant: true, user_data: {}, ...data }) },
    ...(file ? [{ name: 'attachment_file', ...file }] : []),
  ]);
const files = async () =>
  (
    await sql<{ sha256: string }>`select sha256 from evidence_files order by sha256`.execute(t.db.db)
  ).rows.map((r) => r.sha256);

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  await cli.json('PUT', '/api/v2/flows/acme', { name: 'ci', description: '' });
  await cli.json('PUT', '/api/v2/trails/acme/ci', { name: 't1' });
  // One report first, so the rest find the organization's settings known (the unlocked path).
  expect((await attest({ attestation_name: 'warm' })).status).toBe(201);
});
afterEach(() => vi.restoreAllMocks());
afterAll(async () => t?.close());

describe('evidence files on the batch path', () => {
  it('stores the attestation with the batch and serves its file as uploaded', async () => {
    const locked = vi.spyOn(trailStore, 'lockWithFlow');
    const batched = vi.spyOn(trailStore, 'insertAttestationBatch');
    const xml = '<testsuites><testsuite name="a" tests="1" failures="0" errors="0"/></testsuites>';
    const r = await attest({ attestation_name: 'unit' }, { filename: 'report.xml', content: xml });
    expect(r.status, r.body).toBe(201);
    expect(locked).not.toHaveBeenCalled();
    expect(batched).toHaveBeenCalled();
    const [latest] = (await cli.get('/api/v2/attestations/acme/ci/trail/t1/unit')).json;
    expect(latest.evidence_file).toMatchObject({ filename: 'report.xml', size: xml.length });
    const download = await t.app.inject({
      url: new URL(latest.evidence_file.download_url).pathname,
      headers: { authorization: `Bearer ${await t.seedKey('acme', 'reader')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/xml');
    expect(download.body).toBe(xml);
  });

  it('collects the file of a failed attestation after an hour, and keeps a named one', async () => {
    const named = await files();
    expect(named).toHaveLength(1);
    const r = await attest(
      { attestation_name: 'scan', artifact_fingerprint: 'cd'.repeat(32) },
      { filename: 'scan.json', content: '{"orphan":true}' },
    );
    expect(r.status).toBe(404);
    expect(await files()).toHaveLength(2);
    const store = t.app.services.store;
    // Younger than an hour: kept.
    expect(await collectOrphanedEvidence(t.db.db, store, t.clock.now())).toBe(0);
    const later = new Date(t.clock.now().getTime() + 2 * 3_600_000);
    expect(await collectOrphanedEvidence(t.db.db, store, later)).toBe(1);
    expect(await files()).toEqual(named);
    expect(await collectOrphanedEvidence(t.db.db, store, later)).toBe(0);
  });

  it('does not collect a file stored again since, even one stored long ago', async () => {
    const content = '{"again":true}';
    /** An attestation of an artifact the trail lacks (404), with the same file. */
    const refused = async (name: string) =>
      (
        await attest(
          { attestation_name: name, artifact_fingerprint: 'ef'.repeat(32) },
          { filename: `${name}.json`, content },
        )
      ).status;
    expect(await refused('a')).toBe(404);
    t.clock.advance(2 * 3_600_000);
    // The same content again, as the next attestation's file: young again until it is named.
    expect(await refused('b')).toBe(404);
    expect(await collectOrphanedEvidence(t.db.db, t.app.services.store, t.clock.now())).toBe(0);
  });

  it('reads, in each collector pass, only the files stored since the previous pass', async () => {
    const orgId = (await sql<{ id: string }>`select id from orgs where name = 'acme'`.execute(t.db.db))
      .rows[0]!.id;
    const orphan = async (sha256: string, at: Date) =>
      sql`insert into evidence_files (org_id, sha256, size, content, created_at)
          values (${orgId}, ${sha256}, 1, ${Buffer.from('x')}, ${at})`.execute(t.db.db);
    const collector = new EvidenceCollector(t.db.db, t.app.services.store);
    const now = t.clock.now();
    // The first pass reads the whole store.
    await collector.pass(now);
    // A file dated before the window the last pass closed is not read again by the next one...
    await orphan('b2'.repeat(32), new Date(now.getTime() - 24 * 3_600_000));
    expect(await collector.pass(new Date(now.getTime() + 600_000))).toBe(0);
    // ...while one stored since is, once it is an hour old.
    await orphan('c3'.repeat(32), now);
    // (with the file the test before left, now an hour old too)
    expect(await collector.pass(new Date(now.getTime() + 2 * 3_600_000))).toBe(2);
    expect(await files()).toContain('b2'.repeat(32));
    expect(await files()).not.toContain('c3'.repeat(32));
    // A whole-store pass still finds it.
    expect(await collectOrphanedEvidence(t.db.db, t.app.services.store, now)).toBe(1);
    expect(await files()).not.toContain('b2'.repeat(32));
  });
});
