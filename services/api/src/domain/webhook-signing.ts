/**
 * Which keys sign a webhook, and how (semantics.md section 7). A webhook body is signed with
 * HMAC-SHA256 over `<timestamp>.<body>`. The key: the target's own secret when it has one, else
 * the server-wide `VERITY_WEBHOOK_SECRET` when set, else the organization's key; after a
 * rotation of the organization's key the previous one signs too, for 24 hours, so receivers can
 * switch keys without losing deliveries. Pure: the keys and the time in, the keys or the header
 * value out.
 */
import { hmacSha256 } from '../sha256.js';

/** How long the previous organization key still signs after a rotation. */
export const SIGNING_KEY_GRACE_MS = 24 * 3_600_000;

/** An organization's signing key as stored: the key, and the one it replaced with when. */
export interface OrgSigningKey {
  key: string;
  previous_key: string | null;
  rotated_at: Date | null;
}

/** Where the key that signs a webhook to a target comes from, by precedence. */
export type SigningKeySource = 'target' | 'server' | 'organization';

/** The target's own secret, else the server-wide secret, else the organization's key. */
export function signingKeySource(
  target: { secret: string | null },
  serverSecret: string | undefined,
): SigningKeySource {
  if (target.secret) {
    return 'target';
  }
  return serverSecret ? 'server' : 'organization';
}

/**
 * When the previous organization key stops signing, in epoch milliseconds; null when it signs
 * no more (or never did).
 */
export function previousKeySignsUntil(orgKey: OrgSigningKey, now: Date): number | null {
  if (!orgKey.previous_key || !orgKey.rotated_at) {
    return null;
  }
  const ends = orgKey.rotated_at.getTime() + SIGNING_KEY_GRACE_MS;
  return now.getTime() < ends ? ends : null;
}

/**
 * The keys that sign a webhook to `target` at `now`, by precedence: the target's secret, else
 * `serverSecret`, else the organization's key and, within the grace after a rotation, the
 * previous one. `orgKey` is needed only when {@link signingKeySource} says `organization`.
 */
export function signingKeysFor(
  target: { secret: string | null },
  serverSecret: string | undefined,
  orgKey: OrgSigningKey | undefined,
  now: Date,
): string[] {
  const source = signingKeySource(target, serverSecret);
  if (source === 'target') {
    return [target.secret!];
  }
  if (source === 'server') {
    return [serverSecret!];
  }
  if (!orgKey) {
    throw new Error("a webhook signed with the organization's key needs that key");
  }
  const previous = previousKeySignsUntil(orgKey, now) !== null ? orgKey.previous_key : null;
  return previous ? [orgKey.key, previous] : [orgKey.key];
}

/**
 * The signature header value for a body sent at `timestamp` (epoch seconds): one `sha256=`
 * signature per key (several during a key rotation), comma-separated.
 */
export function signWebhook(keys: string | readonly string[], timestamp: string, body: string): string {
  const all = typeof keys === 'string' ? [keys] : keys;
  return all.map((k) => `sha256=${hmacSha256(k, `${timestamp}.${body}`)}`).join(',');
}
