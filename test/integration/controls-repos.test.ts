/** Controls (beta, spec endpoint 13), repos and their tags (spec endpoint 15), and the trail audit package. */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { untar } from '../helpers/tar.js';
import { sql } from 'kysely';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { reposRepository } from '../../services/api/src/storage/repositories/repos.js';

let t: TestApp;
let admin: ReturnType<typeof cliClient>;
let member: ReturnType<typeof cliClient>;
let otherOrg: ReturnType<typeof cliClient>;
const controls = '/api/v2/controls/acme';

beforeAll(async () => {
  t = await createTestApp();
  admin = cliClient(t.app, await t.seedKey('acme', 'admin'));
  member = cliClient(t.app, await t.seedKey('acme', 'member'));
  otherOrg = cliClient(t.app, await t.seedKey('globex', 'admin'));
});
afterAll(async () => t?.close());

describe('controls', () => {
  it('answers 403 with a clear message while the beta is off, reads included', async () => {
    for (const r of [
      await admin.get(controls),
      await admin.json('POST', controls, { identifier: 'C-1', name: 'x' }),
    ]) {
      expect(r.status).toBe(403);
      expect(r.json.message).toMatch(/beta feature that is not enabled for organization 'acme'/);
    }
    expect((await admin.get(`${controls}/C-1/versions/1`)).status).toBe(403);
  });

  it('creates, versions on every change of name, description or links, and records events', async () => {
    await admin.json('PUT', '/api/v2/organizations/acme/experimental_features', {
      experimental_features_enabled: true,
    });
    const created = await admin.json('POST', controls, {
      identifier: 'RCTL-043',
      name: 'Peer review',
      description: 'Two people',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      identifier: 'RCTL-043',
      name: 'Peer review',
      version: 1,
      archived: false,
      tags: {},
    });
    const dup = await admin.json('POST', controls, { identifier: 'RCTL-043', name: 'again' });
    expect(dup.status).toBe(409);
    expect(dup.json.message).toBe(
      "A control with identifier 'RCTL-043' already exists in organization 'acme'",
    );
    const updated = await admin.json('PUT', `${controls}/RCTL-043`, {
      links: { grc: 'https://grc.example/43' },
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      version: 2,
      name: 'Peer review',
      links: { grc: 'https://grc.example/43' },
    });
    const same = await admin.json('PUT', `${controls}/RCTL-043`, { name: 'Peer review' });
    expect(same.json.version).toBe(2);
    await admin.json('PUT', `${controls}/RCTL-043`, { name: 'Four eyes' });
    expect((await admin.json('POST', `${controls}/RCTL-043/archive`)).json.archived).toBe(true);
    const got = (await admin.json('POST', `${controls}/RCTL-043/unarchive`)).json;
    expect(got.version).toBe(3);
    expect(got.events.map((e: any) => [e.event, e.version])).toEqual([
      ['created', 1],
      ['updated', 2],
      ['updated', 3],
      ['archived', 3],
      ['unarchived', 3],
    ]);
    const v1 = await admin.get(`${controls}/RCTL-043/versions/1`);
    expect(v1.json).toMatchObject({
      identifier: 'RCTL-043',
      version: 1,
      name: 'Peer review',
      description: 'Two people',
      links: {},
    });
    expect(typeof v1.json.created_at).toBe('number');
    expect(typeof v1.json.created_by).toBe('string');
    expect((await admin.get(`${controls}/RCTL-043/versions/9`)).status).toBe(404);
    expect((await admin.get(`${controls}/RCTL-043/versions/zero`)).status).toBe(400);
    expect((await admin.get(`${controls}/NOPE`)).status).toBe(404);
  });

  it('lists controls in pages, by search and archived flag', async () => {
    await admin.json('POST', controls, { identifier: 'SEC-1', name: 'Scanning' });
    const page = (await admin.get(`${controls}?page=1&per_page=1`)).json;
    expect(page).toMatchObject({ page: 1, per_page: 1, total_pages: 2, total_count: 2 });
    expect(page.controls).toHaveLength(1);
    expect((await admin.get(`${controls}?search=four`)).json.controls.map((c: any) => c.identifier)).toEqual([
      'RCTL-043',
    ]);
  });

  it('lets only admins write controls, and tags them without a new version', async () => {
    expect((await member.json('POST', controls, { identifier: 'M-1', name: 'x' })).status).toBe(403);
    expect((await member.get(controls)).status).toBe(200);
    expect(
      (await member.json('PATCH', '/api/v2/tags/acme/control/SEC-1', { set_tags: { area: 'sec' } })).status,
    ).toBe(403);
    expect(
      (
        await admin.json('PATCH', '/api/v2/tags/acme/controls/SEC-1', {
          set_tags: { area: 'sec' },
          remove_tags: [],
        })
      ).status,
    ).toBe(200);
    const c = (await admin.get(`${controls}/SEC-1`)).json;
    expect(c).toMatchObject({ tags: { area: 'sec' }, version: 1 });
    expect((await admin.get(`${controls}?tag=area:sec`)).json.controls.map((x: any) => x.identifier)).toEqual(
      ['SEC-1'],
    );
  });
});

