/**
 * C2SP signed notes with Ed25519 (https://c2sp.org/signed-note) carrying C2SP tlog checkpoints
 * (https://c2sp.org/tlog-checkpoint): the body `<origin>\n<size>\n<base64 root>\n`, a blank line,
 * then one `— <name> <base64(key id || signature)>` line per signature. The key id is the first 4
 * bytes of SHA-256(name || 0x0A || 0x01 || public key); the verifier key reads
 * `<name>+<hex key id>+<base64(0x01 || public key)>`.
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

const ED25519 = 0x01;

export function keyId(name: string, publicKey: Uint8Array): Buffer {
  return createHash('sha256')
    .update(Buffer.from(`${name}\n`, 'utf8'))
    .update(Buffer.from([ED25519]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

export function verifierKey(name: string, publicKey: Uint8Array): string {
  return `${name}+${keyId(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), publicKey]).toString('base64')}`;
}

/** The raw 32-byte public key of an Ed25519 key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return Buffer.from(pub.export({ format: 'der', type: 'spki' })).subarray(-32);
}

export function privateKeyFromPkcs8(der: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
}

export function checkpointBody(origin: string, size: number, root: Uint8Array): string {
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}

/** The note of `body` signed by `name`'s key. */
export function signNote(body: string, name: string, privateKey: KeyObject): string {
  const signature = sign(null, Buffer.from(body, 'utf8'), privateKey);
  const id = keyId(name, rawPublicKey(privateKey));
  return `${body}\n\u2014 ${name} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}

/** A key name as the signed-note spec allows it: no spaces, no plus signs. */
export function noteName(value: string): string {
  return value.replace(/[\s+]/g, '_');
}
