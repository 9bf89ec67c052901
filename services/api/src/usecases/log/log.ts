/**
 * The per-organization transparency log: the sequencer that turns queued records into entries
 * and signs checkpoints, the signing keys, and the reads (entries, proofs, checkpoint, key).
 *
 * Sequencing takes the organization's head row lock (`log_heads ... for update`), so replicas
 * append in turns and an index is assigned once; queued rows are read and hashed (RFC 8785 JCS of
 * the record, RFC 9162 leaf), moved from the queue into the log where they lie (the database
 * builds each entry's record from its queued row, so records are not sent back), the stored
 * subtree hashes they complete written, and a new checkpoint signed, all in one transaction.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import {
  appendLeaves,
  consistencyProof,
  inclusionProof,
  isStoredLevel,
  tiledReader,
  type NodeReader,
} from './merkle.js';
import { checkpointBody, keyId, noteName, rawPublicKey, signNote, verifierKey } from './signed-note.js';
import { openPrivateKey, storedPrivateKey } from './key-storage.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import type { Db } from '../../storage/database.js';
import {
  transparencyLogRepository as repo,
  type AppendedEntry,
  type EntryRow,
} from '../../storage/repositories/transparency-log.js';
import { apiUrl, type LinkBase } from '../scope/links.js';
import { LOG_KINDS, logKind, type NameLookup } from '../../domain/log-kinds.js';
import { logLeaves } from '../../workers/log-leaves.mjs';

/** Queued rows one transaction integrates at most. */
export const SEQUENCE_BATCH = 2_000;
/**
 * The same on the embedded database, where the round's transaction holds the one connection and
 * its statements run on the API's thread: every request's queries wait for the round to end.
 */
export const EMBEDDED_SEQUENCE_BATCH = 500;
/**
 * Records hashed between two turns of the event loop (about 2 ms of canonical JSON and SHA-256):
 * a round of a busy organization is not one block that every request waits behind.
 */
const HASH_SLICE = 250;
/** Entries one page answers at most. */
export const ENTRIES_PAGE_MAX = 100;

export interface LogSettings {
  publicUrl: string;
  /** PEM private keys from the configuration: the first signs, all verify. */
  signingKeyPem: string | undefined;
  /** Seals generated keys in the database (`VERITY_ENCRYPTION_SECRET`); unset: stored in the clear. */
  encryptionSecret: string | undefined;
}

/** The origin line of an organization's checkpoints: `<public host>/<org>`. */
export function logOrigin(publicUrl: string, orgName: string): string {
  return noteName(`${new URL(publicUrl).host}/${orgName}`);
}

/** The canonical (RFC 8785) bytes of a record: an entry's leaf data. */
export function recordBytes(record: Record<string, unknown>): Buffer {
  return Buffer.from(canonicalize(record) ?? 'null', 'utf8');
}

const parsedPem = new Map<string, KeyObject[]>();

function configuredKeys(pem: string): KeyObject[] {
  let keys = parsedPem.get(pem);
  if (!keys) {
    const blocks = pem.match(/-----BEGIN PRIVATE KEY-----[\s\S]*?-----END PRIVATE KEY-----/g) ?? [];
    keys = blocks.map((b) => createPrivateKey(b));
    for (const k of keys) {
      if (k.asymmetricKeyType !== 'ed25519') {
        throw new Error('VERITY_LOG_SIGNING_KEY must hold Ed25519 keys');
      }
    }
    parsedPem.set(pem, keys);
  }
  return keys;
}

