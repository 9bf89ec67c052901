/**
 * Repos captured from attestations: a `repo_info` the repo already holds writes nothing (so
 * attestations from one repository do not wait on its row), a changed one updates it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { changeElsewhere } from '../helpers/elsewhere.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const repo_info = {
  name: 'acme/backend',
  url: 'https://github.com/acme/backend',
  id: '7',
  provider: 'github',
};

const attest = (name: string, info: Record<string, unknown>) =>
  cli.multipart('POST', '/api/v2/attestations/acme/ci/trail/t1/generic', [
    {
      name: 'data_json',
      value: JSON.stringify({ attestation_name: name, is_compliant: true, user_data: {}, repo_info: info }),
    },
  ]);

/** The repo row's version (xmin) and description. */
const repoRow = async () =>
  (
    await sql<{ version: string; description: string | null; id: string }>`
      select xmin::text as version, description, id from repos where name = 'acme/backend'`.execute(t.db.db)
  ).rows;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  await cli.json('PUT', '/api/v2/flows/acme', { name: 'ci', description: '' });
  await cli.json('PUT', '/api/v2/trails/acme/ci', { name: 't1' });
});
afterAll(async () => t?.close());

describe('repos from attestations', () => {
  it('writes nothing when the repo_info is what the repo holds, and still links the attestation', async () => {
    expect((await attest('lint', repo_info)).status).toBe(201);
    const [first] = await repoRow();
    expect(first).toBeDefined();
    expect((await attest('unit', repo_info)).status).toBe(201);
    expect(
      (await attest('unit', { name: repo_info.name, url: repo_info.url, provider: 'github' })).status,
    ).toBe(201);
    const [after] = await repoRow();
    expect(after!.version).toBe(first!.version);
    const linked = await sql<{ repo_id: string | null }>`
      select repo_id from attestations where name = 'unit'`.execute(t.db.db);
    expect(linked.rows.map((r) => r.repo_id)).toEqual([first!.id, first!.id]);
  });

  it('updates the repo when the repo_info says something new', async () => {
    const [before] = await repoRow();
    expect((await attest('scan', { ...repo_info, description: 'Backend' })).status).toBe(201);
    const [after] = await repoRow();
    expect(after!.version).not.toBe(before!.version);
    expect(after!.description).toBe('Backend');
    expect(after!.id).toBe(before!.id);
  });

  it('writes the repo_info again when the repo was changed elsewhere (another replica)', async () => {
    const info = { ...repo_info, description: 'Backend' };
    expect((await attest('remembered', info)).status).toBe(201);
    expect((await attest('remembered', info)).status).toBe(201);
    await changeElsewhere(t, 'acme', () =>
      sql`update repos set description = 'Elsewhere' where name = 'acme/backend'`.execute(t.db.db),
    );
    expect((await attest('remembered', info)).status).toBe(201);
    const [after] = await repoRow();
    expect(after!.description).toBe('Backend');
  });
});
