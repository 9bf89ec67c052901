/**
 * Evidence files in an S3-compatible object store (`VERITY_EVIDENCE_STORE=s3`). Each file is one
 * object, content-addressed under its organization: `<prefix><org id>/sha256/<hex>`. The org id
 * (not its name, which may change) keeps tenants apart, so a bucket policy or a lifecycle rule
 * can be written per organization, and identical files of two organizations stay two objects that
 * each organization's collection and retention remove on its own. The row in `evidence_files`
 * (digest, size, when stored) stays in the database, without the bytes.
 *
 * An upload records the row first (young, so the collector leaves it), then sends the object with
 * its SHA-256 (`x-amz-checksum-sha256`: the store refuses bytes that do not match) while summing
 * what it sends again; it resolves only when both agree. A download streams the object through
 * `verifiedStream`. The collector deletes rows and their objects in one transaction: an upload of
 * the same file meanwhile waits on the deleted rows' locks and sends its object after.
 */
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import type { FastifyBaseLogger } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import type { Db } from '../storage/database.js';
import { evidenceFilesRepository } from '../storage/repositories/evidence-files.js';
import { storedInMemory, verifiedStream, type ObjectFallback } from '../usecases/evidence/evidence-store.js';
import type { EvidenceBlob, EvidenceStore, StoredEvidence } from '../usecases/scope/services.js';

export interface S3Settings {
  bucket: string;
  /** Prepended to every key; empty, or ending in `/`. */
  prefix: string;
  /** For S3-compatible servers (MinIO, Ceph, R2...); unset: AWS S3 of the region. */
  endpoint: string | undefined;
  /** Unset: the SDK's own (AWS_REGION), else us-east-1. */
  region: string | undefined;
  forcePathStyle: boolean;
  /** Server-side encryption asked for each object: SSE-S3 (`AES256`), SSE-KMS, or none. */
  sse: 'AES256' | 'aws:kms' | 'none';
  /** The KMS key of SSE-KMS; unset: the bucket's or the account's default key. */
  kmsKeyId: string | undefined;
  /** Object Lock mode set on objects that have a retain-until date; `off` sets none. */
  objectLock: 'off' | 'GOVERNANCE' | 'COMPLIANCE';
}

/**
 * Until when an organization's new evidence file must be kept (S3 Object Lock retain-until), or
 * null for no lock.
 */
export type RetainUntil = (orgId: string, sha256: string, now: Date) => Promise<Date | null>;
export const noRetention: RetainUntil = async () => null;

/**
 * The lock no retention class can undercut: the server operator's minimum for evidence files
 * (`VERITY_RETENTION_MIN_EVIDENCE_FILES_DAYS`). A tenant's class may keep a file longer, never
 * shorter, so retention never meets an object still locked; without a minimum, no lock.
 */
export function operatorMinimumLock(minimumDays: number): RetainUntil {
  return async (_orgId, _sha256, now) =>
    minimumDays > 0 ? new Date(now.getTime() + minimumDays * 86_400_000) : null;
}

/** The message of every 503 an unreachable or refusing object store gives. */
const UNAVAILABLE = 'The evidence store is not available; retry the request later';

