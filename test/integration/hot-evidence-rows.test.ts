/**
 * The rows every attestation rewrites stay cheap to rewrite (migration 0380): an artifact's pages
 * keep room for its new versions, so each attestation's rewrite of its state is a heap-only
 * update, and compliance documents and trail facts are compressed with lz4 where the server has it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

describe('rows rewritten by every attestation', () => {
  it('leaves half of each artifact page free for new versions', async () => {
    const r = await sql<{ options: string[] | null }>`
      select reloptions as options from pg_class where oid = 'artifacts'::regclass`.execute(t.db.db);
    expect(r.rows[0]!.options).toContain('fillfactor=50');
  });

  it('compresses compliance and trail facts with lz4 where the server has it', async () => {
    const lz4 = (
      await sql<{ lz4: boolean }>`
        select coalesce((select 'lz4' = any(enumvals) from pg_settings
          where name = 'default_toast_compression'), false) as lz4`.execute(t.db.db)
    ).rows[0]!.lz4;
    const r = await sql<{ col: string; method: string }>`
      select attrelid::regclass::text || '.' || attname as col, attcompression::text as method
      from pg_attribute
      where (attrelid, attname) in (('artifacts'::regclass, 'compliance'), ('trails'::regclass, 'compliance'),
        ('trail_facts'::regclass, 'facts'))
      order by 1`.execute(t.db.db);
    const expected = lz4 ? 'l' : '';
    expect(r.rows).toEqual(
      ['artifacts.compliance', 'trail_facts.facts', 'trails.compliance'].map((col) => ({
        col,
        method: expected,
      })),
    );
  });

  it('still stores and answers an artifact rewritten by many attestations', async () => {
    const cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
    expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'hot', description: '' })).status).toBe(201);
    expect((await cli.json('PUT', '/api/v2/trails/acme/hot', { name: 'run-1' })).status).toBe(201);
    const fingerprint = 'a'.repeat(64);
    const reported = await cli.json('POST', '/api/v2/artifacts/acme/hot', {
      fingerprint,
      filename: 'app',
      trail_name: 'run-1',
      build_url: 'https://ci.example/1',
      commit_url: 'https://git.example/1',
    });
    expect(reported.status).toBe(201);
    for (let i = 0; i < 30; i++) {
      const res = await cli.multipart('POST', '/api/v2/attestations/acme/hot/trail/run-1/generic', [
        {
          name: 'data_json',
          value: JSON.stringify({
            attestation_name: 'lint',
            artifact_fingerprint: fingerprint,
            is_compliant: i % 2 === 0,
          }),
        },
      ]);
      expect(res.status).toBe(201);
    }
    const artifact = await cli.get(`/api/v2/artifacts/acme/hot/fingerprint/${fingerprint}`);
    expect(artifact.status).toBe(200);
    const evidence = (artifact.json as { evidence: Record<string, { is_compliant: boolean }> }).evidence;
    // The 30th attestation (odd: non-compliant) is the one in effect.
    expect(evidence.lint?.is_compliant).toBe(false);
  });
});
