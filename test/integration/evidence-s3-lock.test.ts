/**
 * What each object asks of the store: server-side encryption, and, on an Object Lock bucket, a
 * retain-until date no retention class can undercut (the operator's minimum for evidence files).
 * The requests are read off the wire by the SDK's own middleware stack, sent to a real
 * S3-compatible server (s3rver keeps the object; it does not enforce either header).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredEvidenceStore } from '../../services/api/src/object-store/configured-store.js';
import type { S3EvidenceStore, S3Settings } from '../../services/api/src/object-store/s3-evidence-store.js';
import { blobOfBuffer } from '../../services/api/src/usecases/evidence/evidence-store.js';

const BUCKET = 'verity-locked';
const DAY = 86_400_000;
let server: S3rver;
let dir: string;
let endpoint: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verity-s3-lock-'));
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory: dir,
    silent: true,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
});

afterAll(async () => {
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The configured store, with the headers of each PutObject it sends recorded. */
function storeWith(settings: Partial<S3Settings>, minimumEvidenceDays: number) {
  const s3: S3Settings = {
    bucket: BUCKET,
    prefix: 'lock',
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    sse: 'AES256',
    kmsKeyId: undefined,
    objectLock: 'off',
    ...settings,
  };
  const { store } = configuredEvidenceStore(
    {
      s3,
      evidenceStore: 's3',
      retentionMinimumDays: {
        trails_days: 0,
        evidence_files_days: minimumEvidenceDays,
        snapshots_days: 0,
        audit_log_days: 0,
      },
    },
    pino({ level: 'silent' }),
  );
  const sent: Array<Record<string, string>> = [];
  const client = (store as S3EvidenceStore).client;
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { method?: string; headers?: Record<string, string> };
      if (request.method === 'PUT' && request.headers) {
        sent.push({ ...request.headers });
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: 'recordPutHeaders' },
  );
  return { store: store as S3EvidenceStore, sent };
}

const file = (text: string) => blobOfBuffer(Buffer.from(text));
const now = new Date('2026-11-27T00:00:00Z');

describe('objects in the store', () => {
  it('ask for SSE-S3 by default and carry their digest', async () => {
    const { store, sent } = storeWith({}, 0);
    await store.putObject('org-a', file('plain'), now);
    expect(sent).toHaveLength(1);
    expect(sent[0]!['x-amz-server-side-encryption']).toBe('AES256');
    expect(sent[0]!['x-amz-checksum-sha256']).toBe(createHash('sha256').update('plain').digest('base64'));
    expect(sent[0]!['x-amz-object-lock-mode']).toBeUndefined();
  });

  it('ask for SSE-KMS with the key named', async () => {
    const { store, sent } = storeWith({ sse: 'aws:kms', kmsKeyId: 'alias/verity' }, 0);
    await store.putObject('org-a', file('kms'), now);
    expect(sent[0]!['x-amz-server-side-encryption']).toBe('aws:kms');
    expect(sent[0]!['x-amz-server-side-encryption-aws-kms-key-id']).toBe('alias/verity');
  });

  it('are locked until the operator minimum for evidence files, in the mode set', async () => {
    const { store, sent } = storeWith({ objectLock: 'COMPLIANCE' }, 180);
    await store.putObject('org-a', file('locked'), now);
    expect(sent[0]!['x-amz-object-lock-mode']).toBe('COMPLIANCE');
    expect(new Date(sent[0]!['x-amz-object-lock-retain-until-date']!).getTime()).toBe(
      now.getTime() + 180 * DAY,
    );
  });

  it('are not locked without an operator minimum: a tenant class may remove them any day', async () => {
    const { store, sent } = storeWith({ objectLock: 'GOVERNANCE' }, 0);
    await store.putObject('org-a', file('unlocked'), now);
    expect(sent[0]!['x-amz-object-lock-mode']).toBeUndefined();
    expect(sent[0]!['x-amz-object-lock-retain-until-date']).toBeUndefined();
  });
});