/** An S3 client with bounded connects and stalls, and the SDK's usual credential chain. */
export function s3Client(settings: S3Settings, log?: FastifyBaseLogger): S3Client {
  // The SDK's own notes (a failed streaming request, say) go to the debug log, not the console:
  // every failure is logged once, with what failed, by the store.
  const note = (...args: unknown[]) => log?.debug({ sdk: args.map(String).join(' ') }, 'S3 client');
  return new S3Client({
    logger: { trace: () => {}, debug: () => {}, info: () => {}, warn: note, error: note },
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    region: settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: settings.forcePathStyle,
    // The SHA-256 is sent explicitly; the SDK's own CRC32 trailers are not understood by every
    // S3-compatible server.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
}

const isMissing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

export class S3EvidenceStore implements EvidenceStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;

  constructor(
    readonly settings: S3Settings,
    private readonly log: FastifyBaseLogger,
    private readonly retainUntil: RetainUntil = noRetention,
    client?: S3Client,
  ) {
    this.client = client ?? s3Client(settings, log);
  }

  /** The object key of a file. */
  key(orgId: string, sha256: string): string {
    return `${this.settings.prefix}${orgId}/sha256/${sha256}`;
  }

  async put(db: Db, orgId: string, file: EvidenceBlob, now: Date): Promise<void> {
    await evidenceFilesRepository.put(db, orgId, {
      sha256: file.sha256,
      size: file.size,
      content: null,
      now,
    });
    if (await this.exists(orgId, file.sha256, file.size)) {
      return;
    }
    await this.putObject(orgId, file, now);
  }

  /** Whether the object is there with this size (a file stored before needs no second upload). */
  async exists(orgId: string, sha256: string, size: number): Promise<boolean> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(orgId, sha256) }),
      );
      return head.ContentLength === size;
    } catch (err) {
      if (isMissing(err)) {
        return false;
      }
      throw this.unavailable(err, 'head');
    }
  }

  /** Sends the bytes; resolves once the store has them and they summed to the file's digest. */
  async putObject(orgId: string, file: EvidenceBlob, now: Date): Promise<void> {
    const { settings } = this;
    const sent = createHash('sha256');
    const body = new PassThrough();
    const source = file.open();
    source.on('error', (err) => body.destroy(err));
    source.on('data', (chunk: Buffer) => sent.update(chunk));
    source.pipe(body);
    const until = settings.objectLock === 'off' ? null : await this.retainUntil(orgId, file.sha256, now);
    const input: PutObjectCommandInput = {
      Bucket: settings.bucket,
      Key: this.key(orgId, file.sha256),
      Body: body,
      ContentLength: file.size,
      ContentType: 'application/octet-stream',
      ChecksumSHA256: Buffer.from(file.sha256, 'hex').toString('base64'),
      ...(settings.sse === 'none' ? {} : { ServerSideEncryption: settings.sse }),
      ...(settings.sse === 'aws:kms' && settings.kmsKeyId ? { SSEKMSKeyId: settings.kmsKeyId } : {}),
      ...(until && settings.objectLock !== 'off'
        ? { ObjectLockMode: settings.objectLock, ObjectLockRetainUntilDate: until }
        : {}),
    };
    try {
      await this.client.send(new PutObjectCommand(input));
    } catch (err) {
      source.destroy();
      throw this.unavailable(err, 'put');
    }
    const digest = sent.digest('hex');
    if (digest !== file.sha256) {
      // The bytes changed under the upload (the temporary file): not acknowledged.
      this.log.error({ sha256: file.sha256, sent: digest }, 'evidence file changed while it was sent');
      throw new ServiceUnavailableError(UNAVAILABLE);
    }
  }

  async get(db: Db, orgId: string, sha256: string): Promise<StoredEvidence | undefined> {
    const row = await evidenceFilesRepository.get(db, orgId, sha256);
    if (!row) {
      return undefined;
    }
    if (row.content !== null) {
      // Not moved yet (`evidence migrate --to s3`): still served from the database.
      return storedInMemory(row.content, sha256);
    }
    return this.getObject(orgId, sha256, row.size);
  }

  /** The object's bytes, checked against the digest as they stream; undefined when it is missing. */
  getObject: ObjectFallback = async (orgId, sha256, size) => {
    let body: Readable;
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(orgId, sha256) }),
      );
      body = out.Body as Readable;
    } catch (err) {
      if (isMissing(err)) {
        this.log.error({ orgId, sha256 }, 'evidence file missing from the object store');
        return undefined;
      }
      throw this.unavailable(err, 'get');
    }
    const stream = verifiedStream(body, { sha256, size }, (err) =>
      this.log.error(
        { orgId, sha256, detail: err.detail },
        'evidence file in the object store does not match its digest',
      ),
    );
    return { size, stream };
  };

  stat(db: Db, orgId: string, sha256: string): Promise<{ size: number } | undefined> {
    return evidenceFilesRepository.stat(db, orgId, sha256);
  }

  /** Deletes orphaned rows and their objects together: a failed delete keeps the rows for the next pass. */
  async collect(db: Db, span: { since: Date | null; before: Date }, limit: number): Promise<number> {
    return db.transaction().execute(async (trx: Db) => {
      const gone = await evidenceFilesRepository.deleteOrphans(trx, span, limit);
      await this.deleteObjects(gone.filter((g) => g.place === 's3'));
      return gone.length;
    });
  }

  /**
   * Deletes these files' rows stored before `storedBefore`, and their objects (retention): a
   * failed delete throws, so the caller's transaction keeps the rows for the next pass.
   */
  async remove(db: Db, orgId: string, sha256s: readonly string[], storedBefore: Date): Promise<string[]> {
    const gone = await evidenceFilesRepository.remove(db, orgId, sha256s, storedBefore);
    await this.deleteObjects(
      gone.filter((g) => g.place === 's3').map((g) => ({ org_id: orgId, sha256: g.sha256 })),
    );
    return gone.map((g) => g.sha256).sort();
  }

  /** Deletes objects, a thousand a request; throws when any could not be deleted. */
  async deleteObjects(files: ReadonlyArray<{ org_id: string; sha256: string }>): Promise<void> {
    for (let i = 0; i < files.length; i += 1000) {
      const slice = files.slice(i, i + 1000);
      let errors: unknown[] | undefined;
      try {
        const out = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.settings.bucket,
            Delete: { Objects: slice.map((f) => ({ Key: this.key(f.org_id, f.sha256) })), Quiet: true },
          }),
        );
        errors = out.Errors;
      } catch (err) {
        throw this.unavailable(err, 'delete');
      }
      if (errors && errors.length > 0) {
        this.log.error(
          { errors: errors.slice(0, 5) },
          'evidence files could not be deleted from the object store',
        );
        throw new ServiceUnavailableError(UNAVAILABLE);
      }
    }
  }

  /** Whether the bucket answers: logged at start, so a wrong setting shows before the first upload. */
  async probe(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (err) {
      this.log.warn(
        { bucket: this.settings.bucket, error: describe(err) },
        'the evidence object store does not answer; uploads and downloads of evidence files get 503 until it does',
      );
    }
  }

  /** A 503 for an object-store failure, logged with what failed (never the credentials). */
  private unavailable(err: unknown, op: string): ServiceUnavailableError {
    this.log.error(
      { op, bucket: this.settings.bucket, error: describe(err) },
      'evidence object store request failed',
    );
    return new ServiceUnavailableError(UNAVAILABLE);
  }

  close(): void {
    this.client.destroy();
  }
}

function describe(err: unknown): string {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const status = e.$metadata?.httpStatusCode;
  return [e.name, e.code, status ? `HTTP ${status}` : undefined, e.message].filter(Boolean).join(': ');
}
