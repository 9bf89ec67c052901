// @ts-check
/**
 * The leaf of a transparency-log entry from its queued row, as the sequencer computes it
 * (usecases/log/log.ts): the record is the row's fields with the kind and the record id first
 * (`recordOf` in domain/log-kinds.ts; its id the key columns' values joined with ':', `keyText`),
 * and `removed: true` for a removal; the leaf is RFC 9162's SHA-256(0x00 || RFC 8785 JCS of the
 * record). Plain JavaScript, so that a worker thread runs it from the sources and from the build;
 * test/unit/log-leaves.test.ts holds it to the domain's functions for every kind.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * A queued row's fields (an object: the triggers queue jsonb_build_object).
 * @param {unknown} parsed
 */
const fieldsOf = (parsed) => /** @type {Record<string, unknown>} */ (parsed);

/** @param {unknown} v */
function keyText(v) {
  if (v === null || v === undefined) {
    return '';
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') {
    return String(v);
  }
  return JSON.stringify(v);
}

/**
 * The record id and leaf hash of each queued row.
 * @param {Record<string, string[]>} keys the key columns of each kind
 * @param {Array<[kind: string, op: string, row: string]>} rows the kind, operation and row (JSON text) of each
 * @returns {{ ids: string[]; leaves: Uint8Array }} the ids, and the 32-byte leaves one after another
 */
export function logLeaves(keys, rows) {
  /** @type {string[]} */
  const ids = [];
  const leaves = new Uint8Array(rows.length * 32);
  rows.forEach(([kind, op, text], i) => {
    const fields = fieldsOf(JSON.parse(text));
    const key = keys[kind];
    if (!key) {
      throw new Error(`no key columns for the log kind ${kind}`);
    }
    const id = key.map((k) => keyText(fields[k])).join(':');
    /** @type {Record<string, unknown>} */
    const record = { kind, id, ...fields };
    if (op === 'delete') {
      record.removed = true;
    }
    ids.push(String(record.id));
    const leaf = createHash('sha256')
      .update(Buffer.from([0]))
      .update(Buffer.from(canonicalize(record) ?? 'null', 'utf8'))
      .digest();
    leaves.set(leaf, i * 32);
  });
  return { ids, leaves };
}
