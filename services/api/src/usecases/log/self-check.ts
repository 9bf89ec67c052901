/**
 * The log's self-check: for a sample of entries, the record is read again from its table and
 * must hash to the logged entry (the latest entry of that record), and the stored leaf must be
 * the hash of the entry's record. A record changed behind Verity's back, or a log entry
 * rewritten, is reported by kind, id and index. A record that is gone is tampering unless its
 * last entry says it was removed, or a `disposition` entry (a retention rule's removal) names it.
 */
import { randomInt } from 'node:crypto';
import { leafHash, nodeKey } from './merkle.js';
import type { Db } from '../../storage/database.js';
import {
  transparencyLogRepository as repo,
  type EntryRow,
} from '../../storage/repositories/transparency-log.js';
import { logKind, recordOf } from '../../domain/log-kinds.js';
import { recordBytes } from './log.js';

export interface SelfCheckFailure {
  kind: string;
  id: string;
  index: number;
  reason: string;
}

/** The kind of the entry recording that a retention rule removed a record (`record_id` = `<kind>:<id>`). */
export const DISPOSITION_KIND = 'disposition';

/** The record as its table holds it now; undefined when the row is gone. */
export async function currentRecord(
  db: Db,
  orgId: string,
  entry: EntryRow,
): Promise<Record<string, unknown> | undefined> {
  const kind = logKind(entry.kind);
  if (!kind) {
    return undefined;
  }
  const fields = await repo.currentFields(db, orgId, kind, entry.record);
  if (!fields) {
    return undefined;
  }
  return recordOf(kind, fields, false);
}

const same = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  recordBytes(a).equals(recordBytes(b));

/** Checks the latest entries of the records named; returns what does not match. */
export async function checkEntries(db: Db, orgId: string, entries: EntryRow[]): Promise<SelfCheckFailure[]> {
  const failures: SelfCheckFailure[] = [];
  const leaves = await repo.nodes(
    db,
    orgId,
    entries.map((e) => ({ level: 0, index: e.index })),
  );
  for (const e of entries) {
    const leaf = leaves.get(nodeKey(0, e.index));
    if (!leaf || !leaf.equals(leafHash(recordBytes(e.record)))) {
      failures.push({
        kind: e.kind,
        id: e.record_id,
        index: e.index,
        reason: 'the log entry does not hash to its leaf',
      });
    }
  }
  const latest = await repo.latestOf(
    db,
    orgId,
    entries.filter((e) => e.kind !== DISPOSITION_KIND).map((e) => ({ kind: e.kind, id: e.record_id })),
  );
  for (const e of latest.values()) {
    const now = await currentRecord(db, orgId, e);
    if (now) {
      if (e.record.removed === true) {
        failures.push({
          kind: e.kind,
          id: e.record_id,
          index: e.index,
          reason: 'logged as removed, but present',
        });
      } else if (!same(now, e.record)) {
        failures.push({
          kind: e.kind,
          id: e.record_id,
          index: e.index,
          reason: 'the stored record differs from its log entry',
        });
      }
      continue;
    }
    if (e.record.removed === true) {
      continue;
    }
    const disposed = await repo.latestOf(db, orgId, [
      { kind: DISPOSITION_KIND, id: `${e.kind}:${e.record_id}` },
    ]);
    if (disposed.size === 0) {
      failures.push({
        kind: e.kind,
        id: e.record_id,
        index: e.index,
        reason: 'the record is missing and no disposition is logged',
      });
    }
  }
  return failures;
}

/** One round for one organization: `sample` entries picked at random. */
export async function selfCheckOrg(
  db: Db,
  orgId: string,
  sample: number,
): Promise<{ checked: number; failures: SelfCheckFailure[] }> {
  const size = (await repo.head(db, orgId))?.size ?? 0;
  if (size === 0) {
    return { checked: 0, failures: [] };
  }
  const picks = new Set<number>();
  if (size <= sample) {
    for (let i = 0; i < size; i += 1) {
      picks.add(i);
    }
  } else {
    while (picks.size < sample) {
      picks.add(randomInt(size));
    }
  }
  const entries: EntryRow[] = [];
  for (const i of picks) {
    const e = await repo.entry(db, orgId, i);
    if (e) {
      entries.push(e);
    } else {
      entries.push({ index: i, kind: 'missing', record_id: String(i), record: {} });
    }
  }
  return { checked: entries.length, failures: await checkEntries(db, orgId, entries) };
}
