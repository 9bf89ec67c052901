/**
 * What an auditor's `verify` relies on, kept apart from the server's code on purpose: RFC 9162
 * (leaf and node hashing, the inclusion and consistency verification of 2.1.3.2 and 2.1.4.2),
 * C2SP signed-note (Ed25519 signatures and verifier keys) and C2SP tlog-checkpoint, and RFC 8785
 * canonical JSON (the `canonicalize` package).
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import canonicalize from 'canonicalize';

/** A check of a package or checkpoint failed; the message names what. */
export class VerifyError extends Error {}

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) {
    h.update(p);
  }
  return h.digest();
};

export const leafOf = (record: unknown): Buffer =>
  sha256(Buffer.from([0]), Buffer.from(canonicalize(record) ?? 'null', 'utf8'));
const node = (l: Uint8Array, r: Uint8Array): Buffer => sha256(Buffer.from([1]), l, r);

export function inclusionOk(
  index: number,
  size: number,
  leaf: Buffer,
  path: Buffer[],
  root: Buffer,
): boolean {
  if (index >= size) {
    return false;
  }
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of path) {
    if (sn === 0n) {
      return false;
    }
    if ((fn & 1n) === 1n || fn === sn) {
      r = node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = node(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(root);
}

export function consistencyOk(
  m: number,
  n: number,
  oldRoot: Buffer,
  newRoot: Buffer,
  proof: Buffer[],
): boolean {
  if (m > n) {
    return false;
  }
  if (m === n) {
    return proof.length === 0 && oldRoot.equals(newRoot);
  }
  if (m === 0) {
    return true;
  }
  const path = (m & (m - 1)) === 0 ? [oldRoot, ...proof] : proof;
  if (path.length === 0) {
    return false;
  }
  let fn = BigInt(m - 1);
  let sn = BigInt(n - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) {
      return false;
    }
    if ((fn & 1n) === 1n || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = node(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && fr.equals(oldRoot) && sr.equals(newRoot);
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  note: string;
}

/** Opens a checkpoint note signed by one of `keys` (`<name>+<hex id>+<base64>` lines); throws why not. */
export function openCheckpoint(note: string, keys: string[]): Checkpoint {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) {
    throw new Error('the checkpoint is not a signed note (no signature block)');
  }
  const body = note.slice(0, split + 1);
  const signatures = note
    .slice(split + 2)
    .split('\n')
    .filter((l) => l !== '');
  let verified = false;
  for (const k of keys) {
    const m = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(k.trim());
    if (!m) {
      continue;
    }
    const [, name, hexId, b64] = m as unknown as [string, string, string, string];
    const raw = Buffer.from(b64, 'base64');
    if (raw.length !== 33 || raw[0] !== 1) {
      continue;
    }
    const pub = raw.subarray(1);
    const id = sha256(Buffer.from(`${name}\n`), Buffer.from([1]), pub).subarray(0, 4);
    if (id.toString('hex') !== hexId) {
      continue;
    }
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') },
      format: 'jwk',
    });
    for (const line of signatures) {
      const s = /^\u2014 (\S+) (\S+)$/.exec(line);
      const sig = s && s[1] === name ? Buffer.from(s[2]!, 'base64') : undefined;
      if (
        sig &&
        sig.length === 68 &&
        sig.subarray(0, 4).equals(id) &&
        verify(null, Buffer.from(body), key, sig.subarray(4))
      ) {
        verified = true;
      }
    }
  }
  if (!verified) {
    throw new Error('the checkpoint carries no valid signature by the verifier key');
  }
  const [origin, size, root] = body.split('\n');
  if (!origin || !size || !/^\d+$/.test(size) || !root) {
    throw new Error('the checkpoint body is not origin, size and root hash lines');
  }
  return { origin, size: Number(size), root: Buffer.from(root, 'base64'), note };
}
