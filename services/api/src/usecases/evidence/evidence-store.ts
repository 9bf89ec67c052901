/**
 * Evidence files behind one small interface, addressed by sha256 (ARCHITECTURE.md: in the
 * database by default; an object store can implement the same three calls).
 */
import type { Db } from '../../storage/database.js';
import { evidenceFilesRepository } from '../../storage/repositories/evidence-files.js';
import type { EvidenceStore } from '../scope/services.js';

/** The default store: a table in the same database. */
export const databaseEvidenceStore: EvidenceStore = {
  put: (db, orgId, file, now) => evidenceFilesRepository.put(db, orgId, { ...file, now }),
  get: async (db, orgId, sha256) => (await evidenceFilesRepository.get(db, orgId, sha256))?.content,
  stat: (db, orgId, sha256) => evidenceFilesRepository.stat(db, orgId, sha256),
  collect: (db, span, limit) => evidenceFilesRepository.deleteOrphans(db, span, limit),
  remove: (db, orgId, sha256s, storedBefore) =>
    evidenceFilesRepository.remove(db, orgId, sha256s, storedBefore),
};

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
