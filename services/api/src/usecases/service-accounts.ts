/**
 * Service-account rules: admins manage all accounts, snapshotters and members only those they
 * created, and nobody creates or raises an account above their own role.
 */
import type { ServiceAccount } from '../../../shared/contract/service-accounts.js';
import { canGrant, roleAllows, type Role } from '../domain/roles.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { epochSeconds } from '../ids.js';
import type { Db } from '../storage/database.js';
import {
  serviceAccountsRepository,
  type ServiceAccountRow,
} from '../storage/repositories/service-accounts.js';
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
export async function getServiceAccount(db: Db, orgId: string, name: string): Promise<ServiceAccountRow> {
  const row = await serviceAccountsRepository.findByName(db, orgId, name);
  if (!row) throw new NotFoundError('Service account not found');
  return row;
}

/**
 * Throws unless the caller may change this account (or its keys): `service-account:manage`, or
 * the account's creator whose current role still reaches the account's current privilege, so a
 * creator later demoted, or whose account was later raised, cannot mint keys above its role.
 */
export function assertCanManage(principal: Principal, role: Role, account: ServiceAccountRow): void {
  if (roleAllows(role, 'service-account:manage')) return;
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