describe('repos', () => {
  beforeAll(async () => {
    const repo_info = {
      name: 'acme/payments',
      url: 'https://github.com/acme/payments',
      id: '42',
      provider: 'github',
    };
    await member.json('PUT', '/api/v2/flows/acme', { name: 'pay', description: '' });
    await member.json('PUT', '/api/v2/trails/acme/pay', { name: 'one', repo_info });
    await member.json('POST', '/api/v2/artifacts/acme/pay', {
      fingerprint: '3'.repeat(64),
      filename: 'pay',
      build_url: 'b',
      commit_url: 'c',
      trail_name: 'one',
      repo_info: { ...repo_info, description: 'Payments' },
    });
    await member.json('PUT', '/api/v2/trails/acme/pay', {
      name: 'two',
      repo_info: { name: 'acme/payments', url: 'https://gitlab.example/acme/payments', provider: 'gitlab' },
    });
  });

  it('captures repos from repo_info and gets one by a name containing /', async () => {
    const list = (await member.get('/api/v2/repos/acme?page=1&per_page=15')).json;
    expect(list).toMatchObject({ page: 1, per_page: 15, total_pages: 1, total_count: 2 });
    expect(list.repos.map((r: any) => r.provider).sort()).toEqual(['github', 'gitlab']);
    const ambiguous = await member.get('/api/v2/repos/acme/acme/payments');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.json.message).toMatch(/several providers \(github, gitlab\)/);
    const repo = (await member.get('/api/v2/repos/acme/acme/payments?provider=github')).json;
    expect(repo).toMatchObject({
      name: 'acme/payments',
      url: 'https://github.com/acme/payments',
      provider: 'github',
      repo_id: '42',
      description: 'Payments',
      tags: {},
    });
    expect((await member.get(`/api/v2/repos/acme/whatever?id=${repo.id}`)).json.name).toBe('acme/payments');
    const missing = await member.get('/api/v2/repos/acme/acme/nothing');
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe("Repo 'acme/nothing' not found");
    const artifacts = await member.get('/api/v2/artifacts/acme?repo_name=acme/payments');
    expect(artifacts.json.map((a: any) => a.filename)).toEqual(['pay']);
  });

  it('tags repos by id and lists the distinct tag choices; `tags` is never a repo name', async () => {
    const [gh, gl] = (await member.get('/api/v2/repos/acme?sort_direction=asc')).json.repos.sort(
      (a: any, b: any) => a.provider.localeCompare(b.provider),
    );
    expect(
      (
        await member.json('PATCH', `/api/v2/tags/acme/repo/${gh.id}`, {
          set_tags: { team: 'pay', tier: '1' },
          remove_tags: [],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await member.json('PATCH', `/api/v2/tags/acme/repos/${gl.id}`, {
          set_tags: { team: 'pay' },
          remove_tags: [],
        })
      ).status,
    ).toBe(200);
    expect((await member.json('PATCH', '/api/v2/tags/acme/repo/no-such-id', { set_tags: {} })).status).toBe(
      404,
    );
    const choices = await member.get('/api/v2/repos/acme/tags');
    expect(choices.status).toBe(200);
    expect(choices.json.tag_choices).toEqual([
      { key: 'team', value: 'pay' },
      { key: 'tier', value: '1' },
    ]);
    expect((await member.get('/api/v2/repos/acme?tag=tier:1')).json.repos.map((r: any) => r.id)).toEqual([
      gh.id,
    ]);
    expect((await otherOrg.get('/api/v2/repos/globex/tags')).json.tag_choices).toEqual([]);
  });

  it('binds a tag key as a parameter, whatever the string-literal settings', async () => {
    const org = (await orgsRepository.findByName(t.db.db, 'acme'))!;
    const list = (key: string, value: string | null) =>
      t.db.db.transaction().execute(async (tx) => {
        // Where a literal would read backslashes as escapes, a quote in an inlined key escapes it.
        await sql`set local standard_conforming_strings = off`.execute(tx);
        const { rows, total } = await reposRepository.list(
          tx,
          org.id,
          { tags: [{ key, value }] },
          { limit: 10, offset: 0 },
          'asc',
        );
        return { names: rows.map((r) => r.name), total };
      });
    expect(await list("\\' or true or tags ->> 'a", null)).toEqual({ names: [], total: 0 });
    expect((await list('tier', '1')).total).toBe(1);
    expect((await list('tier', null)).total).toBe(1);
  });

  it('refuses bad tag input with 400', async () => {
    const r = await member.json('PATCH', '/api/v2/tags/acme/flow/pay', {
      set_tags: { '-bad key': 'x' },
      remove_tags: [],
    });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)[0]).toMatch(/^body\.set_tags/);
  });
});

describe('trail audit package', () => {
  it('streams the trail, its compliance, artifacts, attestations and evidence with a manifest of sums', async () => {
    await member.multipart('POST', '/api/v2/attestations/acme/pay/trail/one/generic', [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'notes', is_compliant: true }) },
      { name: 'attachment_file', filename: 'notes.md', content: '# release notes\n' },
    ]);
    const res = await t.app.inject({
      url: '/api/v2/trails/acme/pay/one/audit_package',
      headers: { authorization: `Bearer ${await t.seedKey('acme', 'reader')}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="pay-one-audit-package.tar.gz"');
    const files = await untar(gunzipSync(res.rawPayload));
    // The transparency log's proofs (log/...) are checked in transparency-log-verify.test.ts.
    expect([...files.keys()].filter((n) => !n.startsWith('log/')).sort()).toEqual([
      'MANIFEST.sha256',
      `artifacts/${'3'.repeat(64)}.json`,
      'attestations/001-notes/attestation.json',
      'attestations/001-notes/evidence/notes.md',
      'compliance.json',
      'trail.json',
    ]);
    for (const line of files.get('MANIFEST.sha256')!.toString().trim().split('\n')) {
      const [sum, name] = line.split('  ');
      expect(createHash('sha256').update(files.get(name!)!).digest('hex')).toBe(sum);
    }
    expect(files.get('attestations/001-notes/evidence/notes.md')!.toString()).toBe('# release notes\n');
    expect(JSON.parse(files.get('trail.json')!.toString()).name).toBe('one');
    expect((await member.get('/api/v2/trails/acme/pay/ghost/audit_package')).status).toBe(404);
  });
});
