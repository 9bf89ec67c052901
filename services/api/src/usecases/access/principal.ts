/** Who is calling, as the auth plugin resolved it from the API key. */
import type { Role } from '../../domain/roles.js';
import type { RequestOrg } from '../scope/org-scope.js';

export interface Principal {
  kind: 'service_account' | 'user';
  /** Service account id or user id. */
  id: string;
  /** Service account or user name, as `created_by` fields show it. */
  name: string;
  keyId: string;
  /** Service accounts only: their organization and privilege. */
  homeOrg?: RequestOrg;
  privilege?: Role;
}

/** The stable reference stored in `created_by_principal` columns. */
export function principalRef(p: Pick<Principal, 'kind' | 'id'>): string {
  return `${p.kind}:${p.id}`;
}
