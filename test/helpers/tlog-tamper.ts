/**
 * What whoever runs the database could do to the transparency log: rewrite an entry's record and
 * every stored hash above it (its leaf in `log_entries`, and the `log_nodes` subtrees that cover
 * it), so that the tree is internally consistent again and only a kept checkpoint or the records'
 * tables can tell. Hashes with the RFC 9162 functions of the independent client.
 */
import { sql, type Kysely } from 'kysely';
import { jcs, rfcLeafHash } from './tlog-client.js';
import { createHash } from 'node:crypto';

const children = (l: Uint8Array, r: Uint8Array): Buffer =>
  createHash('sha256')
    .update(Buffer.from([0x01]))
    .update(l)
    .update(r)
    .digest();

/** The RFC 9162 hash of leaves [a, b) (b - a a power of two, as stored subtrees are). */
function subtree(leaves: Uint8Array[], a: number, b: number): Buffer {
  if (b - a === 1) {
    return Buffer.from(leaves[a]!);
  }
  const mid = (a + b) / 2;
  return children(subtree(leaves, a, mid), subtree(leaves, mid, b));
}

/** Merges `patch` into entry `index`'s record in every organization's log and rehashes above it. */
export async function rewriteEntry(
  db: Kysely<any>,
  index: number,
  patch: Record<string, unknown>,
): Promise<void> {
  const rows = await sql<{ org_id: string; record: unknown }>`update log_entries
    set record = record || ${JSON.stringify(patch)}::jsonb where index = ${index}
    returning org_id, record`.execute(db);
  for (const row of rows.rows) {
    const leaf = rfcLeafHash(Buffer.from(jcs(row.record)));
    await sql`update log_entries set leaf = ${leaf} where org_id = ${row.org_id} and index = ${index}`.execute(
      db,
    );
    const all = await sql<{ leaf: Uint8Array }>`select leaf from log_entries where org_id = ${row.org_id}
      order by index`.execute(db);
    const leaves = all.rows.map((r) => r.leaf);
    const covering = await sql<{ level: number; idx: string }>`select level, idx from log_nodes
      where org_id = ${row.org_id} and idx = ${index}::bigint >> level::int`.execute(db);
    for (const n of covering.rows) {
      const width = 2 ** n.level;
      const a = Number(n.idx) * width;
      await sql`update log_nodes set hash = ${subtree(leaves, a, a + width)}
        where org_id = ${row.org_id} and level = ${n.level} and idx = ${n.idx}`.execute(db);
    }
  }
}
