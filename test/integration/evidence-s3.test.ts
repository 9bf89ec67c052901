/**
 * Evidence files in an S3-compatible object store (VERITY_EVIDENCE_STORE=s3), against a real
 * S3 server (s3rver) on a free port: uploads land in the bucket and nowhere in the database,
 * downloads and audit packages are byte for byte those of the database store, `evidence migrate`
 * moves files both ways (and carries on after being stopped), the store being down is a 503 that
 * records nothing, a changed object is never served whole, and collection deletes objects.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evidenceCommand } from '../../services/api/src/admin-evidence.js';
import { buildApp } from '../../services/api/src/app.js';
import { ConfigError, loadConfig } from '../../services/api/src/config.js';
import {
  blobOfBuffer,
  collectOrphanedEvidence,
} from '../../services/api/src/usecases/evidence/evidence-store.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const BUCKET = 'verity-evidence';
const PREFIX = 'evidence';
let dir: string;
/** The API's temporary directory: uploads are spooled here, and removed when answered. */
let spoolDir: string;
let server: S3rver;
let port = 0;
let env: Record<string, string>;
let t: TestApp;
/** The API with the object store. */
let s3App: FastifyInstance;
/** The API with the database store, on the same database (it reads files moved to the bucket). */
let dbApp: FastifyInstance;
let key: string;
let orgId: string;
let s3: S3Client;
/** What was uploaded, by sha256. */
const uploaded = new Map<string, Buffer>();

async function startS3(): Promise<void> {
  server = new S3rver({
    port,
    address: '127.0.0.1',
    directory: dir,
    silent: true,
    configureBuckets: [{ name: BUCKET }],
  });
  ({ port } = await server.run());
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const cli = (app: FastifyInstance) => cliClient(app, key);

async function attest(app: FastifyInstance, trail: string, name: string, filename: string, content: Buffer) {
  const r = await cli(app).multipart('POST', `/api/v2/attestations/acme/ci/trail/${trail}/generic`, [
    {
      name: 'data_json',
      value: JSON.stringify({ is_compliant: true, attestation_name: name, user_data: {} }),
    },
    { name: 'attachment_file', filename, content },
  ]);
  if (r.status === 201) {
    uploaded.set(sha(content), content);
  }
  return r;
}

/** The bytes served for an attestation's file (the response as the client got it). */
async function download(app: FastifyInstance, trail: string, name: string) {
  const [latest] = (await cli(app).get(`/api/v2/attestations/acme/ci/trail/${trail}/${name}`)).json;
  return app.inject({
    url: new URL(latest.evidence_file.download_url).pathname,
    headers: { authorization: `Bearer ${key}` },
  });
}

const auditPackage = async (app: FastifyInstance, trail: string) =>
  app.inject({
    url: `/api/v2/trails/acme/ci/${trail}/audit_package`,
    headers: { authorization: `Bearer ${key}` },
  });

/** Files by where their bytes are, and the bytes the database holds. */
async function places() {
  const { rows } = await sql<{ in_db: string; in_s3: string; bytes: string }>`
    select count(*) filter (where content is not null) as in_db, count(*) filter (where content is null) as in_s3,
      coalesce(sum(octet_length(content)), 0) as bytes from evidence_files`.execute(t.db.db);
  return { database: Number(rows[0]!.in_db), s3: Number(rows[0]!.in_s3), bytes: Number(rows[0]!.bytes) };
}

const objectKey = (sha256: string) => `${PREFIX}/${orgId}/sha256/${sha256}`;
const objectFile = (sha256: string) =>
  path.join(dir, BUCKET, PREFIX, orgId, 'sha256', `${sha256}._S3rver_object`);

async function objectBytes(sha256: string): Promise<Buffer | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: objectKey(sha256) }));
    return Buffer.from(await out.Body!.transformToByteArray());
  } catch (err) {
    if ((err as Error).name === 'NoSuchKey') {
      return undefined;
    }
    throw err;
  }
}

