/**
 * API key lifecycle: random keys shown once, stored as sha256, rotated with a grace period,
 * revoked at once (semantics.md section 2).
 */
import { randomBytes } from 'node:crypto';
import { sha256 } from '../../sha256.js';
import type { Db } from '../../storage/database.js';
import { apiKeysRepository, type ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { newId } from '../../ids.js';
import { BadRequestError, NotFoundError } from '../../errors.js';

/** Prefix of every generated key, so leaked keys are recognisable by secret scanners. */
export const KEY_PREFIX = 'vty_';
/** Default rotation grace period (semantics.md section 2). */
export const DEFAULT_GRACE_PERIOD_HOURS = 24;

/** A new random key: 32 random bytes, base64url, prefixed. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key. Keys are high-entropy, so a plain sha256 is the right hash. */
export function hashKey(key: string): string {
  return sha256(key);
}

/**
 * Constant-time comparison of two hex hashes: every character is looked at whatever the first
 * difference, without the two buffers `timingSafeEqual` would need on every request.
 */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) {
    return false;
  }
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  }
  return diff === 0;
}

/** Converts a wire `expires_at` (epoch seconds, 0 = never) to a date, refusing the past. */
export function parseExpiresAt(expiresAt: number | null | undefined, now: Date): Date | null {
  if (expiresAt === undefined || expiresAt === null || expiresAt === 0) {
    return null;
  }
  if (expiresAt * 1000 <= now.getTime()) {
    throw new BadRequestError('expires_at must be in the future', {
      'body.expires_at': 'must be in the future',
    });
  }
  return new Date(expiresAt * 1000);
}

/** Creates a service-account key; returns the row and the key, which is never retrievable again. */
export async function createServiceAccountKey(
  db: Db,
  input: {
    orgId: string;
    serviceAccountId: string;
    description: string;
    expiresAt: Date | null;
    now: Date;
    key?: string;
  },
): Promise<{ row: ApiKeyRow; key: string }> {
  const key = input.key ?? generateKey();
  const row = await apiKeysRepository.insert(db, {
    id: newId(),
    key_hash: hashKey(key),
    org_id: input.orgId,
    service_account_id: input.serviceAccountId,
    user_id: null,
    description: input.description,
    created_at: input.now,
    expires_at: input.expiresAt,
    rotated_from: null,
  });
  return { row, key };
}

/** Creates a personal key for a user. */
export async function createUserKey(
  db: Db,
  input: { userId: string; description: string; expiresAt: Date | null; now: Date },
): Promise<{ row: ApiKeyRow; key: string }> {
  const key = generateKey();
  const row = await apiKeysRepository.insert(db, {
    id: newId(),
    key_hash: hashKey(key),
    org_id: null,
    service_account_id: null,
    user_id: input.userId,
    description: input.description,
    created_at: input.now,
    expires_at: input.expiresAt,
    rotated_from: null,
  });
  return { row, key };
}

/** True when a key no longer authenticates at `now`. */
export function keyIsUsable(row: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now: Date): boolean {
  return row.revoked_at === null && (row.expires_at === null || row.expires_at.getTime() > now.getTime());
}

/**
 * Rotates a live key: a new key with the same description, and the old one expiring after the
 * grace period (never later than it would have anyway).
 */
export async function rotateServiceAccountKey(
  db: Db,
  input: {
    orgId: string;
    serviceAccountId: string;
    keyId: string;
    gracePeriodHours: number;
    expiresAt: Date | null;
    now: Date;
  },
): Promise<{ row: ApiKeyRow; key: string; graceEndsAt: Date }> {
  return db.transaction().execute(async (trx) => {
    const old = await apiKeysRepository.findForServiceAccount(
      trx,
      input.orgId,
      input.serviceAccountId,
      input.keyId,
    );
    if (!old || !keyIsUsable(old, input.now)) {
      throw new NotFoundError('API key not found');
    }
    const key = generateKey();
    const row = await apiKeysRepository.insert(trx, {
      id: newId(),
      key_hash: hashKey(key),
      org_id: input.orgId,
      service_account_id: input.serviceAccountId,
      user_id: null,
      description: old.description,
      created_at: input.now,
      expires_at: input.expiresAt,
      rotated_from: old.id,
    });
    let graceEndsAt = new Date(input.now.getTime() + input.gracePeriodHours * 3_600_000);
    if (old.expires_at && old.expires_at < graceEndsAt) {
      graceEndsAt = old.expires_at;
    }
    if (input.gracePeriodHours === 0) {
      await apiKeysRepository.revoke(trx, old.id, input.now);
    } else {
      await apiKeysRepository.setExpiry(trx, old.id, graceEndsAt);
    }
    return { row, key, graceEndsAt };
  });
}
