/**
 * The backup of an embedded database kept in a directory (what `npm start` and the chart run):
 * streamed from a copy taken while PGlite runs no statement, restorable with every write
 * acknowledged before it began, and leaving nothing behind in the data directory, also when the
 * download is abandoned.
 */
import { mkdirSync, mkdtempSync, openAsBlob, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../../services/api/src/admin-backup.js';
import { buildApp } from '../../services/api/src/app.js';
import { openDatabase, type DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { migrateToLatest } from '../../services/api/src/storage/migrate.js';
import { ensureBootstrap } from '../../services/api/src/usecases/access/bootstrap.js';
import { restoreBackup } from '../../services/api/src/usecases/access/backup.js';
import { client, testConfig } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { until } from '../helpers/wait.js';
import type { FastifyInstance } from 'fastify';

const KEY = 'vty_backup-streaming-admin-key-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'verity-backup-stream-'));
const dataDir = join(dir, 'live');
let handle: DatabaseHandle;
let app: FastifyInstance;
let url: string;

const staging = () => readdirSync(dataDir).filter((f) => f.startsWith('.verity-backup-'));

describe.skipIf(onPostgres)('the backup of an embedded database in a directory', () => {
  beforeAll(async () => {
    handle = await openDatabase({ dataDir });
    await migrateToLatest(handle);
    await ensureBootstrap(handle.db, { orgName: 'default', apiKey: KEY, now: new Date() });
    app = await buildApp({ config: testConfig(), database: handle, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams a consistent copy with every write acknowledged before it began', async () => {
    const writer = client(app, KEY);
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
    const writers = [load(), load()];
    await until(() => (acknowledged.length >= 20 ? true : undefined), 60_000);

    const file = join(dir, 'verity.tar');
    const began = performance.now();
    try {
      const lines = await backupCommand(['backup', file], { VERITY_URL: url, VERITY_API_KEY: KEY });
      expect(lines).toEqual([`backup written to ${file}`]);
      const during = acknowledged.length;
      await until(() => (acknowledged.length >= during + 5 ? true : undefined), 60_000);
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    const before = acknowledged.filter((w) => w.at < began).map((w) => w.name);
    expect(before.length).toBeGreaterThanOrEqual(20);

    // Nothing of the copy stays in the data directory.
    await until(() => (staging().length === 0 ? true : undefined));

    const restoredDir = join(dir, 'restored');
    const result = await restoreBackup(await openAsBlob(file), restoredDir, { force: false });
    expect(result.organizations).toBe(1);
    // The lock of the server that took the backup is not part of it.
    expect(readdirSync(restoredDir)).not.toContain('.verity.lock');

    const database = await openDatabase({ dataDir: restoredDir });
    const restored = await buildApp({ config: testConfig(), database, logger: false });
    try {
      const reader = client(restored, KEY);
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

  it('removes the copy when the download is abandoned, and the server goes on', async () => {
    // A client that reads the first bytes and then goes away: its connection is closed.
    const first = await new Promise<{ status: number; type: string | undefined; bytes: number }>(
      (resolve, reject) => {
        const req = get(
          `${url}/api/v2/admin/backup`,
          { headers: { authorization: `Bearer ${KEY}` } },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              resolve({
                status: res.statusCode ?? 0,
                type: res.headers['content-type'],
                bytes: chunk.length,
              });
              req.destroy();
            });
          },
        );
        req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
      },
    );
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/x-tar');
    expect(first.bytes).toBeGreaterThan(0);
    await until(() => (staging().length === 0 ? true : undefined));
    const flows = await client(app, KEY).get('/api/v2/flows/default');
    expect(flows.status).toBe(200);
  }, 60_000);

  it('removes a copy a crash left behind when a directory is opened', async () => {
    const other = join(dir, 'other');
    mkdirSync(join(other, '.verity-backup-left'), { recursive: true });
    writeFileSync(join(other, '.verity-backup-left', 'PG_VERSION'), '17');
    const opened = await openDatabase({ dataDir: other });
    try {
      expect(readdirSync(other).filter((f) => f.startsWith('.verity-backup-'))).toEqual([]);
    } finally {
      await opened.close();
    }
  }, 60_000);
});