const migrate = async (args: string[], onBatch?: () => Promise<void>) => {
  const lines: string[] = [];
  const code = await evidenceCommand(
    ['evidence', 'migrate', ...args],
    testConfig(env),
    t.db.db,
    (line) => lines.push(line),
    onBatch ? { onBatch } : {},
  );
  return { code, lines };
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verity-s3rver-'));
  spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verity-spool-'));
  process.env.TMPDIR = spoolDir;
  await startS3();
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  env = {
    VERITY_EVIDENCE_STORE: 's3',
    VERITY_S3_BUCKET: BUCKET,
    VERITY_S3_PREFIX: `${PREFIX}/`,
    VERITY_S3_ENDPOINT: `http://127.0.0.1:${port}`,
    VERITY_S3_REGION: 'us-east-1',
    VERITY_S3_FORCE_PATH_STYLE: 'true',
    VERITY_EVIDENCE_MAX_BYTES: String(4 * 1024 * 1024),
  };
  t = await createTestApp({ env });
  s3App = t.app;
  dbApp = await buildApp({
    config: testConfig({ ...env, VERITY_EVIDENCE_STORE: 'database' }),
    database: t.db,
    clock: t.clock.now,
    logger: false,
  });
  await dbApp.ready();
  key = await t.seedKey('acme', 'admin');
  orgId = (await sql<{ id: string }>`select id from orgs where name = 'acme'`.execute(t.db.db)).rows[0]!.id;
  s3 = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await cli(s3App).json('PUT', '/api/v2/flows/acme', { name: 'ci', description: '' });
  for (const trail of ['up', 'pkg', 'down', 'bad']) {
    await cli(s3App).json('PUT', '/api/v2/trails/acme/ci', { name: trail });
  }
});

afterAll(async () => {
  await dbApp?.close();
  await t?.close();
  s3?.destroy();
  await server?.close().catch(() => {});
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(spoolDir, { recursive: true, force: true });
});

/** Uploads spooled and not yet removed. */
const spooled = () => fs.readdirSync(spoolDir);

