/**
 * When Verity warns that a service-account API key expires (notification type
 * `api_key_expiry`), and what the warning says. Pure: times come in as arguments.
 */
import type { NotificationEvent } from './triggers.js';

/**
 * Days before expiry a warning goes out, most distant first; 0 is the expiry itself. A key is at
 * the smallest threshold whose moment (expiry minus that many days) has come, and is warned once
 * per threshold: a key that skips thresholds (created with two days left) is warned at the
 * nearest one only, at 3 days, not at 14 as well.
 */
export const KEY_EXPIRY_THRESHOLDS_DAYS = [14, 3, 0] as const;

/**
 * How long after expiry the expiry warning may still go out: a sweep that was down for a while
 * catches up, while keys that expired long before (say, before an upgrade) stay quiet.
 */
export const EXPIRED_WARNING_WINDOW_DAYS = 7;

export const DAY_MS = 86_400_000;

/** A key about to expire, as the warning names it. */
export interface ExpiringKey {
  org: string;
  serviceAccount: string;
  keyId: string;
  description: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** The same moment in ISO 8601 UTC. */
  expiresAtUtc: string;
  thresholdDays: number;
}

/** The warning for a key at a threshold: ON_API_KEY_EXPIRING before expiry, ON_API_KEY_EXPIRED at it. */
export function keyExpiryEvent(key: ExpiringKey, nowSeconds: number): NotificationEvent {
  const expired = key.thresholdDays === 0;
  const days = key.thresholdDays === 1 ? '1 day' : `${key.thresholdDays} days`;
  const what = `API key '${key.description}' (${key.keyId}) of service account '${key.serviceAccount}'`;
  return {
    trigger: expired ? 'ON_API_KEY_EXPIRED' : 'ON_API_KEY_EXPIRING',
    org: key.org,
    timestamp: nowSeconds,
    description: expired
      ? `${what} expired at ${key.expiresAtUtc}. Create a new key and give it to whatever used this one.`
      : `${what} expires within ${days}, at ${key.expiresAtUtc}. Rotate it before then.`,
    api_key: {
      id: key.keyId,
      description: key.description,
      service_account: key.serviceAccount,
      expires_at: key.expiresAt,
      expires_at_utc: key.expiresAtUtc,
      days_before_expiry: key.thresholdDays,
    },
  };
}
