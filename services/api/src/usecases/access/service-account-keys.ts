/**
 * The API keys of a service account as the interface shows them: metadata only, and the key
 * itself once, in the answer that creates it.
 */
import type { OrgScope } from '../scope/org-scope.js';
import type { z } from 'zod';
import type {
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyInfo,
  ApiKeyRotate,
  ApiKeyRotated,
} from '../../../../shared/contract/service-accounts.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { apiKeysRepository, type ApiKeyRow } from '../../storage/repositories/api-keys.js';
import { epochOrZero, epochSeconds } from '../../time.js';
import {
  DEFAULT_GRACE_PERIOD_HOURS,
  createServiceAccountKey,
  keyIsUsable,
  parseExpiresAt,
  rotateServiceAccountKey,
} from './api-keys.js';
import { getServiceAccount, managedServiceAccount, type AccountCaller } from './service-accounts.js';

/** Which account's keys, in which organization's scope. */
export interface KeyScope extends OrgScope {
  account: string;
  /** Keys the organization's service accounts may hold that still work (409 beyond). */
  maxActiveKeys: number;
}

/** 409 when one more key would take the organization past its limit of active keys. */
async function assertRoomForKey(scope: KeyScope): Promise<void> {
  if ((await apiKeysRepository.countActiveInOrg(scope.db, scope.org.id, scope.now)) >= scope.maxActiveKeys) {
    throw new ConflictError(
      `The organization has reached its limit of ${scope.maxActiveKeys} active API keys: revoke one before creating another`,
    );
  }
}

function presentKey(row: ApiKeyRow): z.infer<typeof ApiKeyInfo> {
  return {
    id: row.id,
    description: row.description,
    created_at: epochSeconds(row.created_at),
    expires_at: epochOrZero(row.expires_at),
    last_used_at: epochOrZero(row.last_used_at),
  };
}

function presentNewKey(row: ApiKeyRow, key: string): z.infer<typeof ApiKeyCreated> {
  return {
    id: row.id,
    key,
    description: row.description,
    created_at: epochSeconds(row.created_at),
    expires_at: epochOrZero(row.expires_at),
  };
}

/** The usable key of the account; NotFoundError otherwise. */
async function usableKey(scope: KeyScope, accountId: string, keyId: string): Promise<ApiKeyRow> {
  const row = await apiKeysRepository.findForServiceAccount(scope.db, scope.org.id, accountId, keyId);
  if (!row || !keyIsUsable(row, scope.now)) {
    throw new NotFoundError('API key not found');
  }
  return row;
}

/** Creates a key; the answer is the only place the key is shown. */
export async function createAccountKey(
  scope: KeyScope,
  caller: AccountCaller,
  input: z.infer<typeof ApiKeyCreate>,
): Promise<z.infer<typeof ApiKeyCreated>> {
  const account = await managedServiceAccount(scope, caller, scope.account);
  await assertRoomForKey(scope);
  const { row, key } = await createServiceAccountKey(scope.db, {
    orgId: scope.org.id,
    serviceAccountId: account.id,
    description: input.description,
    expiresAt: parseExpiresAt(input.expires_at, scope.now),
    now: scope.now,
  });
  return presentNewKey(row, key);
}

/** The account's active keys (metadata only). */
export async function listAccountKeys(scope: KeyScope): Promise<Array<z.infer<typeof ApiKeyInfo>>> {
  const account = await getServiceAccount(scope, scope.account);
  const rows = await apiKeysRepository.listActiveForServiceAccount(
    scope.db,
    scope.org.id,
    account.id,
    scope.now,
  );
  return rows.map(presentKey);
}

/** One usable key's metadata. */
export async function readAccountKey(scope: KeyScope, keyId: string): Promise<z.infer<typeof ApiKeyInfo>> {
  const account = await getServiceAccount(scope, scope.account);
  return presentKey(await usableKey(scope, account.id, keyId));
}

/** A new key now; the old one stays valid for the grace period. */
export async function rotateAccountKey(
  scope: KeyScope,
  caller: AccountCaller,
  keyId: string,
  input: z.infer<typeof ApiKeyRotate> | null | undefined,
): Promise<z.infer<typeof ApiKeyRotated>> {
  const account = await managedServiceAccount(scope, caller, scope.account);
  const body = input ?? {};
  const gracePeriodHours = body.grace_period_hours ?? DEFAULT_GRACE_PERIOD_HOURS;
  // The old key stays valid through the grace period: for that while, one key more.
  if (gracePeriodHours > 0) {
    await assertRoomForKey(scope);
  }
  const { row, key, graceEndsAt } = await rotateServiceAccountKey(scope.db, {
    orgId: scope.org.id,
    serviceAccountId: account.id,
    keyId,
    gracePeriodHours,
    expiresAt: parseExpiresAt(body.expires_at, scope.now),
    now: scope.now,
  });
  return { ...presentNewKey(row, key), grace_period_expires_at: epochSeconds(graceEndsAt) };
}

/** Revokes a usable key at once; NotFoundError for a key already revoked or expired. */
export async function revokeAccountKey(scope: KeyScope, caller: AccountCaller, keyId: string): Promise<void> {
  const account = await managedServiceAccount(scope, caller, scope.account);
  const row = await usableKey(scope, account.id, keyId);
  if (!(await apiKeysRepository.revoke(scope.db, row.id, scope.now))) {
    throw new NotFoundError('API key not found');
  }
}
