/** The organization as the interface shows it, its beta switch, and a caller's default organization. */
import type { z } from 'zod';
import type { Organization } from '../../../../shared/contract/organizations.js';
import { NotFoundError } from '../../errors.js';
import type { Db } from '../../storage/database.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import { usersRepository } from '../../storage/repositories/users.js';
import { epochSeconds } from '../../time.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { Principal } from './principal.js';

/** The organization's record. */
export async function readOrganization(scope: OrgScope): Promise<z.infer<typeof Organization>> {
  const { db, org } = scope;
  const row = await orgsRepository.findById(db, org.id);
  if (!row) {
    throw new NotFoundError(`Organization '${org.name}' does not exist`);
  }
  return {
    name: row.name,
    display_name: row.display_name,
    experimental_features_enabled: row.experimental_features_enabled,
    created_at: epochSeconds(row.created_at),
  };
}

/** Turns the organization's beta features on or off. */
export async function setExperimentalFeatures(scope: OrgScope, enabled: boolean): Promise<void> {
  const { db } = scope;
  const orgId = scope.org.id;
  await orgsRepository.setExperimentalFeatures(db, orgId, enabled);
}

/** The name of the caller's default organization: a service account's is its own. */
export async function defaultOrgName(db: Db, principal: Principal): Promise<string | null> {
  if (principal.kind === 'service_account') {
    return principal.homeOrg?.name ?? null;
  }
  const user = await usersRepository.findById(db, principal.id);
  const org = user?.default_org_id ? await orgsRepository.findById(db, user.default_org_id) : undefined;
  return org?.name ?? null;
}

/** Makes the organization the caller's default; a service account's is already its own. */
export async function setDefaultOrg(scope: OrgScope, principal: Principal): Promise<void> {
  const { db } = scope;
  const orgId = scope.org.id;
  if (principal.kind === 'user') {
    await usersRepository.setDefaultOrg(db, principal.id, orgId);
  }
}
