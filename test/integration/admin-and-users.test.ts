/** The admin command, and personal keys: a user reaches exactly the orgs it is a member of. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminUsageError, runAdmin } from '../../services/api/src/admin-commands.js';
import { createTestApp, client, type TestApp } from '../helpers/app.js';

let t: TestApp;
const admin = (...argv: string[]) => runAdmin(t.db.db, argv, t.clock.now());
const keyOf = (lines: string[]) => lines.find((l) => l.startsWith('API key: '))!.slice('API key: '.length);

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

describe('admin command', () => {
  it('creates orgs, users, memberships and keys with clear output, idempotently', async () => {
    expect(await admin('org', 'create', 'acme')).toEqual(["created organization 'acme'"]);
    expect(await admin('org', 'create', 'acme')).toEqual(["organization 'acme' already exists"]);
    expect(await admin('org', 'create', 'globex')).toEqual(["created organization 'globex'"]);
    expect(await admin('user', 'create', 'alice', '--email', 'alice@example.com')).toEqual([
      "created user 'alice'",
    ]);
    expect(await admin('member', 'add', 'acme', 'alice', '--role', 'member')).toEqual([
      "'alice' is member in 'acme'",
    ]);
    expect(await admin('org', 'list')).toEqual(['acme\tacme', 'globex\tglobex']);
  });

  it('explains mistakes without touching anything', async () => {
    await expect(admin('member', 'add', 'acme', 'alice', '--role', 'owner')).rejects.toThrow(AdminUsageError);
    await expect(admin('member', 'add', 'nowhere', 'alice', '--role', 'reader')).rejects.toThrow(
      /does not exist/,
    );
    await expect(admin('key', 'create')).rejects.toThrow(/--user, or --org and --service-account/);
    await expect(admin('frobnicate')).rejects.toThrow(/Usage/);
  });

  it('prints a personal key once; it works on the member org only, with the member role', async () => {
    const lines = await admin('key', 'create', '--user', 'alice', '--description', 'laptop');
    expect(lines.at(-1)).toBe('Store the key now: it is not shown again.');
    const api = client(t.app, keyOf(lines));
    expect((await api.get('/api/v2/organizations/acme')).status).toBe(200);
    expect((await api.get('/api/v2/organizations/globex')).status).toBe(403);
    // a member may not change org settings
    expect(
      (
        await api.put('/api/v2/organizations/acme/experimental_features', {
          experimental_features_enabled: true,
        })
      ).status,
    ).toBe(403);
    expect((await api.get('/api/v2/user/default-org')).json).toEqual({ default_org_name: 'acme' });
  });

  it('lets a user switch the default org among its memberships', async () => {
    await admin('member', 'add', 'globex', 'alice', '--role', 'reader');
    const api = client(t.app, keyOf(await admin('key', 'create', '--user', 'alice')));
    expect((await api.put('/api/v2/user/globex', null)).status).toBe(200);
    expect((await api.get('/api/v2/user/default-org')).json).toEqual({ default_org_name: 'globex' });
  });

  it('creates service-account keys for an org', async () => {
    expect(await admin('service-account', 'create', 'acme', 'deployer', '--role', 'admin')).toEqual([
      "created service account 'deployer' in 'acme'",
    ]);
    const key = keyOf(await admin('key', 'create', '--org', 'acme', '--service-account', 'deployer'));
    const api = client(t.app, key);
    expect(
      (
        await api.put('/api/v2/organizations/acme/experimental_features', {
          experimental_features_enabled: true,
        })
      ).status,
    ).toBe(200);
    expect((await api.get('/api/v2/organizations/acme')).json.experimental_features_enabled).toBe(true);
    expect((await api.get('/api/v2/user/default-org')).json).toEqual({ default_org_name: 'acme' });
  });
});
