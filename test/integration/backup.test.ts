/**
 * Backups of the embedded database: an admin of the backup organization downloads a consistent
 * dump while the server takes writes (`npm run admin -- backup`), and `npm run admin -- restore`
 * puts it into a stopped data directory that the app then opens with every acknowledged write.
 */
import { mkdirSync, mkdtempSync, openAsBlob, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../../services/api/src/admin-backup.js';
import { runAdmin } from '../../services/api/src/admin-commands.js';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { restoreBackup } from '../../services/api/src/usecases/access/backup.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-backup-'));
let t: TestApp;
let admin: string;
let url: string;

beforeAll(async () => {
  t = await createTestApp();
  // The backup organization (VERITY_BACKUP_ORG, by default the bootstrap one: `default`).
  admin = await t.seedKey('default', 'admin');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /api/v2/admin/backup', () => {
  it('is for admins of the backup organization only: a backup holds every organization', async () => {
    expect((await client(t.app).get('/api/v2/admin/backup')).status).toBe(401);
    const member = await t.seedKey('default', 'member');
    const refusedMember = await client(t.app, member).get('/api/v2/admin/backup');
    expect(refusedMember.status).toBe(403);
    // A member of the backup organization is told which role it lacks, and where.
    expect(refusedMember.json).toMatchObject({
      message:
        "A backup holds every organization's data: only admins of the organization 'default' may take one",
    });
  });

  it('names no organization to a caller outside the backup organization, admin or not', async () => {
    for (const role of ['admin', 'member', 'reader'] as const) {
      const outsider = await t.seedKey('tenant-b', role);
      const refused = await client(t.app, outsider).get('/api/v2/admin/backup');
      expect(refused.status).toBe(403);
      expect(refused.json).toEqual({
        message:
          "A backup holds every organization's data: only admins of the installation's backup organization may take one",
      });
      expect(refused.body).not.toContain('default');
    }
  });

  it('names no organization to a personal key of a user outside the backup organization', async () => {
    await runAdmin(t.db.db, ['org', 'create', 'tenant-c'], t.clock.now());
    await runAdmin(t.db.db, ['user', 'create', 'mallory'], t.clock.now());
    await runAdmin(t.db.db, ['member', 'add', 'tenant-c', 'mallory', '--role', 'admin'], t.clock.now());
    const lines = await runAdmin(t.db.db, ['key', 'create', '--user', 'mallory'], t.clock.now());
    const key = lines.find((l) => l.startsWith('API key: '))!.slice('API key: '.length);
    const refused = await client(t.app, key).get('/api/v2/admin/backup');
    expect(refused.status).toBe(403);
    expect(refused.body).not.toContain('default');
    // Once a reader of the backup organization, the same user is told the precise rule.
    await runAdmin(t.db.db, ['member', 'add', 'default', 'mallory', '--role', 'reader'], t.clock.now());
    const told = await client(t.app, key).get('/api/v2/admin/backup');
    expect(told.status).toBe(403);
    expect(told.json.message).toMatch(/only admins of the organization 'default'/);
  });

  it.runIf(onPostgres)('answers 501 on PostgreSQL, naming pg_dump and the operator backups', async () => {
    const res = await client(t.app, admin).get('/api/v2/admin/backup');
    expect(res.status).toBe(501);
    expect((res.json as { message: string }).message).toMatch(/pg_dump.*PITR/);
  });
});

describe.skipIf(onPostgres)('backup and restore of the embedded database', () => {
  it('keeps every write acknowledged before the backup began, under write load', async () => {
    const writer = client(t.app, admin);
    const acknowledged: Array<{ name: string; at: number }> = [];
    let writing = true;
    let n = 0;
    const load = async () => {
      while (writing) {
        const name = `flow-${++n}`;
        const res = await writer.put('/api/v2/flows/default', { name, description: `written ${n}` });
        if (res.status < 300) {
          acknowledged.push({ name, at: performance.now() });
        }
      }
    };
    const writers = [load(), load(), load()];
    while (acknowledged.length < 30) {
      await new Promise((r) => setTimeout(r, 10));
    }

    const file = join(dir, 'verity.tar');
    const began = performance.now();
    const lines = await backupCommand(['backup', file], { VERITY_URL: url, VERITY_API_KEY: admin });
    expect(lines).toEqual([`backup written to ${file}`]);
    const during = acknowledged.length;
    while (acknowledged.length < during + 10) {
      await new Promise((r) => setTimeout(r, 10));
    }
    writing = false;
    await Promise.all(writers);
    const before = acknowledged.filter((w) => w.at < began).map((w) => w.name);
    expect(before.length).toBeGreaterThanOrEqual(30);

    // A directory that holds something is replaced only when forced.
    const restoredDir = join(dir, 'restored');
    mkdirSync(restoredDir);
    writeFileSync(join(restoredDir, 'PG_VERSION'), '17');
    await expect(restoreBackup(await openAsBlob(file), restoredDir, { force: false })).rejects.toThrow(
      /is not empty.*--force/,
    );
    const result = await restoreBackup(await openAsBlob(file), restoredDir, { force: true });
    expect(result.organizations).toBeGreaterThanOrEqual(1);

    // The app on the restored directory, as `npm start` would open it.
    const database = await openDatabase({ dataDir: restoredDir });
    const restored = await buildApp({ config: testConfig(), database, logger: false });
    try {
      const reader = client(restored, admin);
      for (const name of before) {
        const res = await reader.get(`/api/v2/flows/default/${name}`);
        expect(res.status, name).toBe(200);
        expect(res.json).toMatchObject({ name, description: `written ${name.slice(5)}` });
      }
    } finally {
      await restored.close();
      await database.close();
    }
  }, 240_000);

  it('refuses a data directory a running server holds', async () => {
    const target = join(dir, 'locked');
    mkdirSync(target);
    // A live process holds the directory (the lock names the test runner's parent).
    writeFileSync(join(target, '.verity.lock'), String(process.ppid));
    await expect(restoreBackup(new Blob(['x']), target, { force: true })).rejects.toThrow(
      /in use by process/,
    );
    expect(readdirSync(target)).toEqual(['.verity.lock']);
  });

  it('refuses an archive that is not a backup, and leaves the directory as it was', async () => {
    const bogus = join(dir, 'bogus.tar');
    writeFileSync(bogus, 'not a tar at all');
    const target = join(dir, 'untouched');
    await expect(restoreBackup(await openAsBlob(bogus), target, { force: true })).rejects.toThrow(
      /not a data directory dump|not a Verity database/,
    );
    expect(() => readdirSync(target)).toThrow();
  });

  it('names the refusal when the key may not take backups', async () => {
    const member = await t.seedKey('default', 'member');
    await expect(
      backupCommand(['backup', join(dir, 'refused.tar')], { VERITY_URL: url, VERITY_API_KEY: member }),
    ).rejects.toThrow(/HTTP 403.*only admins of the organization 'default'/);
    expect(readdirSync(dir).filter((f) => f.startsWith('refused'))).toEqual([]);
  });
});
