/**
 * Evidence files behind one small interface, addressed by sha256 (ARCHITECTURE.md: in the
 * database by default, or in an S3-compatible object store: storage/s3-evidence-store.ts).
 * Either way a file is read back through `verifiedStream`, so changed bytes are never served whole.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable, Transform, pipeline } from 'node:stream';
import { ApiError } from '../../errors.js';
import type { Db } from '../../storage/database.js';
import { evidenceFilesRepository } from '../../storage/repositories/evidence-files.js';
import type { EvidenceBlob, EvidenceStore, StoredEvidence } from '../scope/services.js';

/**
 * A stored file whose bytes no longer match its size or digest: a 500 when found before the
 * answer started, else the end of a streamed answer before its last chunk.
 */
export class EvidenceIntegrityError extends ApiError {
  constructor(
    readonly sha256: string,
    readonly detail: string,
  ) {
    super(500, `Evidence file ${sha256} does not match its digest (${detail}); it is not served`);
  }
}

/** A file whose bytes are in memory (its database row), checked before anything is served. */
export function storedInMemory(content: Buffer, sha256: string): StoredEvidence {
  const actual = createHash('sha256').update(content).digest('hex');
  if (actual !== sha256) {
    throw new EvidenceIntegrityError(sha256, `its bytes sum to ${actual}`);
  }
  return { size: content.length, stream: Readable.from([content]) };
}

/**
 * The bytes of `source`, checked against `size` and `sha256` as they pass: the last chunk is held
 * back until the check, so a reader of changed bytes gets an error instead of their end.
 */
export function verifiedStream(
  source: Readable,
  expected: { sha256: string; size: number },
  onMismatch?: (err: EvidenceIntegrityError) => void,
): Readable {
  const hash = createHash('sha256');
  let seen = 0;
  let held: Buffer | undefined;
  const fail = (detail: string) => {
    const err = new EvidenceIntegrityError(expected.sha256, detail);
    onMismatch?.(err);
    return err;
  };
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      seen += chunk.length;
      if (seen > expected.size) {
        done(fail(`more than its ${expected.size} bytes`));
        return;
      }
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done) {
      if (seen !== expected.size) {
        done(fail(`${seen} bytes, not ${expected.size}`));
        return;
      }
      const actual = hash.digest('hex');
      if (actual !== expected.sha256) {
        done(fail(`its bytes sum to ${actual}`));
        return;
      }
      done(null, held);
    },
  });
  pipeline(source, check, () => {});
  return check;
}

/** A blob of bytes in memory. */
export function blobOfBuffer(
  data: Buffer,
  sha256 = createHash('sha256').update(data).digest('hex'),
): EvidenceBlob {
  return {
    sha256,
    size: data.length,
    open: () => Readable.from([data]),
    read: async () => data,
  };
}

/** A blob of bytes in a file, summed when it was written. */
export function blobOfFile(path: string, sha256: string, size: number): EvidenceBlob {
  return {
    sha256,
    size,
    open: () => createReadStream(path),
    read: () => readFile(path),
  };
}

