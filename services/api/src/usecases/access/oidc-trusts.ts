/**
 * The OIDC issuers a service account trusts (keyless CI): created, replaced, read and removed by
 * admins. A CI job's ID token matching one acts as the account (`oidc-federation.ts`).
 */
import type { OidcTrust, OidcTrustPut } from '../../../../shared/contract/oidc-trusts.js';
import { claimsProblem, issuerSchemeAllowed, OIDC_TRUST_LIMITS } from '../../domain/oidc-trust.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import { oidcTrustsRepository, type OidcTrustRow } from '../../storage/repositories/oidc-trusts.js';
import { epochSeconds } from '../../time.js';
import { transact, type OrgScope } from '../scope/org-scope.js';
import { getServiceAccount } from './service-accounts.js';

/** Which account's trusts, in which organization's scope. */
export interface TrustScope extends OrgScope {
  account: string;
  /** Issuers allowed over plain http (VERITY_OIDC_INSECURE_ISSUERS). */
  insecureIssuers: readonly string[];
}

function presentTrust(row: OidcTrustRow, account: string): OidcTrust {
  const claims: Record<string, string> = {};
  for (const name of Object.keys(row.claims).sort()) {
    claims[name] = row.claims[name]!;
  }
  return {
    name: row.name,
    service_account: account,
    issuer: row.issuer,
    audience: row.audience,
    claims,
    created_at: epochSeconds(row.created_at),
    updated_at: epochSeconds(row.updated_at),
    created_by: row.created_by_name,
  };
}

/** 400 unless the issuer is https (or allowed over http) and the claims pin something. */
function assertUsable(scope: TrustScope, input: OidcTrustPut): void {
  if (!issuerSchemeAllowed(input.issuer, scope.insecureIssuers)) {
    throw new BadRequestError('Input payload validation failed', {
      'body.issuer':
        'must be an https URL without credentials, query or fragment (http only for issuers listed in VERITY_OIDC_INSECURE_ISSUERS)',
    });
  }
  const problem = claimsProblem(input.claims);
  if (problem) {
    throw new BadRequestError('Input payload validation failed', { 'body.claims': problem });
  }
}

/** 409 when one more trust would pass the account's or the organization's bound. */
async function assertRoomForTrust(scope: TrustScope, accountId: string): Promise<void> {
  const counts = await oidcTrustsRepository.counts(scope.db, scope.org.id, accountId);
  if (counts.account >= OIDC_TRUST_LIMITS.maxPerServiceAccount) {
    throw new ConflictError(
      `Service account '${scope.account}' has reached its limit of ${OIDC_TRUST_LIMITS.maxPerServiceAccount} OIDC trusts: delete one before creating another`,
    );
  }
  if (counts.org >= OIDC_TRUST_LIMITS.maxPerOrganization) {
    throw new ConflictError(
      `Organization '${scope.org.name}' has reached its limit of ${OIDC_TRUST_LIMITS.maxPerOrganization} OIDC trusts: delete one before creating another`,
    );
  }
}

/** Creates the trust (`created`) or replaces what it requires; 404 when the account does not exist. */
export async function putOidcTrust(
  scope: TrustScope,
  name: string,
  input: OidcTrustPut,
): Promise<{ trust: OidcTrust; created: boolean }> {
  assertUsable(scope, input);
  return transact(scope, async (tx) => {
    const account = await getServiceAccount(tx, scope.account);
    const key = { orgId: tx.org.id, accountId: account.id, name };
    const replaced = await oidcTrustsRepository.replace(tx.db, key, input, tx.now);
    if (replaced) {
      return { trust: presentTrust(replaced, account.name), created: false };
    }
    await assertRoomForTrust({ ...scope, db: tx.db }, account.id);
    const inserted = await oidcTrustsRepository.insert(
      tx.db,
      key,
      { ...input, created_by_name: tx.actor },
      tx.now,
    );
    if (!inserted) {
      // A concurrent PUT created it between the two statements.
      throw new ConflictError();
    }
    return { trust: presentTrust(inserted, account.name), created: true };
  });
}

/** The account's trusts, by name. */
export async function listOidcTrusts(scope: TrustScope): Promise<OidcTrust[]> {
  const account = await getServiceAccount(scope, scope.account);
  const rows = await oidcTrustsRepository.list(scope.db, scope.org.id, account.id);
  return rows.map((row) => presentTrust(row, account.name));
}

/** One trust; 404 when the account or the trust does not exist. */
export async function getOidcTrust(scope: TrustScope, name: string): Promise<OidcTrust> {
  const account = await getServiceAccount(scope, scope.account);
  const row = await oidcTrustsRepository.find(scope.db, scope.org.id, account.id, name);
  if (!row) {
    throw new NotFoundError('OIDC trust not found');
  }
  return presentTrust(row, account.name);
}

/** Removes a trust at once: the next token matching only it is refused. 404 when there is none. */
export async function deleteOidcTrust(scope: TrustScope, name: string): Promise<void> {
  const account = await getServiceAccount(scope, scope.account);
  if (!(await oidcTrustsRepository.delete(scope.db, scope.org.id, account.id, name))) {
    throw new NotFoundError('OIDC trust not found');
  }
}
