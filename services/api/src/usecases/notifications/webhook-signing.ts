/**
 * Webhook signing keys: each organization has a key the server generates, that an admin reads
 * and rotates. After a rotation the previous key keeps signing (a second signature) for a grace
 * period, so receivers can switch keys without losing deliveries.
 */
import type { OrgScope } from '../scope/org-scope.js';
import { randomBytes } from 'node:crypto';
import type { WebhookSigningKey } from '../../../../shared/contract/actions.js';
import { epochSeconds } from '../../time.js';
import { signingKeysRepository, type SigningKeyRow } from '../../storage/repositories/actions.js';

/** How long the previous key still signs after a rotation. */
export const SIGNING_KEY_GRACE_MS = 24 * 3_600_000;

const generate = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** The organization's key, generated on first use. */
/** Enough of an org scope to find the organization's key (the notifier has no request). */
type KeyOwner = Pick<OrgScope, 'db' | 'now'> & { org: Pick<OrgScope['org'], 'id'> };

export async function orgSigningKey(scope: KeyOwner): Promise<SigningKeyRow> {
  const { db, now } = scope;
  const orgId = scope.org.id;
  return (
    (await signingKeysRepository.find(db, orgId)) ?? signingKeysRepository.ensure(db, orgId, generate(), now)
  );
}

/** Replaces the organization's key; the replaced one signs too for `SIGNING_KEY_GRACE_MS`. */
export async function rotateOrgSigningKey(scope: OrgScope): Promise<SigningKeyRow> {
  const { db, now } = scope;
  const orgId = scope.org.id;
  return signingKeysRepository.rotate(db, orgId, generate(), now);
}

/** The keys that sign a delivery at `now`: the current one, then the previous within its grace. */
export function activeSigningKeys(row: SigningKeyRow, now: Date): string[] {
  const graceEnds = row.rotated_at ? row.rotated_at.getTime() + SIGNING_KEY_GRACE_MS : 0;
  return row.previous_key && now.getTime() < graceEnds ? [row.key, row.previous_key] : [row.key];
}

/** The key as an admin reads it. */
export function presentSigningKey(row: SigningKeyRow, now: Date): WebhookSigningKey {
  const graceEnds = row.rotated_at ? row.rotated_at.getTime() + SIGNING_KEY_GRACE_MS : 0;
  return {
    key: row.key,
    created_at: epochSeconds(row.created_at),
    previous_key_signs_until:
      row.previous_key && now.getTime() < graceEnds ? epochSeconds(new Date(graceEnds)) : null,
  };
}
