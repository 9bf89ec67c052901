/**
 * The transparency log's rows (migration 0400): the queue the triggers fill, the entries, the
 * stored subtree hashes, the per-organization head and the generated signing keys.
 */
import { sql } from 'kysely';
import { keyText, quoteIdent, recordSql, type LogKind } from '../../domain/log-kinds.js';
import type { Db } from '../database.js';
import { batches } from './runtime.js';

/** A perfect subtree of a log's Merkle tree: level 0 the leaves, level l the roots of 2^l leaves. */
export interface NodeRef {
  level: number;
  index: number;
}

export interface StoredNode extends NodeRef {
  hash: Buffer;
}

export const nodeKey = (level: number, index: number): string => `${level}:${index}`;

export interface QueuedRow {
  id: string;
  kind: string;
  op: string;
  /** The row's fields as JSON text. */
  row: string;
}

export interface EntryRow {
  index: number;
  kind: string;
  record_id: string;
  record: Record<string, unknown>;
}

/** An entry the sequencer appends from a queued row. */
export interface AppendedEntry {
  queueId: string;
  index: number;
  record_id: string;
  leaf: Buffer;
}

export interface HeadRow {
  size: number;
  root: Buffer | null;
  checkpoint: string | null;
}

const CHUNK = 500;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

const toEntry = (r: {
  index: string | number;
  kind: string;
  record_id: string;
  record: unknown;
}): EntryRow => ({
  index: Number(r.index),
  kind: r.kind,
  record_id: r.record_id,
  record: (typeof r.record === 'string' ? JSON.parse(r.record) : r.record) as Record<string, unknown>,
});

