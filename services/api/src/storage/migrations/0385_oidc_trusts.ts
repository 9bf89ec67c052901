/**
 * Keyless CI: the OIDC ID-token issuers a service account trusts, with the audience and the claim
 * patterns a token must carry. Looked up per request by organization and issuer (the index), so
 * nothing is cached and a change holds at once on every replica. A trust goes with its account.
 * Frozen once shipped.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table oidc_trusts (
      org_id text not null references orgs(id) on delete cascade,
      service_account_id text not null,
      name text not null,
      issuer text not null,
      audience text not null,
      claims jsonb not null,
      created_by_name text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint oidc_trusts_pk primary key (org_id, service_account_id, name),
      constraint oidc_trusts_service_account_fk foreign key (org_id, service_account_id)
        references service_accounts (org_id, id) on delete cascade
    )
  `.execute(db);
  await sql`create index oidc_trusts_org_issuer_idx on oidc_trusts (org_id, issuer)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table oidc_trusts`.execute(db);
}
