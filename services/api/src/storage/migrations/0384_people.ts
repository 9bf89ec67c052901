/**
 * People who sign in through the organization's identity provider, their sessions, sign-ins
 * under way, and the audit log of every write. Frozen once shipped.
 *
 * - `users.oidc_issuer`/`oidc_subject`: the person's identity at the provider (unique together);
 *   `display_name` is what `created_by` fields show; `last_sign_in_at` what the members page shows.
 * - `memberships.source`: `oidc` memberships are replaced from the groups at each sign-in;
 *   `admin` ones (the admin command) are left alone.
 * - `sessions`: the server side of the session cookie; only the cookie value's SHA-256 is kept.
 * - `oidc_logins`: a sign-in between the redirect to the provider and its callback, keyed by the
 *   SHA-256 of `state`, holding the PKCE verifier and nonce; used once, kept 10 minutes.
 * - `audit_log`: one row per write through the API and per sign-in, in each organization.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column oidc_issuer text`.execute(db);
  await sql`alter table users add column oidc_subject text`.execute(db);
  await sql`alter table users add column display_name text`.execute(db);
  await sql`alter table users add column last_sign_in_at timestamptz`.execute(db);
  await sql`create unique index users_oidc_identity on users (oidc_issuer, oidc_subject) where oidc_subject is not null`.execute(
    db,
  );
  await sql`alter table memberships add column source text not null default 'admin' check (source in ('admin','oidc'))`.execute(
    db,
  );

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ip', 'text')
    .execute();
  await sql`create index sessions_user on sessions (user_id)`.execute(db);
  await sql`create index sessions_expiry on sessions (expires_at)`.execute(db);

  await db.schema
    .createTable('oidc_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index oidc_logins_age on oidc_logins (created_at)`.execute(db);

  await db.schema
    .createTable('audit_log')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('id', 'bigserial', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('actor_email', 'text')
    .addColumn('actor_subject', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addPrimaryKeyConstraint('audit_log_pk', ['org_id', 'id'])
    .execute();
  await sql`create index audit_log_org_at on audit_log (org_id, at desc, id desc)`.execute(db);
  // The audit log's filters (who, what) answer from an index, however long the organization's log.
  await sql`create index audit_log_org_actor on audit_log (org_id, actor_name, at desc, id desc)`.execute(db);
  await sql`create index audit_log_org_email on audit_log (org_id, actor_email, at desc, id desc)`.execute(
    db,
  );
  await sql`create index audit_log_org_action on audit_log (org_id, action, at desc, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
  await sql`drop table oidc_logins`.execute(db);
  await sql`drop table sessions`.execute(db);
  await sql`alter table memberships drop column source`.execute(db);
  await sql`drop index users_oidc_identity`.execute(db);
  for (const c of ['last_sign_in_at', 'display_name', 'oidc_subject', 'oidc_issuer']) {
    await sql`alter table users drop column ${sql.raw(c)}`.execute(db);
  }
}
