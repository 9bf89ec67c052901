/**
 * Service-account rules: admins manage all accounts, snapshotters and members only those they
 * created, and nobody creates or raises an account above their own role.
 */
import type { z } from 'zod';
import type {
  ServiceAccount,
  ServiceAccountCreate,
  ServiceAccountPatch,
} from '../../../../shared/contract/service-accounts.js';
import { canGrant, roleAllows, type Role } from '../../domain/roles.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import { epochSeconds } from '../../time.js';
import {
  serviceAccountsRepository,
  type ServiceAccountRow,
} from '../../storage/repositories/service-accounts.js';
import type { OrgScope } from '../scope/org-scope.js';
import { principalRef, type Principal } from './principal.js';

/** The wire form of a service account. */
export function presentServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return {
    name: row.name,
    display_name: row.display_name ?? row.name,
    description: row.description,
    privilege: row.privilege,
    created_at: epochSeconds(row.created_at),
    created_by: row.created_by_name,
    creating_user_id: creatorId(row.created_by_principal),
  };
}

/** The creator's id from its stored reference (`user:<id>`, `service_account:<id>`); null for `system`. */
function creatorId(ref: string): string | null {
  const i = ref.indexOf(':');
  return i < 0 ? null : ref.slice(i + 1);
}

/** Finds an account by name or fails with the interface's message. */
export async function getServiceAccount(scope: OrgScope, name: string): Promise<ServiceAccountRow> {
  const { db } = scope;
  const orgId = scope.org.id;
  const row = await serviceAccountsRepository.findByName(db, orgId, name);
  if (!row) {
    throw new NotFoundError('Service account not found');
  }
  return row;
}

/**
 * Throws unless the caller may change this account (or its keys): `service-account:manage`, or
 * the account's creator whose current role still reaches the account's current privilege, so a
 * creator later demoted, or whose account was later raised, cannot mint keys above its role.
 */
export function assertCanManage(principal: Principal, role: Role, account: ServiceAccountRow): void {
  if (roleAllows(role, 'service-account:manage')) {
    return;
  }
  if (
    !roleAllows(role, 'service-account:manage-own') ||
    account.created_by_principal !== principalRef(principal)
  ) {
    throw new ForbiddenError(`You may only manage the service accounts you created`);
  }
  if (!canGrant(role, account.privilege)) {
    throw new ForbiddenError(
      `Service account '${account.name}' has the privilege '${account.privilege}', above your role '${role}'; only an admin may manage it`,
    );
  }
}

/** Throws when the caller would hand out more than its own role. */
export function assertCanGrant(role: Role, privilege: Role): void {
  if (!canGrant(role, privilege)) {
    throw new ForbiddenError(`A ${role} cannot grant the privilege '${privilege}'`);
  }
}

/** Who acts on service accounts: the principal and its role in the organization. */
export interface AccountCaller {
  principal: Principal;
  role: Role;
}

/** The account by name, once the caller is known to be allowed to change it. */
export async function managedServiceAccount(
  scope: OrgScope,
  caller: AccountCaller,
  name: string,
): Promise<ServiceAccountRow> {
  const account = await getServiceAccount(scope, name);
  assertCanManage(caller.principal, caller.role, account);
  return account;
}

/**
 * Creates a service account; 400 when the name is taken, 409 when the organization already has
 * `maxPerOrg` (each account's keys get a rate-limit bucket of their own).
 */
export async function createServiceAccount(
  scope: OrgScope,
  caller: AccountCaller,
  input: z.infer<typeof ServiceAccountCreate>,
  maxPerOrg: number,
): Promise<ServiceAccount> {
  const { db, org } = scope;
  assertCanGrant(caller.role, input.privilege);
  if ((await serviceAccountsRepository.countInOrg(db, org.id)) >= maxPerOrg) {
    throw new ConflictError(
      `Organization '${org.name}' has reached its limit of ${maxPerOrg} service accounts: delete one before creating another`,
    );
  }
  const row = await serviceAccountsRepository.insert(db, {
    org_id: org.id,
    id: newId(),
    name: input.name,
    description: input.description ?? '',
    privilege: input.privilege,
    display_name: input.display_name ?? null,
    created_by_principal: principalRef(caller.principal),
    created_by_name: caller.principal.name,
  });
  if (!row) {
    throw new BadRequestError(
      `Service account '${input.name}' already exists in organization '${org.name}'`,
      {
        'body.name': 'already exists',
      },
    );
  }
  return presentServiceAccount(row);
}

/** The organization's service accounts. */
export async function listServiceAccounts(scope: OrgScope): Promise<ServiceAccount[]> {
  const { db } = scope;
  const orgId = scope.org.id;
  return (await serviceAccountsRepository.list(db, orgId)).map(presentServiceAccount);
}

/** Changes an account's description, display name or privilege; `changed` when anything was written. */
export async function updateServiceAccount(
  scope: OrgScope,
  caller: AccountCaller,
  name: string,
  input: z.infer<typeof ServiceAccountPatch>,
): Promise<{ account: ServiceAccount; changed: boolean }> {
  const { db } = scope;
  const orgId = scope.org.id;
  const account = await managedServiceAccount(scope, caller, name);
  const patch: { description?: string; privilege?: Role; display_name?: string | null } = {};
  if (input.description !== undefined) {
    patch.description = input.description ?? '';
  }
  if (input.display_name !== undefined) {
    patch.display_name = input.display_name;
  }
  if (input.privilege !== undefined) {
    assertCanGrant(caller.role, input.privilege);
    patch.privilege = input.privilege;
  }
  if (Object.keys(patch).length === 0) {
    return { account: presentServiceAccount(account), changed: false };
  }
  const updated = await serviceAccountsRepository.update(db, orgId, account.id, patch);
  return { account: presentServiceAccount(updated), changed: true };
}

/** Deletes an account and its keys. */
export async function deleteServiceAccount(
  scope: OrgScope,
  caller: AccountCaller,
  name: string,
): Promise<void> {
  const { db } = scope;
  const orgId = scope.org.id;
  const account = await managedServiceAccount(scope, caller, name);
  await serviceAccountsRepository.delete(db, orgId, account.id);
}
