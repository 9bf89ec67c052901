/**
 * Generated log signing keys at rest, as whoever reads the database and whoever verifies
 * checkpoints see them: with VERITY_ENCRYPTION_SECRET the `log_keys` row holds no private key in
 * the clear (AES-256-GCM under a key derived with HKDF-SHA256, as the README documents); a key
 * stored in the clear before the secret was set is still used and is sealed at the next start;
 * the API restarted on the same database signs with the same published key. A wrong or missing
 * secret stops the signing, naming the setting, and never replaces the key.
 */
import { createDecipheriv, createPrivateKey, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import { client, createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { openNote, parseCheckpoint } from '../helpers/tlog-client.js';

const SECRET = randomBytes(32).toString('base64');
const ENV = { VERITY_LOG_SEQUENCE_MS: '60000' };

let t: TestApp;
let app: FastifyInstance;

beforeAll(async () => {
  t = await createTestApp({ env: ENV });
  app = t.app;
});
afterAll(async () => {
  await app?.close();
  await t?.db.close();
});

/** Stops the running API and starts another on the same database with `env`; returns what it logged at start. */
async function restart(env: Record<string, string>): Promise<string[]> {
  await app.close();
  const lines: string[] = [];
  app = await buildApp({
    config: testConfig({ ...ENV, ...env }),
    database: t.db,
    clock: t.clock.now,
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
  });
  await app.ready();
  return lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
}

const api = async (org: string) => client(app, await t.seedKey(org, 'admin'));

async function keyRow(org: string): Promise<{ org_id: string; key_id: string; private_key: Buffer }> {
  const rows = await sql<{ org_id: string; key_id: string; private_key: Buffer }>`
    select k.org_id, k.key_id, k.private_key from log_keys k join orgs o on o.id = k.org_id
    where o.name = ${org}`.execute(t.db.db);
  expect(rows.rows).toHaveLength(1);
  const row = rows.rows[0]!;
  return { ...row, private_key: Buffer.from(row.private_key) };
}

const isClearKey = (stored: Buffer): boolean => {
  try {
    return createPrivateKey({ key: stored, format: 'der', type: 'pkcs8' }).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
};

/** Opens a sealed row as the README documents it, as an operator recovering the key would. */
function openAsDocumented(
  row: { org_id: string; key_id: string; private_key: Buffer },
  secret: string,
): Buffer {
  const key = Buffer.from(hkdfSync('sha256', secret, 'verity', 'verity log signing keys v1', 32));
  const s = row.private_key;
  expect(s.subarray(0, 4).toString()).toBe('VSB1');
  const decipher = createDecipheriv('aes-256-gcm', key, s.subarray(4, 16))
    .setAAD(Buffer.from(`log_keys/${row.org_id}/${row.key_id}`))
    .setAuthTag(s.subarray(16, 32));
  return Buffer.concat([decipher.update(s.subarray(32)), decipher.final()]);
}

/** The org's checkpoint now, verified with `verifier`. */
async function checkpointBy(org: string, verifier: string) {
  const note = await (await api(org)).get(`/api/v2/log/${org}/checkpoint`);
  return parseCheckpoint(openNote(note.body, verifier));
}

const published = async (org: string) => (await (await api(org)).get(`/api/v2/log/${org}/key`)).body;

async function writeAndSequence(org: string, env: string): Promise<void> {
  const put = await (
    await api(org)
  ).put(`/api/v2/environments/${org}`, { name: env, type: 'K8S', description: '' });
  expect(put.status).toBe(201);
  await app.transparencyLog.sequence();
}

describe('generated log signing keys at rest', () => {
  let clearDer: Buffer;
  let acmeKeys: string;
  let betaKeys: string;

  it('keeps a key stored in the clear before the secret was set, and seals it at the next start', async () => {
    await writeAndSequence('acme', 'prod');
    const before = await keyRow('acme');
    expect(isClearKey(before.private_key)).toBe(true);
    clearDer = before.private_key;
    acmeKeys = await published('acme');
    const first = await checkpointBy('acme', acmeKeys.split('\n')[0]!);

    expect(await restart({})).toContain(
      'transparency log: generated signing keys are stored in the database unencrypted; set VERITY_ENCRYPTION_SECRET to seal them',
    );
    expect(isClearKey((await keyRow('acme')).private_key)).toBe(true);
    expect(await restart({ VERITY_ENCRYPTION_SECRET: SECRET })).toContain(
      'transparency log: sealed 1 signing keys stored in the clear',
    );
    const after = await keyRow('acme');
    expect(after.key_id).toBe(before.key_id);
    expect(isClearKey(after.private_key)).toBe(false);
    expect(after.private_key.includes(clearDer.subarray(-32))).toBe(false);
    expect(openAsDocumented(after, SECRET)).toEqual(clearDer);

    await writeAndSequence('acme', 'staging');
    const next = await checkpointBy('acme', acmeKeys.split('\n')[0]!);
    expect(next.size).toBeGreaterThan(first.size);
    expect(await published('acme')).toBe(acmeKeys);
  });

  it('stores a key generated with the secret sealed, and signs with it after a restart', async () => {
    await writeAndSequence('beta', 'prod');
    const row = await keyRow('beta');
    expect(isClearKey(row.private_key)).toBe(false);
    const der = openAsDocumented(row, SECRET);
    expect(isClearKey(der)).toBe(true);
    expect(row.private_key.includes(der.subarray(-32))).toBe(false);
    betaKeys = await published('beta');
    const first = await checkpointBy('beta', betaKeys.split('\n')[0]!);

    const logged = await restart({ VERITY_ENCRYPTION_SECRET: SECRET });
    expect(logged.filter((m) => m.startsWith('transparency log:'))).toEqual([]);
    await writeAndSequence('beta', 'staging');
    const next = await checkpointBy('beta', betaKeys.split('\n')[0]!);
    expect(next.size).toBeGreaterThan(first.size);
    expect(await published('beta')).toBe(betaKeys);
    expect((await keyRow('beta')).private_key).toEqual(row.private_key);
  });

  it('stops signing, naming the setting, under another secret or none, and keeps the key', async () => {
    const before = await checkpointBy('beta', betaKeys.split('\n')[0]!);
    await restart({ VERITY_ENCRYPTION_SECRET: randomBytes(32).toString('base64') });
    const put = await (
      await api('beta')
    ).put('/api/v2/environments/beta', { name: 'dev', type: 'K8S', description: '' });
    expect(put.status).toBe(201);
    await expect(app.transparencyLog.sequence()).rejects.toThrow(
      /VERITY_ENCRYPTION_SECRET does not open the stored log signing key/,
    );
    await restart({});
    await expect(app.transparencyLog.sequence()).rejects.toThrow(
      /stored encrypted and VERITY_ENCRYPTION_SECRET is not set/,
    );
    expect((await checkpointBy('beta', betaKeys.split('\n')[0]!)).size).toBe(before.size);
    expect(await published('beta')).toBe(betaKeys);
    expect(await published('acme')).toBe(acmeKeys);

    await restart({ VERITY_ENCRYPTION_SECRET: SECRET });
    await app.transparencyLog.sequence();
    expect((await checkpointBy('beta', betaKeys.split('\n')[0]!)).size).toBe(before.size + 1);
  });
});
