/**
 * Table types of organizations, users, memberships, service accounts and API keys.
 * Users and API keys are the only tables without a leading org_id: a personal key spans
 * the orgs its user belongs to, so it is found by its hash before any org is known.
 */
import type { ColumnType, Generated } from 'kysely';

export interface OrgsTable {
  id: string;
  name: string;
  display_name: string;
  experimental_features_enabled: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface UsersTable {
  id: string;
  name: string;
  email: string | null;
  default_org_id: string | null;
  created_at: Generated<Date>;
  /** A person signed in through the identity provider: issuer and subject (migration 0384). */
  oidc_issuer: string | null;
  oidc_subject: string | null;
  /** The person's name as the provider gives it; null shows `name`. */
  display_name: string | null;
  last_sign_in_at: Date | null;
}

export type Role = 'admin' | 'member' | 'snapshotter' | 'reader';

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role: Role;
  created_at: Generated<Date>;
  /** `oidc`: from the person's groups, replaced at each sign-in; `admin`: set by an admin. */
  source: Generated<'admin' | 'oidc'>;
}

export interface ServiceAccountsTable {
  org_id: string;
  id: string;
  name: string;
  description: string;
  privilege: Role;
  /** `user:<id>`, `service_account:<id>` or `system`: who may manage it besides admins. */
  created_by_principal: string;
  created_by_name: string;
  created_at: Generated<Date>;
  /** Given on create or update; null shows `name` (migration 0360). */
  display_name: string | null;
}

export interface ApiKeysTable {
  id: string;
  /** sha256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** Set for service-account keys. */
  org_id: string | null;
  service_account_id: string | null;
  /** Set for personal keys. */
  user_id: string | null;
  description: string;
  created_at: Generated<Date>;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** The key this one replaced by rotation. */
  rotated_from: string | null;
}

/** An OIDC ID-token issuer a service account trusts (migration 0385). */
export interface OidcTrustsTable {
  org_id: string;
  service_account_id: string;
  name: string;
  /** Compared with the token's `iss` exactly. */
  issuer: string;
  audience: string;
  /** Claim name to pattern: the exact value, or a prefix ending in `*`. */
  claims: ColumnType<Record<string, string>, string, string>;
  created_by_name: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface IdentityTables {
  orgs: OrgsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  service_accounts: ServiceAccountsTable;
  api_keys: ApiKeysTable;
  oidc_trusts: OidcTrustsTable;
}