export const transparencyLogRepository = {
  /** The name of a flow, environment or policy of the organization by its id (entry links). */
  async nameById(
    db: Db,
    orgId: string,
    table: 'flows' | 'environments' | 'policies',
    id: string,
  ): Promise<string | undefined> {
    const r = await sql<{ name: string }>`select name from ${sql.table(table)}
      where org_id = ${orgId} and id = ${id}`.execute(db);
    return r.rows[0]?.name;
  },

  /** Organizations with queued records, at most `limit`. */
  async queuedOrgs(db: Db, limit: number): Promise<string[]> {
    // A skip scan of log_queue_org_idx: the queue's deleted rows are not read one by one (the
    // sequencer asks often, and vacuum may be rare).
    const rows = await sql<{ org_id: string }>`with recursive o as (
        (select org_id from log_queue order by org_id limit 1)
        union all
        select (select q.org_id from log_queue q where q.org_id > o.org_id order by q.org_id limit 1)
        from o where o.org_id is not null
      ) select org_id from o where org_id is not null limit ${limit}`.execute(db);
    return rows.rows.map((r) => r.org_id);
  },

  /** The organization's head, created empty when missing, locked until the transaction ends. */
  async lockHead(trx: Db, orgId: string, now: Date): Promise<HeadRow> {
    const locked = () =>
      trx
        .selectFrom('log_heads')
        .select(['size', 'root', 'checkpoint'])
        .where('org_id', '=', orgId)
        .forUpdate()
        .executeTakeFirst();
    // One statement a round once the head exists (every round but the organization's first).
    let row = await locked();
    if (!row) {
      await trx
        .insertInto('log_heads')
        .values({ org_id: orgId, size: 0, root: null, checkpoint: null, updated_at: now })
        .onConflict((oc) => oc.column('org_id').doNothing())
        .execute();
      row = await locked();
    }
    if (!row) {
      throw new Error(`the log head of organization ${orgId} could not be created`);
    }
    return {
      size: Number(row.size),
      root: row.root ? Buffer.from(row.root) : null,
      checkpoint: row.checkpoint,
    };
  },

  async head(db: Db, orgId: string): Promise<HeadRow | undefined> {
    const row = await db
      .selectFrom('log_heads')
      .select(['size', 'root', 'checkpoint'])
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    return row
      ? { size: Number(row.size), root: row.root ? Buffer.from(row.root) : null, checkpoint: row.checkpoint }
      : undefined;
  },

  async setHead(trx: Db, orgId: string, head: { size: number; root: Buffer; checkpoint: string }, now: Date) {
    await trx
      .updateTable('log_heads')
      .set({ size: head.size, root: head.root, checkpoint: head.checkpoint, updated_at: now })
      .where('org_id', '=', orgId)
      .execute();
  },

  /** The oldest queued rows of an organization, at most `limit`. */
  async queued(trx: Db, orgId: string, limit: number): Promise<QueuedRow[]> {
    // The row as JSON text: it is parsed where it is hashed (a worker thread), not here.
    const rows = await sql<{
      id: string | number;
      kind: string;
      op: string;
      row: string;
    }>`select id, kind, op, row::text as row
      from log_queue where org_id = ${orgId} order by id limit ${limit}`.execute(trx);
    return rows.rows.map((r) => ({ ...r, id: String(r.id) }));
  },

  // The sequencer's writes go as arrays (`unnest`), one statement per parameter batch: as
  // multi-row VALUES of 500 rows each they cost the API and the server a parse of thousands of
  // parameters per statement, several times a second under CI load.
  async dequeue(trx: Db, orgId: string, ids: string[]): Promise<void> {
    for (const part of batches(ids, (id) => id.length + 4)) {
      await sql`delete from log_queue where org_id = ${orgId} and id = any(${part}::bigint[])`.execute(trx);
    }
  },

  /**
   * Moves queued rows into the log as the entries named (queued row, index, record id, leaf
   * hash): the record is built from the queued row where it lies (its fields, with the kind and id
   * first, and `removed` for a removal, as `recordOf` builds it), so it is not sent back.
   */
  async appendEntries(trx: Db, orgId: string, entries: AppendedEntry[]): Promise<void> {
    for (const part of batches(entries, (e) => e.queueId.length + e.record_id.length + 96)) {
      await sql`with q as (
          delete from log_queue where org_id = ${orgId} and id = any(${part.map((e) => e.queueId)}::bigint[])
          returning id, kind, op, row
        )
        insert into log_entries (org_id, index, kind, record_id, record, leaf)
        select ${orgId}, e.index, q.kind, e.record_id,
          jsonb_build_object('kind', q.kind, 'id', e.record_id) || q.row
            || case when q.op = 'delete' then '{"removed": true}'::jsonb else '{}'::jsonb end,
          decode(e.leaf, 'hex')
        from q join unnest(${part.map((e) => e.queueId)}::bigint[], ${part.map((e) => e.index)}::bigint[],
          ${part.map((e) => e.record_id)}::text[], ${part.map((e) => e.leaf.toString('hex'))}::text[])
          as e(queue_id, index, record_id, leaf) on e.queue_id = q.id`.execute(trx);
    }
  },

  /** Stores subtree hashes above the leaves (the leaves are stored with their entries). */
  async insertNodes(trx: Db, orgId: string, nodes: StoredNode[]): Promise<void> {
    for (const part of batches(nodes, () => 96)) {
      await sql`insert into log_nodes (org_id, level, idx, hash)
        select ${orgId}, n.level, n.idx, decode(n.hash, 'hex')
        from unnest(${part.map((n) => n.level)}::smallint[], ${part.map((n) => n.index)}::bigint[],
          ${part.map((n) => Buffer.from(n.hash).toString('hex'))}::text[]) as n(level, idx, hash)`.execute(
        trx,
      );
    }
  },

  /**
   * The stored hashes of the subtrees named (a reader of stored levels): the leaves from their
   * entries, the levels above from `log_nodes`.
   */
  async nodes(db: Db, orgId: string, refs: NodeRef[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const leaves = refs.filter((r) => r.level === 0).map((r) => r.index);
    for (const part of chunks(leaves, 1000)) {
      const rows = await sql<{ index: string | number; leaf: Uint8Array }>`select index, leaf from log_entries
        where org_id = ${orgId} and index = any(${part}::bigint[])`.execute(db);
      for (const r of rows.rows) {
        out.set(nodeKey(0, Number(r.index)), Buffer.from(r.leaf));
      }
    }
    const above = refs.filter((r) => r.level > 0);
    for (const part of chunks(above, 1000)) {
      const rows = await sql<{
        level: number;
        idx: string | number;
        hash: Uint8Array;
      }>`select n.level, n.idx, n.hash
        from log_nodes n
        join unnest(${part.map((r) => r.level)}::smallint[], ${part.map((r) => r.index)}::bigint[]) as w(level, idx)
          on n.level = w.level and n.idx = w.idx
        where n.org_id = ${orgId}`.execute(db);
      for (const r of rows.rows) {
        out.set(nodeKey(r.level, Number(r.idx)), Buffer.from(r.hash));
      }
    }
    return out;
  },

  async entry(db: Db, orgId: string, index: number): Promise<EntryRow | undefined> {
    const row = await db
      .selectFrom('log_entries')
      .select(['index', 'kind', 'record_id', 'record'])
      .where('org_id', '=', orgId)
      .where('index', '=', index)
      .executeTakeFirst();
    return row ? toEntry(row) : undefined;
  },

  /** Entries [from, to) in order. */
  async entries(db: Db, orgId: string, from: number, to: number): Promise<EntryRow[]> {
    const rows = await db
      .selectFrom('log_entries')
      .select(['index', 'kind', 'record_id', 'record'])
      .where('org_id', '=', orgId)
      .where('index', '>=', from)
      .where('index', '<', to)
      .orderBy('index')
      .execute();
    return rows.map(toEntry);
  },

  /** The latest entry of each record named, by `kind:id`. */
  async latestOf(
    db: Db,
    orgId: string,
    records: Array<{ kind: string; id: string }>,
  ): Promise<Map<string, EntryRow>> {
    const out = new Map<string, EntryRow>();
    for (const part of chunks(records, 200)) {
      if (part.length === 0) {
        continue;
      }
      const rows = await db
        .selectFrom('log_entries')
        .select(['index', 'kind', 'record_id', 'record'])
        .distinctOn(['kind', 'record_id'])
        .where('org_id', '=', orgId)
        .where((eb) => eb.or(part.map((r) => eb.and([eb('kind', '=', r.kind), eb('record_id', '=', r.id)]))))
        .orderBy('kind')
        .orderBy('record_id')
        .orderBy('index', 'desc')
        .execute();
      for (const r of rows) {
        out.set(`${r.kind}:${r.record_id}`, toEntry(r));
      }
    }
    return out;
  },

  /** The index of the latest entry of each record of `kind` named (absent: not in the log yet). */
  async latestIndexes(db: Db, orgId: string, kind: string, ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const part of chunks([...new Set(ids)], 500)) {
      if (part.length === 0) {
        continue;
      }
      const rows = await db
        .selectFrom('log_entries')
        .select(['record_id', (eb) => eb.fn.max('index').as('index')])
        .where('org_id', '=', orgId)
        .where('kind', '=', kind)
        .where('record_id', 'in', part)
        .groupBy('record_id')
        .execute();
      for (const r of rows) {
        out.set(r.record_id, Number(r.index));
      }
    }
    return out;
  },

  /** The fields of a record as its table holds them now (the kind's columns); undefined when gone. */
  async currentFields(
    db: Db,
    orgId: string,
    kind: LogKind,
    record: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const conditions = kind.key.map(
      (c) => sql`${sql.raw(`t.${quoteIdent(c)}`)}::text = ${keyText(record[c])}`,
    );
    const rows = await sql<{ r: unknown }>`select ${sql.raw(recordSql(kind, 't'))} as r
      from ${sql.table(kind.table)} t where t.org_id = ${orgId} and ${sql.join(conditions, sql` and `)}`.execute(
      db,
    );
    const r = rows.rows[0]?.r;
    if (r === undefined) {
      return undefined;
    }
    return (typeof r === 'string' ? JSON.parse(r) : r) as Record<string, unknown>;
  },

  async keys(db: Db, orgId: string) {
    return db
      .selectFrom('log_keys')
      .select(['key_id', 'public_key', 'private_key', 'created_at', 'retired_at'])
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .execute();
  },

  /** Every stored private key, to seal those stored in the clear. */
  async privateKeys(db: Db) {
    return db
      .selectFrom('log_keys')
      .select(['org_id', 'key_id', 'private_key'])
      .where('private_key', 'is not', null)
      .execute();
  },

  /** Replaces a stored private key if it is still `from` (another replica may have sealed it); whether it did. */
  async replacePrivateKey(
    db: Db,
    orgId: string,
    keyId: string,
    from: Uint8Array,
    to: Buffer,
  ): Promise<boolean> {
    const r = await db
      .updateTable('log_keys')
      .set({ private_key: to })
      .where('org_id', '=', orgId)
      .where('key_id', '=', keyId)
      .where('private_key', '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  },

  async insertKey(
    db: Db,
    row: { org_id: string; key_id: string; public_key: Buffer; private_key: Buffer; created_at: Date },
  ) {
    await db
      .insertInto('log_keys')
      .values({ ...row, retired_at: null })
      .onConflict((oc) => oc.doNothing())
      .execute();
  },
};