/** Reads a stream into memory, refusing more than `max` bytes. */
export async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream) {
    n += (chunk as Buffer).length;
    if (n > max) {
      stream.destroy();
      throw new Error(`more than ${max} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads an object of the object store by its organization, digest and size. */
export type ObjectFallback = (
  orgId: string,
  sha256: string,
  size: number,
) => Promise<StoredEvidence | undefined>;

/**
 * The object store behind the database store: reads and deletes what the database store cannot,
 * rows whose bytes were moved there (a move between stores under way, or the database store
 * configured again before moving back).
 */
export interface ObjectsBehind {
  getObject: ObjectFallback;
  deleteObjects(files: ReadonlyArray<{ org_id: string; sha256: string }>): Promise<void>;
}

/** The default store: a table in the same database. */
export function databaseStore(objects?: ObjectsBehind): EvidenceStore {
  return {
    kind: 'database',
    put: async (db, orgId, file, now) =>
      evidenceFilesRepository.put(db, orgId, {
        sha256: file.sha256,
        size: file.size,
        content: await file.read(),
        now,
      }),
    get: async (db, orgId, sha256) => {
      const row = await evidenceFilesRepository.get(db, orgId, sha256);
      if (!row) {
        return undefined;
      }
      if (row.content === null) {
        return objects ? objects.getObject(orgId, sha256, row.size) : undefined;
      }
      return storedInMemory(row.content, sha256);
    },
    stat: (db, orgId, sha256) => evidenceFilesRepository.stat(db, orgId, sha256),
    collect: async (db: Db, span, limit) => {
      if (!objects) {
        return (await evidenceFilesRepository.deleteOrphans(db, span, limit)).length;
      }
      return db.transaction().execute(async (trx: Db) => {
        const gone = await evidenceFilesRepository.deleteOrphans(trx, span, limit);
        await objects.deleteObjects(gone.filter((g) => g.place === 's3'));
        return gone.length;
      });
    },
    remove: async (db: Db, orgId, sha256s, storedBefore) => {
      const gone = await evidenceFilesRepository.remove(db, orgId, sha256s, storedBefore);
      const elsewhere = gone.filter((g) => g.place === 's3');
      if (elsewhere.length > 0) {
        if (!objects) {
          throw new Error('evidence files kept in the object store, which is not configured');
        }
        await objects.deleteObjects(elsewhere.map((g) => ({ org_id: orgId, sha256: g.sha256 })));
      }
      return gone.map((g) => g.sha256).sort();
    },
  };
}

/** The database store without an object store behind it. */
export const databaseEvidenceStore: EvidenceStore = databaseStore();

/** How old a file no attestation names must be before it is collected. */
export const ORPHAN_AGE_MS = 3_600_000;

/** Files stored this long before a pass's window are looked at again: replicas' clocks differ. */
const CLOCK_MARGIN_MS = 600_000;

/**
 * Collects the evidence files no attestation names, stored more than an hour before `now`, in
 * passes of at most `limit`; returns how many went. With `since`, only files stored since then.
 */
export async function collectOrphanedEvidence(
  db: Db,
  store: EvidenceStore,
  now: Date,
  limit = 1000,
  since: Date | null = null,
): Promise<number> {
  return store.collect(db, { since, before: new Date(now.getTime() - ORPHAN_AGE_MS) }, limit);
}

/**
 * Repeated collector passes that each read only what was stored since the last complete one
 * (less a margin for clock skew), so a pass costs what arrived meanwhile, not the whole store.
 * Attestations are never deleted, so a file once named stays named; a file stored again is young
 * again and falls in a later window. A pass that hit its limit leaves the window where it was.
 */
export class EvidenceCollector {
  private since: Date | null = null;

  constructor(
    private readonly db: Db,
    private readonly store: EvidenceStore,
    private readonly limit = 1000,
  ) {}

  async pass(now: Date): Promise<number> {
    const n = await collectOrphanedEvidence(this.db, this.store, now, this.limit, this.since);
    if (n < this.limit) {
      this.since = new Date(now.getTime() - ORPHAN_AGE_MS - CLOCK_MARGIN_MS);
    }
    return n;
  }
}

const CONTENT_TYPES: Array<[RegExp, string]> = [
  [/\.(tgz|tar\.gz|gz)$/i, 'application/gzip'],
  [/\.tar$/i, 'application/x-tar'],
  [/\.zip$/i, 'application/zip'],
  [/\.xml$/i, 'application/xml'],
  [/\.(sarif|json)$/i, 'application/json'],
  [/\.(ya?ml)$/i, 'application/yaml'],
  [/\.(txt|log|md)$/i, 'text/plain; charset=utf-8'],
  [/\.html?$/i, 'text/html; charset=utf-8'],
  [/\.pdf$/i, 'application/pdf'],
  [/\.png$/i, 'image/png'],
];

/** The content type an evidence file is served with, from its name (the CLI sends octet-stream). */
export function contentTypeFor(filename: string, sent?: string): string {
  for (const [re, type] of CONTENT_TYPES) {
    if (re.test(filename)) {
      return type;
    }
  }
  return sent && sent !== 'application/octet-stream' ? sent : 'application/octet-stream';
}
