/** Table types of sessions, sign-ins under way and the audit log (migration 0384). */
import type { Generated } from 'kysely';

export interface SessionsTable {
  /** sha256 of the cookie value, hex. The value itself is never stored. */
  id_hash: string;
  user_id: string;
  created_at: Date;
  last_seen_at: Date;
  /** The absolute end: created_at plus the session's maximum age. */
  expires_at: Date;
  ip: string | null;
}

export interface OidcLoginsTable {
  /** sha256 of the `state` sent to the provider, hex. */
  state_hash: string;
  code_verifier: string;
  nonce: string;
  /** A console path on this origin. */
  return_to: string;
  created_at: Date;
}

/** `system`: a job of the server itself (the retention job). */
export type ActorKind = 'user' | 'service_account' | 'system';

export interface AuditLogTable {
  org_id: string;
  /** bigserial: the order entries were written in. */
  id: Generated<string>;
  at: Date;
  actor_kind: ActorKind;
  actor_name: string;
  actor_email: string | null;
  /** The subject of the CI token a federated service account acted with. */
  actor_subject: string | null;
  /** The API operation (`createFlow`, ...) or `signIn`. */
  action: string;
  /** The path written to. */
  resource: string;
  request_id: string | null;
  ip: string | null;
}

export interface PeopleTables {
  sessions: SessionsTable;
  oidc_logins: OidcLoginsTable;
  audit_log: AuditLogTable;
}
