/**
 * Moves evidence files between the database and the object store (`npm run admin -- evidence
 * migrate --to s3|database`), in batches, checking each file's digest on the way. Each file is
 * moved on its own: its bytes are written where they go (and checked there), then its row says
 * so; a move that stops (a crash, the store gone) leaves every file in one place or the other, so
 * running it again carries on where it stopped. Files whose bytes do not match their digest are
 * left where they are and reported.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../storage/database.js';
import { evidenceFilesRepository, type EvidencePlace } from '../../storage/repositories/evidence-files.js';
import type { EvidenceBlob } from '../scope/services.js';
import { blobOfBuffer, EvidenceIntegrityError, readAll, type ObjectFallback } from './evidence-store.js';

/** What a move needs of the object store. */
export interface ObjectStorePort {
  /** Stores the bytes; resolves once stored with their digest checked. */
  putObject(orgId: string, file: EvidenceBlob, now: Date): Promise<void>;
  /** The bytes, checked against the digest as they stream; undefined when missing. */
  getObject: ObjectFallback;
}

export interface MoveProgress {
  /** Files moved so far. */
  moved: number;
  /** Bytes moved so far. */
  bytes: number;
  /** Files left where they were, with why. */
  failed: Array<{ orgId: string; sha256: string; reason: string }>;
  /** Files still to move (of the organization, when one is named) after this batch. */
  remaining: number;
}

export interface MoveOptions {
  to: EvidencePlace;
  objects: ObjectStorePort;
  /** Only this organization's files. */
  orgId: string | null;
  /** Files read per batch. */
  batch: number;
  now: () => Date;
  /** Called after each batch. */
  onBatch?: (progress: MoveProgress) => void | Promise<void>;
}

/** Moves every file (of one organization) not yet in `to`; returns what it did. */
export async function moveEvidence(db: Db, opts: MoveOptions): Promise<MoveProgress> {
  const progress: MoveProgress = { moved: 0, bytes: 0, failed: [], remaining: 0 };
  let after: { org_id: string; sha256: string } | null = null;
  for (;;) {
    const keys = await evidenceFilesRepository.toMove(db, opts.to, {
      orgId: opts.orgId,
      after,
      limit: opts.batch,
    });
    for (const key of keys) {
      const problem =
        opts.to === 's3' ? await moveToObjects(db, key, opts) : await moveToDatabase(db, key, opts.objects);
      if (problem === null) {
        progress.moved += 1;
        progress.bytes += key.size;
      } else if (problem !== 'gone') {
        progress.failed.push({ orgId: key.org_id, sha256: key.sha256, reason: problem });
      }
    }
    const counts = await evidenceFilesRepository.countByPlace(db, opts.orgId);
    progress.remaining = counts[opts.to === 's3' ? 'database' : 's3'] - progress.failed.length;
    await opts.onBatch?.(progress);
    if (keys.length < opts.batch) {
      return progress;
    }
    const last = keys[keys.length - 1]!;
    after = { org_id: last.org_id, sha256: last.sha256 };
  }
}

type Key = { org_id: string; sha256: string; size: number };

/** One file into the object store; null when moved, `gone` when its row went meanwhile, else why not. */
async function moveToObjects(db: Db, key: Key, opts: MoveOptions): Promise<string | null> {
  const row = await evidenceFilesRepository.get(db, key.org_id, key.sha256);
  if (!row || row.content === null) {
    return 'gone';
  }
  const actual = createHash('sha256').update(row.content).digest('hex');
  if (actual !== key.sha256 || row.content.length !== key.size) {
    return `its bytes in the database sum to ${actual} (${row.content.length} bytes), not its digest`;
  }
  await opts.objects.putObject(key.org_id, blobOfBuffer(row.content, key.sha256), opts.now());
  await evidenceFilesRepository.setContent(db, key.org_id, key.sha256, null);
  return null;
}

/** One file back into the database; null when moved, `gone` when its row went meanwhile, else why not. */
async function moveToDatabase(db: Db, key: Key, objects: ObjectStorePort): Promise<string | null> {
  const stored = await objects.getObject(key.org_id, key.sha256, key.size);
  if (!stored) {
    return 'it is missing from the object store';
  }
  let content: Buffer;
  try {
    content = await readAll(stored.stream, key.size);
  } catch (err) {
    if (err instanceof EvidenceIntegrityError) {
      return err.message;
    }
    throw err;
  }
  return (await evidenceFilesRepository.setContent(db, key.org_id, key.sha256, content)) ? null : 'gone';
}
