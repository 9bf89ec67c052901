/** Who is calling, as the auth plugin resolved it from the API key. */
import type { Role } from '../domain/roles.js';

/** The organization a request is scoped to (the `{org}` path segment). */
export interface OrgContext {
  id: string;
  name: string;
  experimentalFeaturesEnabled: boolean;
}

export interface Principal {
  kind: 'service_account' | 'user';
  /** Service account id or user id. */
  id: string;
  /** Service account or user name, as `created_by` fields show it. */
  name: string;
  keyId: string;
  /** Service accounts only: their organization and privilege. */
  homeOrg?: OrgContext;
  privilege?: Role;
}

/** The stable reference stored in `created_by_principal` columns. */
export function principalRef(p: Pick<Principal, 'kind' | 'id'>): string {
  return `${p.kind}:${p.id}`;
}
