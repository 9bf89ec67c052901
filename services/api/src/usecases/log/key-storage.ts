/**
 * Generated log signing keys at rest. With `VERITY_ENCRYPTION_SECRET` a private key is stored
 * sealed (AES-256-GCM, see secret-box.ts) for its organization and key id; keys stored in the
 * clear before the secret was set are still read, and sealed at start. Without the secret keys
 * are stored in the clear, as before, and the start says so.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { LruMap } from '../../lru-map.js';
import { isSealed, secretBox, type SecretBox } from '../../secret-box.js';
import type { Db } from '../../storage/database.js';
import { transparencyLogRepository as repo } from '../../storage/repositories/transparency-log.js';
import { privateKeyFromPkcs8 } from './signed-note.js';

/** The key derivation's purpose: a key of its own for log signing keys. */
const PURPOSE = 'verity log signing keys v1';
/** The row a sealed key belongs to (its additional authenticated data). */
const rowOf = (orgId: string, keyId: string) => `log_keys/${orgId}/${keyId}`;

const boxes = new Map<string, SecretBox>();
function box(secret: string): SecretBox {
  let b = boxes.get(secret);
  if (!b) {
    b = secretBox(secret, PURPOSE);
    boxes.set(secret, b);
  }
  return b;
}

/** What to store for a new key's PKCS#8 DER: sealed when a secret is configured. */
export function storedPrivateKey(
  secret: string | undefined,
  orgId: string,
  keyId: string,
  der: Buffer,
): Buffer {
  return secret ? box(secret).seal(der, rowOf(orgId, keyId)) : der;
}

/**
 * Keys opened lately, by organization, key id, secret and stored bytes (hashed): a sequencing
 * round signs a checkpoint several times a second, and opening a key (decrypting it and parsing
 * its PKCS#8) cost more than signing. A key stored anew (rotated, sealed) has other bytes, so it
 * is opened again; at most 1,000 are kept.
 */
const opened = new LruMap<KeyObject>(1000);

/** The private key a stored value holds; throws naming the setting when it cannot be opened. */
export function openPrivateKey(
  secret: string | undefined,
  orgId: string,
  keyId: string,
  stored: Uint8Array,
): KeyObject {
  const cacheKey = createHash('sha256')
    .update(`${orgId}\0${keyId}\0${secret ?? ''}\0`)
    .update(stored)
    .digest('base64');
  let key = opened.get(cacheKey);
  if (!key) {
    key = openUncached(secret, orgId, keyId, stored);
    opened.set(cacheKey, key);
  }
  return key;
}

function openUncached(
  secret: string | undefined,
  orgId: string,
  keyId: string,
  stored: Uint8Array,
): KeyObject {
  if (!isSealed(stored)) {
    return privateKeyFromPkcs8(stored);
  }
  if (!secret) {
    throw new Error(
      `the log signing key ${keyId} is stored encrypted and VERITY_ENCRYPTION_SECRET is not set`,
    );
  }
  let der: Buffer;
  try {
    der = box(secret).open(stored, rowOf(orgId, keyId));
  } catch {
    throw new Error(
      `VERITY_ENCRYPTION_SECRET does not open the stored log signing key ${keyId} (it was sealed under another secret, or for another row)`,
    );
  }
  return privateKeyFromPkcs8(der);
}

/** Seals every private key stored in the clear; returns how many this call sealed. */
export async function sealStoredKeys(db: Db, secret: string): Promise<number> {
  let sealed = 0;
  for (const row of await repo.privateKeys(db)) {
    const stored = row.private_key!;
    if (isSealed(stored)) {
      continue;
    }
    const to = storedPrivateKey(secret, row.org_id, row.key_id, Buffer.from(stored));
    if (await repo.replacePrivateKey(db, row.org_id, row.key_id, stored, to)) {
      sealed += 1;
    }
  }
  return sealed;
}

/** How many private keys are stored in the clear. */
export async function clearStoredKeys(db: Db): Promise<number> {
  return (await repo.privateKeys(db)).filter((r) => !isSealed(r.private_key!)).length;
}