/** The key signing the organization's checkpoints (generated and stored when none exists yet). */
async function signingKey(trx: Db, orgId: string, origin: string, settings: LogSettings, now: Date) {
  if (settings.signingKeyPem) {
    return configuredKeys(settings.signingKeyPem)[0]!;
  }
  const active = (await repo.keys(trx, orgId)).find((k) => k.retired_at === null && k.private_key);
  if (active?.private_key) {
    return openPrivateKey(settings.encryptionSecret, orgId, active.key_id, active.private_key);
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  const pub = rawPublicKey(privateKey);
  const id = keyId(origin, pub).toString('hex');
  const der = Buffer.from(privateKey.export({ format: 'der', type: 'pkcs8' }));
  await repo.insertKey(trx, {
    org_id: orgId,
    key_id: id,
    public_key: pub,
    private_key: storedPrivateKey(settings.encryptionSecret, orgId, id, der),
    created_at: now,
  });
  return privateKey;
}

/** Any subtree of the organization's tree, hashed from the stored levels. */
const reader = (db: Db, orgId: string): NodeReader => tiledReader((refs) => repo.nodes(db, orgId, refs));

/** A queued row: its kind, operation and fields as JSON text. */
export type QueuedText = [kind: string, op: string, row: string];

/** The record id and leaf hash of each queued row (of a kind in the registry), in order. */
export type LeafHasher = (orgId: string, rows: QueuedText[]) => Promise<Array<{ id: string; leaf: Buffer }>>;

/** The key columns of each kind of record, as the leaf hasher takes them. */
export const LOG_KEYS: Record<string, string[]> = Object.fromEntries(
  LOG_KINDS.map((k) => [k.kind, [...k.key]]),
);

/**
 * The leaves on this thread, with the worker's own function (workers/log-leaves.mjs), HASH_SLICE
 * rows between turns of the event loop: the sequencer's way when no worker answers.
 */
export const leavesHere: LeafHasher = async (_orgId, rows) => {
  const out: Array<{ id: string; leaf: Buffer }> = [];
  for (let i = 0; i < rows.length; i += HASH_SLICE) {
    if (i > 0) {
      await turn();
    }
    const { ids, leaves } = logLeaves(LOG_KEYS, rows.slice(i, i + HASH_SLICE));
    ids.forEach((id, j) => out.push({ id, leaf: Buffer.from(leaves.subarray(j * 32, j * 32 + 32)) }));
  }
  return out;
};

export interface Sequenced {
  size: number;
  checkpoint: string;
  appended: number;
}

/**
 * Integrates up to one batch of the organization's queued records; signs a checkpoint (also for
 * an empty log that has none yet). Undefined when there was nothing to do.
 */
export async function sequenceOrg(
  db: Db,
  org: { id: string; name: string },
  settings: LogSettings,
  now: Date,
  hashLeaves: LeafHasher = leavesHere,
  batch = SEQUENCE_BATCH,
): Promise<Sequenced | undefined> {
  return db.transaction().execute(async (trx) => {
    const head = await repo.lockHead(trx, org.id, now);
    const queued = await repo.queued(trx, org.id, batch);
    if (queued.length === 0 && head.checkpoint) {
      return undefined;
    }
    const known = queued.filter((q) => logKind(q.kind));
    // A kind no longer in the registry: its queued rows are dropped, not guessed at.
    const dropped = queued.filter((q) => !logKind(q.kind)).map((q) => q.id);
    const hashed = await hashLeaves(
      org.id,
      known.map((q) => [q.kind, q.op, q.row]),
    );
    const entries: AppendedEntry[] = known.map((q, i) => ({
      queueId: q.id,
      index: head.size + i,
      record_id: hashed[i]!.id,
      leaf: hashed[i]!.leaf,
    }));
    const { nodes, root } = await appendLeaves(
      head.size,
      entries.map((e) => e.leaf),
      reader(trx, org.id),
    );
    await repo.appendEntries(trx, org.id, entries);
    await repo.insertNodes(
      trx,
      org.id,
      nodes.filter((n) => n.level > 0 && isStoredLevel(n.level)),
    );
    await repo.dequeue(trx, org.id, dropped);
    const size = head.size + entries.length;
    const origin = logOrigin(settings.publicUrl, org.name);
    const key = await signingKey(trx, org.id, origin, settings, now);
    const checkpoint = signNote(checkpointBody(origin, size, root), origin, key);
    await repo.setHead(trx, org.id, { size, root, checkpoint }, now);
    return { size, checkpoint, appended: entries.length };
  });
}

/** The signed checkpoint of the organization's log (signing the empty log's first). */
export async function checkpoint(
  db: Db,
  org: { id: string; name: string },
  settings: LogSettings,
  now: Date,
) {
  const head = await repo.head(db, org.id);
  if (head?.checkpoint) {
    return { size: head.size, checkpoint: head.checkpoint };
  }
  await sequenceOrg(db, org, settings, now);
  const again = await repo.head(db, org.id);
  return { size: again?.size ?? 0, checkpoint: again?.checkpoint ?? '' };
}

/** The note verifier keys of the organization's log: the signing key first, then retired ones. */
export async function verifierKeys(
  db: Db,
  org: { id: string; name: string },
  settings: LogSettings,
  now: Date,
): Promise<string[]> {
  const origin = logOrigin(settings.publicUrl, org.name);
  if (settings.signingKeyPem) {
    return configuredKeys(settings.signingKeyPem).map((k) => verifierKey(origin, rawPublicKey(k)));
  }
  let keys = await repo.keys(db, org.id);
  if (keys.length === 0) {
    await checkpoint(db, org, settings, now);
    keys = await repo.keys(db, org.id);
  }
  const ordered = [
    ...keys.filter((k) => k.retired_at === null),
    ...keys.filter((k) => k.retired_at !== null),
  ];
  return ordered.map((k) => verifierKey(origin, Buffer.from(k.public_key)));
}

async function treeSize(db: Db, orgId: string): Promise<number> {
  return (await repo.head(db, orgId))?.size ?? 0;
}

function parseIndex(name: string, value: string | undefined): number {
  if (value === undefined || !/^\d{1,15}$/.test(value)) {
    throw new BadRequestError(`'${name}' must be a non-negative integer`, {
      [name]: 'a non-negative integer',
    });
  }
  return Number(value);
}

/** The API view of an entry. */
export async function presentEntry(base: LinkBase, entry: EntryRow, names: NameLookup) {
  const kind = logKind(entry.kind);
  return {
    index: entry.index,
    kind: entry.kind,
    resource: kind ? await kind.resource((c, ...seg) => apiUrl(base, c, ...seg), entry.record, names) : null,
    record: entry.record,
  };
}

/** A name lookup over the database, remembering what it read. */
export function nameLookup(db: Db, orgId: string): NameLookup {
  const flows = new Map<string, Promise<string | undefined>>();
  const trails = new Map<string, Promise<{ flow: string; name: string } | undefined>>();
  const envs = new Map<string, Promise<string | undefined>>();
  const policies = new Map<string, Promise<string | undefined>>();
  const once = <T>(m: Map<string, Promise<T>>, id: unknown, load: (id: string) => Promise<T>) => {
    const key = String(id);
    let p = m.get(key);
    if (!p) {
      p = load(key);
      m.set(key, p);
    }
    return p;
  };
  const nameIn = (table: 'flows' | 'environments' | 'policies') => (id: string) =>
    repo.nameById(db, orgId, table, id);
  return {
    flow: (id) => once(flows, id, nameIn('flows')),
    trail: (id) =>
      once(trails, id, async (k) => {
        const row = await db
          .selectFrom('trails')
          .innerJoin('flows', (j) =>
            j.onRef('flows.org_id', '=', 'trails.org_id').onRef('flows.id', '=', 'trails.flow_id'),
          )
          .select(['trails.name as name', 'flows.name as flow'])
          .where('trails.org_id', '=', orgId)
          .where('trails.id', '=', k)
          .executeTakeFirst();
        return row ? { flow: row.flow, name: row.name } : undefined;
      }),
    environment: (id) => once(envs, id, nameIn('environments')),
    policy: (id) => once(policies, id, nameIn('policies')),
  };
}

/** `GET /log/{org}/entries/{index}`. */
export async function readEntry(db: Db, base: LinkBase & { orgId: string }, index: string) {
  const i = parseIndex('index', index);
  const size = await treeSize(db, base.orgId);
  const entry = i < size ? await repo.entry(db, base.orgId, i) : undefined;
  if (!entry) {
    throw new NotFoundError(`Log entry ${i} is beyond the tree of size ${size}`);
  }
  return presentEntry(base, entry, nameLookup(db, base.orgId));
}

/** `GET /log/{org}/entries?from=&to=`: entries [from, to), at most ENTRIES_PAGE_MAX. */
export async function readEntries(
  db: Db,
  base: LinkBase & { orgId: string },
  from: string | undefined,
  to: string | undefined,
) {
  const a = parseIndex('from', from ?? '0');
  const size = await treeSize(db, base.orgId);
  const b = to === undefined ? Math.min(size, a + ENTRIES_PAGE_MAX) : parseIndex('to', to);
  if (b < a) {
    throw new BadRequestError(`'to' (${b}) must not be less than 'from' (${a})`, { to: 'at least from' });
  }
  if (b - a > ENTRIES_PAGE_MAX) {
    throw new BadRequestError(`A page holds at most ${ENTRIES_PAGE_MAX} entries; asked for ${b - a}`, {
      to: `at most from + ${ENTRIES_PAGE_MAX}`,
    });
  }
  if (b > size) {
    throw new NotFoundError(`Entries up to ${b} are beyond the tree of size ${size}`);
  }
  const names = nameLookup(db, base.orgId);
  const rows = await repo.entries(db, base.orgId, a, b);
  return {
    from: a,
    to: b,
    tree_size: size,
    entries: await Promise.all(rows.map((e) => presentEntry(base, e, names))),
  };
}

/** `GET /log/{org}/proof/inclusion?index=&tree_size=`. */
export async function readInclusionProof(
  db: Db,
  orgId: string,
  index: string | undefined,
  treeSizeParam: string | undefined,
) {
  const i = parseIndex('index', index);
  const n = parseIndex('tree_size', treeSizeParam);
  if (i >= n) {
    throw new BadRequestError(`'index' (${i}) must be less than 'tree_size' (${n})`, {
      index: 'less than tree_size',
    });
  }
  const size = await treeSize(db, orgId);
  if (n > size) {
    throw new NotFoundError(`Tree size ${n} is beyond the log's size ${size}`);
  }
  const hashes = await inclusionProof(i, n, reader(db, orgId));
  return { index: i, tree_size: n, hashes: hashes.map((h) => h.toString('base64')) };
}

/** `GET /log/{org}/proof/consistency?from=&to=`. */
export async function readConsistencyProof(
  db: Db,
  orgId: string,
  from: string | undefined,
  to: string | undefined,
) {
  const a = parseIndex('from', from);
  const b = parseIndex('to', to);
  if (a > b) {
    throw new BadRequestError(`'from' (${a}) must not be greater than 'to' (${b})`, { from: 'at most to' });
  }
  const size = await treeSize(db, orgId);
  if (b > size) {
    throw new NotFoundError(`Tree size ${b} is beyond the log's size ${size}`);
  }
  const hashes = await consistencyProof(a, b, reader(db, orgId));
  return { from: a, to: b, hashes: hashes.map((h) => h.toString('base64')) };
}

/** `log_index` of records of a kind as reads show it: the latest entry's index, null until sequenced. */
export async function logIndexes(
  db: Db,
  orgId: string,
  kind: string,
  ids: string[],
): Promise<(id: string) => number | null> {
  const found = ids.length > 0 ? await repo.latestIndexes(db, orgId, kind, ids) : new Map<string, number>();
  return (id) => found.get(id) ?? null;
}

/** The inclusion proof of `index` in the tree of `size` as base64 hashes (audit packages). */
export async function inclusionHashes(db: Db, orgId: string, index: number, size: number): Promise<string[]> {
  return (await inclusionProof(index, size, reader(db, orgId))).map((h) => h.toString('base64'));
}
