/** Webhook signing keys and signatures (semantics.md section 7), as a receiver checks them. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  SIGNING_KEY_GRACE_MS,
  signingKeysFor,
  signWebhook,
} from '../../services/api/src/domain/webhook-signing.js';

const now = new Date('2026-03-01T12:00:00Z');
const orgKey = { key: 'org-new', previous_key: 'org-old', rotated_at: new Date(now.getTime() - 3_600_000) };
const noSecret = { secret: null };

describe('signingKeysFor: target secret > VERITY_WEBHOOK_SECRET > organization key', () => {
  it("signs with the target's own secret before any other key", () => {
    expect(signingKeysFor({ secret: 'target' }, 'server', orgKey, now)).toEqual(['target']);
  });
  it('signs with the server-wide secret when the target has none', () => {
    expect(signingKeysFor(noSecret, 'server', orgKey, now)).toEqual(['server']);
    expect(signingKeysFor(noSecret, 'server', undefined, now)).toEqual(['server']);
  });
  it("signs with the organization's key, and the previous one within 24 h of a rotation", () => {
    expect(signingKeysFor(noSecret, undefined, orgKey, now)).toEqual(['org-new', 'org-old']);
    const late = new Date(orgKey.rotated_at.getTime() + SIGNING_KEY_GRACE_MS);
    expect(signingKeysFor(noSecret, undefined, orgKey, late)).toEqual(['org-new']);
    const never = { key: 'only', previous_key: null, rotated_at: null };
    expect(signingKeysFor(noSecret, undefined, never, now)).toEqual(['only']);
  });
});

describe('signWebhook', () => {
  it('is one sha256= HMAC of "<timestamp>.<body>" per key, comma-separated', () => {
    const mac = (k: string) => createHmac('sha256', k).update('1700000000.{"a":1}').digest('hex');
    expect(signWebhook(['k1', 'k2'], '1700000000', '{"a":1}')).toBe(
      `sha256=${mac('k1')},sha256=${mac('k2')}`,
    );
    expect(signWebhook('k1', '1700000000', '{"a":1}')).toBe(`sha256=${mac('k1')}`);
  });
});