describe('evidence files in an S3-compatible object store', () => {
  it('keeps each file in the bucket and none of its bytes in the database, and serves it byte for byte', async () => {
    const binary = Buffer.concat([randomBytes(300_000), Buffer.from([0, 0xff, 0x1f, 0x8b])]);
    const xml = Buffer.from(
      '<testsuites><testsuite name="a" tests="1" failures="0" errors="0"/></testsuites>',
    );
    expect((await attest(s3App, 'up', 'blob', 'build.bin', binary)).status).toBe(201);
    expect((await attest(s3App, 'up', 'junit', 'report.xml', xml)).status).toBe(201);

    const got = await download(s3App, 'up', 'blob');
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(binary)).toBe(true);
    expect(got.headers['content-length']).toBe(String(binary.length));
    expect(got.headers['x-content-sha256']).toBe(sha(binary));
    const report = await download(s3App, 'up', 'junit');
    expect(report.headers['content-type']).toBe('application/xml');
    expect(report.body).toBe(xml.toString());

    expect(await places()).toEqual({ database: 0, s3: 2, bytes: 0 });
    expect((await objectBytes(sha(binary)))?.equals(binary)).toBe(true);
    // A file over a MiB goes through a temporary file, removed once answered.
    const large = randomBytes(2 * 1024 * 1024 + 3);
    expect((await attest(s3App, 'up', 'large', 'large.bin', large)).status).toBe(201);
    expect((await download(s3App, 'up', 'large')).rawPayload.equals(large)).toBe(true);
    expect(spooled()).toEqual([]);
    // The database store reads a file kept in the bucket too.
    expect((await download(dbApp, 'up', 'blob')).rawPayload.equals(binary)).toBe(true);
  });

  it('answers 413 for a file over the evidence limit, and stores nothing', async () => {
    const r = await attest(s3App, 'up', 'huge', 'huge.bin', Buffer.alloc(4 * 1024 * 1024 + 1, 1));
    expect(r.status).toBe(413);
    expect(r.json.message).toContain('larger than the limit');
    expect((await places()).s3).toBe(3);
    expect(spooled()).toEqual([]);
  });

  it('gives audit packages byte-identical to the database store’s, and migrates files there and back', async () => {
    const files = [randomBytes(70_000), Buffer.from('{"plain":"json"}\n'), randomBytes(5)];
    for (const [i, content] of files.entries()) {
      expect((await attest(dbApp, 'pkg', `e${i}`, `f${i}.bin`, content)).status).toBe(201);
    }
    expect(await places()).toMatchObject({ database: 3, s3: 3 });
    // Every record in the log first, so each package carries the same checkpoint and proofs.
    await t.app.transparencyLog.sequence();
    const fromDatabase = await auditPackage(dbApp, 'pkg');
    expect(fromDatabase.statusCode).toBe(200);

    const toS3 = await migrate(['--to', 's3', '--batch', '2']);
    expect(toS3.code).toBe(0);
    expect(toS3.lines.at(-1)).toMatch(/^done in .* s: 3 moved, 0 not moved$/);
    expect(await places()).toEqual({ database: 0, s3: 6, bytes: 0 });
    for (const content of files) {
      expect((await objectBytes(sha(content)))?.equals(content)).toBe(true);
    }
    const fromS3 = await auditPackage(s3App, 'pkg');
    expect(fromS3.statusCode).toBe(200);
    expect(fromS3.rawPayload.equals(fromDatabase.rawPayload)).toBe(true);

    const back = await migrate(['--to', 'database', '--org', 'acme']);
    expect(back.code).toBe(0);
    expect(back.lines.at(-1)).toMatch(/: 6 moved, 0 not moved$/);
    expect(await places()).toMatchObject({ database: 6, s3: 0 });
    const { rows } = await sql<{
      sha256: string;
      content: Buffer;
    }>`select sha256, content from evidence_files`.execute(t.db.db);
    for (const row of rows) {
      expect(sha(Buffer.from(row.content))).toBe(row.sha256);
    }
    expect((await auditPackage(dbApp, 'pkg')).rawPayload.equals(fromDatabase.rawPayload)).toBe(true);
  });

  it('refuses a migrate without a bucket, an unknown organization, or a bad batch', async () => {
    const refused = (args: string[], config = testConfig(env)) =>
      evidenceCommand(['evidence', 'migrate', ...args], config, t.db.db, () => {});
    await expect(refused(['--to', 's3'], testConfig())).rejects.toThrow('set VERITY_S3_BUCKET');
    await expect(refused(['--to', 'tape'])).rejects.toThrow('--to must be s3 or database');
    await expect(refused(['--to', 's3', '--org', 'nobody'])).rejects.toThrow(
      "organization 'nobody' does not exist",
    );
    await expect(refused(['--to', 's3', '--batch', '0'])).rejects.toThrow('--batch must be');
  });

  it('carries on a migrate stopped half-way (the store gone) when run again', async () => {
    expect(await places()).toMatchObject({ database: 6, s3: 0 });
    let batches = 0;
    const stopped = migrate(['--to', 's3', '--batch', '2'], async () => {
      batches += 1;
      if (batches === 1) {
        await server.close();
      }
    });
    await expect(stopped).rejects.toThrow('The evidence store is not available');
    // Each file is in one place or the other: the first batch moved, the rest untouched.
    expect(await places()).toMatchObject({ database: 4, s3: 2 });
    await startS3();
    const resumed = await migrate(['--to', 's3', '--batch', '2']);
    expect(resumed.code).toBe(0);
    expect(resumed.lines.at(-1)).toMatch(/: 4 moved, 0 not moved$/);
    expect(await places()).toEqual({ database: 0, s3: 6, bytes: 0 });
    for (const [sha256, content] of uploaded) {
      expect((await objectBytes(sha256))?.equals(content), sha256).toBe(true);
    }
  });

  it('answers 503 with Retry-After while the store is down, records nothing, and takes the retry', async () => {
    const content = randomBytes(50_000);
    await server.close();
    try {
      const refused = await attest(s3App, 'down', 'later', 'later.bin', content);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.json.message).toBe('The evidence store is not available; retry the request later');
      expect((await cli(s3App).get('/api/v2/attestations/acme/ci/trail/down/later')).json).toEqual([]);
      const unreadable = await download(s3App, 'up', 'blob');
      expect(unreadable.statusCode).toBe(503);
      expect(spooled()).toEqual([]);
    } finally {
      await startS3();
    }
    expect((await attest(s3App, 'down', 'later', 'later.bin', content)).status).toBe(201);
    const attestations = (await cli(s3App).get('/api/v2/attestations/acme/ci/trail/down/later')).json;
    expect(attestations).toHaveLength(1);
    expect((await download(s3App, 'down', 'later')).rawPayload.equals(content)).toBe(true);
  });

  it('never serves a changed object whole: the download and the audit package break off', async () => {
    const content = randomBytes(200_000);
    expect((await attest(s3App, 'bad', 'changed', 'changed.bin', content)).status).toBe(201);
    const changed = Buffer.from(content);
    changed[1000] = changed[1000]! ^ 0xff;
    fs.writeFileSync(objectFile(sha(content)), changed);
    // The response breaks off before its last chunk: the client never holds the changed file whole.
    await expect(download(s3App, 'bad', 'changed')).rejects.toThrow('response destroyed before completion');
    await expect(auditPackage(s3App, 'bad')).rejects.toThrow('response destroyed before completion');
    // A file of another size is caught the same way.
    fs.writeFileSync(objectFile(sha(content)), Buffer.concat([content, Buffer.from('x')]));
    await expect(download(s3App, 'bad', 'changed')).rejects.toThrow('response destroyed before completion');
    // Put back, it is served again.
    fs.writeFileSync(objectFile(sha(content)), content);
    expect((await download(s3App, 'bad', 'changed')).rawPayload.equals(content)).toBe(true);
  });

  it('never serves whole a file changed in the database either', async () => {
    const content = randomBytes(10_000);
    expect((await attest(dbApp, 'bad', 'in-db', 'in-db.bin', content)).status).toBe(201);
    const changed = Buffer.concat([content.subarray(1), Buffer.from('!')]);
    await sql`update evidence_files set content = ${changed} where sha256 = ${sha(content)}`.execute(t.db.db);
    const r = await download(dbApp, 'bad', 'in-db');
    expect(r.statusCode).toBe(500);
    expect(JSON.parse(r.body).message).toBe(
      `Evidence file ${sha(content)} does not match its digest (its bytes sum to ${sha(changed)}); it is not served`,
    );
    // The audit package holding it breaks off rather than ship it.
    await expect(auditPackage(dbApp, 'bad')).rejects.toThrow('response destroyed before completion');
  });

  it('deletes the object of a file no attestation names when collecting it', async () => {
    const orphan = randomBytes(1_000);
    const stored = new Date(t.clock.now().getTime() - 2 * 3_600_000);
    await s3App.services.store.put(t.db.db, orgId, blobOfBuffer(orphan), stored);
    expect((await objectBytes(sha(orphan)))?.equals(orphan)).toBe(true);
    expect(await collectOrphanedEvidence(t.db.db, s3App.services.store, t.clock.now())).toBe(1);
    expect(await objectBytes(sha(orphan))).toBeUndefined();
    const row = await sql`select 1 from evidence_files where sha256 = ${sha(orphan)}`.execute(t.db.db);
    expect(row.rows).toHaveLength(0);
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: objectKey(sha(orphan)) })),
    ).rejects.toMatchObject({ name: 'NotFound' });
  });
});

