/** Service accounts as the CLI drives them, and who may manage which. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';

let t: TestApp;
let admin: ReturnType<typeof client>;
const base = '/api/v2/service-accounts/acme';

beforeAll(async () => {
  t = await createTestApp();
  admin = client(t.app, await t.seedKey('acme', 'admin'));
});
afterAll(async () => t?.close());

describe('service accounts', () => {
  it('creates (201), gets, lists, updates and deletes with the shapes the CLI reads', async () => {
    const created = await admin.post(base, {
      name: 'ci-bot',
      description: 'CI service account',
      privilege: 'member',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'ci-bot',
      description: 'CI service account',
      privilege: 'member',
    });
    expect(typeof created.json.created_at).toBe('number');

    expect((await admin.get(`${base}/ci-bot`)).json).toEqual(created.json);
    const listed = await admin.get(base);
    expect(Array.isArray(listed.json)).toBe(true);
    expect(listed.json.map((a: { name: string }) => a.name)).toContain('ci-bot');

    const updated = await admin.patch(`${base}/ci-bot`, {
      description: 'updated description',
      privilege: 'admin',
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      name: 'ci-bot',
      description: 'updated description',
      privilege: 'admin',
    });
    const cleared = await admin.patch(`${base}/ci-bot`, { description: null });
    expect(cleared.json.description).toBe('');

    const deleted = await admin.delete(`${base}/ci-bot`, null);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toBe('OK');
    const gone = await admin.get(`${base}/ci-bot`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ message: 'Service account not found' });
  });

  it('shows the display name given on create or update, else the name', async () => {
    const plain = await admin.post(base, { name: 'plain-bot' });
    expect(plain.json.display_name).toBe('plain-bot');
    const named = await admin.post(base, { name: 'named-bot', display_name: 'Release bot' });
    expect(named.status).toBe(201);
    expect(named.json.display_name).toBe('Release bot');
    expect((await admin.get(`${base}/named-bot`)).json.display_name).toBe('Release bot');
    const renamed = await admin.patch(`${base}/named-bot`, { display_name: 'Deploy bot' });
    expect(renamed.json.display_name).toBe('Deploy bot');
    expect((await admin.get(base)).json.find((a: any) => a.name === 'named-bot').display_name).toBe(
      'Deploy bot',
    );
    const cleared = await admin.patch(`${base}/named-bot`, { display_name: null });
    expect(cleared.json.display_name).toBe('named-bot');
    const blank = await admin.post(base, { name: 'blank-bot', display_name: '  ' });
    expect(blank.status).toBe(400);
    expect(blank.json.errors['body.display_name']).toBeDefined();
  });

  it('defaults the privilege to reader', async () => {
    const res = await admin.post(base, { name: 'auditor' });
    expect(res.json.privilege).toBe('reader');
  });

  it('refuses a duplicate name with 400, not a retryable 409', async () => {
    await admin.post(base, { name: 'dup' });
    const res = await admin.post(base, { name: 'dup' });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/already exists/);
  });

  it('lets a snapshotter manage only the accounts it created, never above its role', async () => {
    const snap = client(t.app, await t.seedKey('acme', 'snapshotter'));
    expect((await snap.post(base, { name: 'escalate', privilege: 'admin' })).status).toBe(403);
    expect((await snap.post(base, { name: 'escalate', privilege: 'member' })).status).toBe(403);
    const own = await snap.post(base, { name: 'reporter-bot', privilege: 'snapshotter' });
    expect(own.status).toBe(201);
    const key = await snap.post(`${base}/reporter-bot/api-keys`, { description: 'reporter' });
    expect(key.status).toBe(201);
    expect((await snap.patch(`${base}/reporter-bot`, { privilege: 'admin' })).status).toBe(403);

    await admin.post(base, { name: 'not-yours', privilege: 'reader' });
    expect((await snap.post(`${base}/not-yours/api-keys`, { description: 'steal' })).status).toBe(403);
    expect((await snap.delete(`${base}/not-yours`, null)).status).toBe(403);
    // reading is allowed
    expect((await snap.get(`${base}/not-yours`)).status).toBe(200);
    expect((await snap.delete(`${base}/reporter-bot`, null)).status).toBe(200);
  });

  it('keeps accounts of another organization invisible', async () => {
    const other = client(t.app, await t.seedKey('globex', 'admin'));
    await other.post('/api/v2/service-accounts/globex', { name: 'secret-bot' });
    const res = await admin.get('/api/v2/service-accounts/globex/secret-bot');
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ message: 'Access denied to /api/v2/service-accounts/globex/secret-bot' });
    const list = await admin.get(base);
    expect(list.body).not.toContain('secret-bot');
  });
});
