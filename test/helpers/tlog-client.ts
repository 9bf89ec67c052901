/**
 * An independent transparency-log client, written from RFC 9162 section 2.1 (hashing, and the
 * verification algorithms of 2.1.3.2 and 2.1.4.2), C2SP signed-note and C2SP tlog-checkpoint.
 * It shares no code with the server: a test that passes with it shows a client that knows only
 * those texts can check Verity's log.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) {
    h.update(p);
  }
  return h.digest();
};

/** RFC 9162 2.1.1: MTH({d(0)}) = SHA-256(0x00 || d(0)). */
export const rfcLeafHash = (data: Uint8Array): Buffer => sha256(Buffer.from([0x00]), data);
const hashChildren = (l: Uint8Array, r: Uint8Array): Buffer => sha256(Buffer.from([0x01]), l, r);

/** RFC 9162 2.1.3.2. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leaf: Uint8Array,
  path: Uint8Array[],
  root: Uint8Array,
): boolean {
  if (leafIndex >= treeSize) {
    return false;
  }
  let fn = BigInt(leafIndex);
  let sn = BigInt(treeSize - 1);
  let r: Buffer = Buffer.from(leaf);
  for (const p of path) {
    if (sn === 0n) {
      return false;
    }
    if ((fn & 1n) === 1n || fn === sn) {
      r = hashChildren(p, r);
      if ((fn & 1n) === 0n) {
        do {
          fn >>= 1n;
          sn >>= 1n;
        } while ((fn & 1n) === 0n && fn !== 0n);
      }
    } else {
      r = hashChildren(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(Buffer.from(root));
}

/** RFC 9162 2.1.4.2. */
export function verifyConsistency(
  first: number,
  second: number,
  firstHash: Uint8Array,
  secondHash: Uint8Array,
  proof: Uint8Array[],
): boolean {
  if (first > second) {
    return false;
  }
  if (first === second) {
    return proof.length === 0 && Buffer.from(firstHash).equals(Buffer.from(secondHash));
  }
  if (first === 0) {
    return proof.length === 0;
  }
  let path = proof.map((p) => Buffer.from(p));
  if ((first & (first - 1)) === 0) {
    path = [Buffer.from(firstHash), ...path];
  }
  if (path.length === 0) {
    return false;
  }
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr: Buffer = path[0]!;
  let sr: Buffer = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) {
      return false;
    }
    if ((fn & 1n) === 1n || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if ((fn & 1n) === 0n) {
        do {
          fn >>= 1n;
          sn >>= 1n;
        } while ((fn & 1n) === 0n && fn !== 0n);
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return fr.equals(Buffer.from(firstHash)) && sr.equals(Buffer.from(secondHash)) && sn === 0n;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

/** Verifies a C2SP signed note against a `<name>+<hex id>+<base64 key>` verifier key; returns its body. */
export function openNote(note: string, verifierKey: string): string {
  // The key's base64 may hold '+' too: the name and the id end at the first two.
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(verifierKey.trim());
  const [, name, hexId, keyB64] = m ?? [];
  if (!name || !hexId || !keyB64) {
    throw new Error('malformed verifier key');
  }
  const keyBytes = Buffer.from(keyB64, 'base64');
  if (keyBytes[0] !== 0x01 || keyBytes.length !== 33) {
    throw new Error('not an Ed25519 verifier key');
  }
  const pub = keyBytes.subarray(1);
  const id = sha256(Buffer.from(`${name}\n`), Buffer.from([0x01]), pub).subarray(0, 4);
  if (id.toString('hex') !== hexId) {
    throw new Error('verifier key id does not match its key');
  }
  const split = note.lastIndexOf('\n\n');
  if (split < 0) {
    throw new Error('note has no signature block');
  }
  const body = note.slice(0, split + 1);
  const sigLines = note
    .slice(split + 2)
    .split('\n')
    .filter((l) => l !== '');
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') },
    format: 'jwk',
  });
  for (const line of sigLines) {
    const m = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!m || m[1] !== name) {
      continue;
    }
    const sig = Buffer.from(m[2]!, 'base64');
    if (sig.subarray(0, 4).equals(id) && verify(null, Buffer.from(body), key, sig.subarray(4))) {
      return body;
    }
  }
  throw new Error('no valid signature by the verifier key');
}

/** C2SP tlog-checkpoint: origin, size and root lines of a verified note body. */
export function parseCheckpoint(body: string): Checkpoint {
  const lines = body.split('\n');
  const [origin, size, root] = lines;
  if (!origin || !size || !/^\d+$/.test(size) || root === undefined) {
    throw new Error('malformed checkpoint');
  }
  return { origin, size: Number(size), root: Buffer.from(root, 'base64') };
}

/** RFC 8785 canonical JSON, written out for the test (objects' keys sorted by UTF-16 units). */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => jcs(v)).join(',')}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(',')}}`;
}
