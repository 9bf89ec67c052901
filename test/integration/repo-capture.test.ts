/**
 * Repos captured from attestations: a `repo_info` the repo already holds writes nothing (so
 * attestations from one repository do not wait on its row), a changed one updates it. A new repo
 * named by several transactions at once is stored by one, and the others wait only for that one.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { changeElsewhere } from '../helpers/elsewhere.js';
import { onPostgres } from '../helpers/database.js';
import { captureRepo } from '../../services/api/src/usecases/evidence/repos.js';
import type { Db } from '../../services/api/src/storage/database.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const repo_info = {
  name: 'acme/backend',
  url: 'https://github.com/acme/backend',
  id: '7',
  provider: 'github' as const,
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

describe.skipIf(!onPostgres)('a new repo named by concurrent transactions', () => {
  /** A transaction that captures `info`, then stays open until `release` resolves. */
  function holder(info: typeof repo_info, release: Promise<void>) {
    let captured!: (id: string | null) => void;
    const id = new Promise<string | null>((resolve) => (captured = resolve));
    const done = t.db.db.transaction().execute(async (trx: Db) => {
      const orgId = (await sql<{ id: string }>`select id from orgs where name = 'acme'`.execute(trx)).rows[0]!
        .id;
      captured(await captureRepo(trx, orgId, info, new Date()));
      await release;
    });
    return { id, done };
  }

  it('each waits for the transaction that stored it, not for each other', async () => {
    const info = { ...repo_info, name: 'acme/new-service', url: 'https://github.com/acme/new-service' };
    let releaseFirst!: () => void;
    const first = holder(info, new Promise<void>((r) => (releaseFirst = r)));
    const firstId = await first.id;
    // Two more name it while the first has not committed: they wait for it...
    let releaseOthers!: () => void;
    const othersReleased = new Promise<void>((r) => (releaseOthers = r));
    const others = [holder(info, othersReleased), holder(info, othersReleased)];
    const waiting = await Promise.race([
      Promise.all(others.map((o) => o.id)).then(() => 'captured'),
      new Promise((r) => setTimeout(() => r('waiting'), 300)),
    ]);
    expect(waiting).toBe('waiting');
    releaseFirst();
    await first.done;
    // ...and once it committed, both capture it while the other is still open: neither locked
    // the row for the other to wait on.
    const ids = await Promise.race([
      Promise.all(others.map((o) => o.id)),
      new Promise((r) => setTimeout(() => r('one waited for the other'), 3000)),
    ]);
    releaseOthers();
    await Promise.all(others.map((o) => o.done));
    expect(ids).toEqual([firstId, firstId]);
    const rows = await sql<{ n: number }>`
      select count(*)::int as n from repos where name = 'acme/new-service'`.execute(t.db.db);
    expect(rows.rows[0]!.n).toBe(1);
  });
});
