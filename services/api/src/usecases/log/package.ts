/**
 * What makes an audit package prove itself: under `log/`, the organization's signed checkpoint
 * (`log/checkpoint`) and note verifier keys (`log/key`), and per record of the package its log
 * entry with the inclusion proof in that checkpoint (`log/entries/<index>.json`) and the record as
 * the database holds it now (`log/records/<kind>-<id>.json`). `npm run verify` checks, offline,
 * that each record equals its entry, each entry is included in the checkpoint and the checkpoint
 * is signed. A record not yet sequenced has no entry; verify names it.
 */
import type { Db } from '../../storage/database.js';
import { transparencyLogRepository as repo } from '../../storage/repositories/transparency-log.js';
import { inclusionHashes, verifierKeys, type LogSettings } from './log.js';
import { currentRecord } from './self-check.js';

export interface LogRef {
  kind: string;
  id: string;
}

interface PackageMember {
  name: string;
  content: Buffer;
}

const text = (v: unknown) => Buffer.from(`${JSON.stringify(v, null, 2)}\n`);
const fileSafe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);

/** The `log/` members proving the records named. */
export async function logMembers(
  db: Db,
  org: { id: string; name: string },
  settings: LogSettings,
  now: Date,
  refs: LogRef[],
): Promise<PackageMember[]> {
  const unique = [...new Map(refs.map((r) => [`${r.kind}:${r.id}`, r])).values()];
  const latest = await repo.latestOf(db, org.id, unique);
  // Read after the entries: the checkpoint covers every entry read.
  const head = await repo.head(db, org.id);
  if (!head?.checkpoint) {
    return [];
  }
  const members: PackageMember[] = [
    { name: 'log/checkpoint', content: Buffer.from(head.checkpoint) },
    { name: 'log/key', content: Buffer.from(`${(await verifierKeys(db, org, settings, now)).join('\n')}\n`) },
  ];
  for (const ref of unique) {
    const entry = latest.get(`${ref.kind}:${ref.id}`);
    const recordName = `log/records/${fileSafe(`${ref.kind}-${ref.id}`)}.json`;
    if (!entry || entry.index >= head.size) {
      members.push({
        name: recordName,
        content: text({ kind: ref.kind, id: ref.id, log_index: null, record: null }),
      });
      continue;
    }
    const now = await currentRecord(db, org.id, entry);
    members.push({
      name: recordName,
      content: text({ kind: ref.kind, id: ref.id, log_index: entry.index, record: now ?? null }),
    });
    members.push({
      name: `log/entries/${entry.index}.json`,
      content: text({
        index: entry.index,
        kind: entry.kind,
        record: entry.record,
        inclusion: {
          tree_size: head.size,
          hashes: await inclusionHashes(db, org.id, entry.index, head.size),
        },
      }),
    });
  }
  return members;
}