describe('object store settings', () => {
  it('refuses s3 without a bucket, and a KMS key without SSE-KMS, naming the variable', () => {
    expect(() => loadConfig({ VERITY_EVIDENCE_STORE: 's3' })).toThrow(ConfigError);
    expect(() => loadConfig({ VERITY_EVIDENCE_STORE: 's3' })).toThrow(/VERITY_S3_BUCKET: is required when/);
    expect(() => loadConfig({ VERITY_S3_BUCKET: 'b', VERITY_EVIDENCE_STORE: 's3' })).toThrow(/bucket name/);
    expect(() => loadConfig({ VERITY_S3_BUCKET: 'bucket', VERITY_S3_KMS_KEY_ID: 'k' })).toThrow(
      /VERITY_S3_KMS_KEY_ID: needs VERITY_S3_SSE=aws:kms/,
    );
    expect(() => loadConfig({ VERITY_EVIDENCE_STORE: 'tape' })).toThrow(/VERITY_EVIDENCE_STORE/);
    const config = loadConfig({
      VERITY_EVIDENCE_STORE: 's3',
      VERITY_S3_BUCKET: 'bucket',
      VERITY_S3_PREFIX: 'a/b/',
    });
    expect(config.s3).toMatchObject({ bucket: 'bucket', prefix: 'a/b/', sse: 'AES256', objectLock: 'off' });
  });
});
