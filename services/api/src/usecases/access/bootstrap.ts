/**
 * First start: an organization and an Admin key, so a fresh install is usable without a UI
 * (semantics.md section 2). Idempotent: a restart changes nothing and prints nothing.
 */
import type { Db } from '../../storage/database.js';
import { apiKeysRepository } from '../../storage/repositories/api-keys.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import { serviceAccountsRepository } from '../../storage/repositories/service-accounts.js';
import { newId } from '../../ids.js';
import { createServiceAccountKey, hashKey } from './api-keys.js';

/** The organization made on an empty database when none is configured. */
export const DEFAULT_BOOTSTRAP_ORG = 'default';
/** The service account that owns bootstrap keys. */
export const BOOTSTRAP_ACCOUNT = 'bootstrap-admin';

export interface BootstrapResult {
  org: string | undefined;
  orgCreated: boolean;
  /** Set when this start created the configured key. */
  configuredKeyCreated: boolean;
  /** Set only when this start generated a key; it must be shown now, it is never shown again. */
  generatedKey?: string;
}

/**
 * Ensures the bootstrap organization, its admin service account and key.
 * With no org configured, an empty database gets the org `default` and a generated key.
 */
export async function ensureBootstrap(
  db: Db,
  input: { orgName: string | undefined; apiKey: string | undefined; now: Date },
): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    let orgName = input.orgName;
    if (!orgName) {
      if (await orgsRepository.any(trx)) {
        return { org: undefined, orgCreated: false, configuredKeyCreated: false };
      }
      orgName = DEFAULT_BOOTSTRAP_ORG;
    }
    const { org, created: orgCreated } = await orgsRepository.ensure(trx, {
      id: newId(),
      name: orgName,
      display_name: orgName,
    });
    const inserted = await serviceAccountsRepository.insert(trx, {
      org_id: org.id,
      id: newId(),
      name: BOOTSTRAP_ACCOUNT,
      description: 'Created at first start from the bootstrap configuration',
      privilege: 'admin',
      created_by_principal: 'system',
      created_by_name: 'system',
    });
    const account = inserted ?? (await serviceAccountsRepository.findByName(trx, org.id, BOOTSTRAP_ACCOUNT));
    if (!account) {
      throw new Error(`bootstrap account '${BOOTSTRAP_ACCOUNT}' vanished`);
    }

    if (input.apiKey) {
      if (await apiKeysRepository.existsByHash(trx, hashKey(input.apiKey))) {
        return { org: orgName, orgCreated, configuredKeyCreated: false };
      }
      await createServiceAccountKey(trx, {
        orgId: org.id,
        serviceAccountId: account.id,
        description: 'bootstrap key (VERITY_BOOTSTRAP_API_KEY)',
        expiresAt: null,
        now: input.now,
        key: input.apiKey,
      });
      return { org: orgName, orgCreated, configuredKeyCreated: true };
    }
    if (!inserted) {
      return { org: orgName, orgCreated, configuredKeyCreated: false };
    }
    const { key } = await createServiceAccountKey(trx, {
      orgId: org.id,
      serviceAccountId: account.id,
      description: 'bootstrap key (generated at first start)',
      expiresAt: null,
      now: input.now,
    });
    return { org: orgName, orgCreated, configuredKeyCreated: false, generatedKey: key };
  });
}
