/**
 * Webhook signing keys: each organization has a key the server generates, that an admin reads
 * and rotates. Which keys sign a delivery, and how, is decided in domain/webhook-signing.ts.
 */
import type { OrgScope } from '../scope/org-scope.js';
import { randomBytes } from 'node:crypto';
import type { WebhookSigningKey } from '../../../../shared/contract/actions.js';
import { previousKeySignsUntil } from '../../domain/webhook-signing.js';
import { epochSeconds } from '../../time.js';
import { signingKeysRepository, type SigningKeyRow } from '../../storage/repositories/actions.js';

const generate = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** Enough of an org scope to find the organization's key (the notifier has no request). */
type KeyOwner = Pick<OrgScope, 'db' | 'now'> & { org: Pick<OrgScope['org'], 'id'> };

/** The organization's key, generated on first use. */
export async function orgSigningKey(scope: KeyOwner): Promise<SigningKeyRow> {
  const { db, now } = scope;
  const orgId = scope.org.id;
  return (
    (await signingKeysRepository.find(db, orgId)) ?? signingKeysRepository.ensure(db, orgId, generate(), now)
  );
}

/** Replaces the organization's key; the replaced one signs too for a grace period (domain/webhook-signing.ts). */
export async function rotateOrgSigningKey(scope: OrgScope): Promise<SigningKeyRow> {
  const { db, now } = scope;
  const orgId = scope.org.id;
  return signingKeysRepository.rotate(db, orgId, generate(), now);
}

/** The key as an admin reads it. */
export function presentSigningKey(row: SigningKeyRow, now: Date): WebhookSigningKey {
  const until = previousKeySignsUntil(row, now);
  return {
    key: row.key,
    created_at: epochSeconds(row.created_at),
    previous_key_signs_until: until !== null ? epochSeconds(new Date(until)) : null,
  };
}
