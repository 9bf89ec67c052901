/** Who is calling, as the auth plugin resolved it from the API key or a CI job's OIDC ID token. */
import type { Role } from '../../domain/roles.js';
import type { RequestOrg } from '../scope/org-scope.js';

export interface Principal {
  kind: 'service_account' | 'user';
  /** Service account id or user id. */
  id: string;
  /** Service account or user name, as `created_by` fields show it. */
  name: string;
  /** The API key, or `session:<id>` for a person signed in through the identity provider. */
  keyId: string;
  /** A person's e-mail, as the identity provider gave it. */
  email?: string;
  /** Service accounts only: their organization and privilege. */
  homeOrg?: RequestOrg;
  privilege?: Role;
  /** A service account acting through an OIDC ID token: the token's `sub`. */
  subject?: string;
  /** A service account acting through an OIDC ID token: the name of the trust it matched. */
  trust?: string;
}

/** The stable reference stored in `created_by_principal` columns. */
export function principalRef(p: Pick<Principal, 'kind' | 'id'>): string {
  return `${p.kind}:${p.id}`;
}
