/**
 * Secrets Verity keeps in its own database, encrypted under `VERITY_ENCRYPTION_SECRET`: AES-256-GCM
 * with a key derived by HKDF-SHA256 from the secret (salt `verity`, info the purpose, so each use
 * has its own key), a random 96-bit IV per value, and the row's identity as additional data, so a
 * sealed value moved to another row does not open. A sealed value is `VSB1 || iv || tag ||
 * ciphertext`; anything else is a value stored before encryption was configured.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const MAGIC = Buffer.from('VSB1');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Whether a stored value is sealed (else it was stored in the clear). */
export function isSealed(stored: Uint8Array): boolean {
  return (
    stored.length > MAGIC.length + IV_BYTES + TAG_BYTES && MAGIC.equals(stored.subarray(0, MAGIC.length))
  );
}

export interface SecretBox {
  /** The value sealed for the row `aad` names. */
  seal(plain: Uint8Array, aad: string): Buffer;
  /** The value a sealed one holds; throws when it was sealed under another secret or for another row. */
  open(sealed: Uint8Array, aad: string): Buffer;
}

/** A box for one purpose (`info` of the key derivation) under the configured secret. */
export function secretBox(secret: string, purpose: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secret, 'verity', purpose, 32));
  return {
    seal(plain, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), body]);
    },
    open(sealed, aad) {
      if (!isSealed(sealed)) {
        throw new Error('not a sealed value');
      }
      const s = Buffer.from(sealed);
      const iv = s.subarray(MAGIC.length, MAGIC.length + IV_BYTES);
      const tag = s.subarray(MAGIC.length + IV_BYTES, MAGIC.length + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad)).setAuthTag(tag);
      return Buffer.concat([
        decipher.update(s.subarray(MAGIC.length + IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
    },
  };
}
