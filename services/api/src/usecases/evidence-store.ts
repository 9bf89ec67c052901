/**
 * Evidence files behind one small interface, addressed by sha256 (ARCHITECTURE.md: in the
 * database by default; an object store can implement the same three calls).
 */
import type { Db } from '../storage/database.js';
import { evidenceFilesRepository } from '../storage/repositories/evidence-files.js';

export interface EvidenceStore {
  /** Stores the content under its sha256 (idempotent). `db` is the caller's transaction. */
  put(db: Db, orgId: string, file: { sha256: string; content: Buffer }, now: Date): Promise<void>;
  get(db: Db, orgId: string, sha256: string): Promise<Buffer | undefined>;
  stat(db: Db, orgId: string, sha256: string): Promise<{ size: number } | undefined>;
}

/** The default store: a table in the same database. */
export const databaseEvidenceStore: EvidenceStore = {
  put: (db, orgId, file, now) => evidenceFilesRepository.put(db, orgId, { ...file, now }),
  get: async (db, orgId, sha256) => (await evidenceFilesRepository.get(db, orgId, sha256))?.content,
  stat: (db, orgId, sha256) => evidenceFilesRepository.stat(db, orgId, sha256),
};

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
  for (const [re, type] of CONTENT_TYPES) if (re.test(filename)) return type;
  return sent && sent !== 'application/octet-stream' ? sent : 'application/octet-stream';
}
