/** The OIDC issuers service accounts trust (keyless CI, migration 0385). */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { OidcTrustsTable, Role } from '../tables/identity.js';
import { toJsonNotNull } from './json.js';

export type OidcTrustRow = Selectable<OidcTrustsTable>;

/** A trust with what a token matching it acts as: its account and that account's organization. */
export interface OidcTrustCandidate extends OidcTrustRow {
  account_name: string;
  account_privilege: Role;
  org_name: string;
  org_experimental_features_enabled: boolean;
}

/** The fields a PUT writes. */
export interface OidcTrustWrite {
  issuer: string;
  audience: string;
  claims: Record<string, string>;
  created_by_name: string;
}

const trustsOf = (db: Db, orgId: string, accountId: string) =>
  db
    .selectFrom('oidc_trusts')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('service_account_id', '=', accountId);

export const oidcTrustsRepository = {
  async list(db: Db, orgId: string, accountId: string): Promise<OidcTrustRow[]> {
    return trustsOf(db, orgId, accountId).orderBy('name').execute();
  },

  async find(db: Db, orgId: string, accountId: string, name: string): Promise<OidcTrustRow | undefined> {
    return trustsOf(db, orgId, accountId).where('name', '=', name).executeTakeFirst();
  },

  /** Trusts of the account, and of the whole organization. */
  async counts(db: Db, orgId: string, accountId: string): Promise<{ account: number; org: number }> {
    const row = await db
      .selectFrom('oidc_trusts')
      .select((eb) => [
        eb.fn.countAll<number>().as('org'),
        eb.fn.count<number>(eb.case().when('service_account_id', '=', accountId).then(1).end()).as('account'),
      ])
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return { account: Number(row.account), org: Number(row.org) };
  },

  /** Inserts; undefined when the account already has a trust of that name. */
  async insert(
    db: Db,
    key: { orgId: string; accountId: string; name: string },
    write: OidcTrustWrite,
    now: Date,
  ): Promise<OidcTrustRow | undefined> {
    return db
      .insertInto('oidc_trusts')
      .values({
        org_id: key.orgId,
        service_account_id: key.accountId,
        name: key.name,
        issuer: write.issuer,
        audience: write.audience,
        claims: toJsonNotNull(write.claims),
        created_by_name: write.created_by_name,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(['org_id', 'service_account_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  /** Replaces what a trust requires; its creation stays. Undefined when it is gone. */
  async replace(
    db: Db,
    key: { orgId: string; accountId: string; name: string },
    write: Omit<OidcTrustWrite, 'created_by_name'>,
    now: Date,
  ): Promise<OidcTrustRow | undefined> {
    return db
      .updateTable('oidc_trusts')
      .set({
        issuer: write.issuer,
        audience: write.audience,
        claims: toJsonNotNull(write.claims),
        updated_at: now,
      })
      .where('org_id', '=', key.orgId)
      .where('service_account_id', '=', key.accountId)
      .where('name', '=', key.name)
      .returningAll()
      .executeTakeFirst();
  },

  /** True when a trust was deleted. */
  async delete(db: Db, orgId: string, accountId: string, name: string): Promise<boolean> {
    const result = await db
      .deleteFrom('oidc_trusts')
      .where('org_id', '=', orgId)
      .where('service_account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /**
   * The trusts of an issuer in the organization named `orgName`, with their accounts: what a
   * token of that issuer may act as there. At most the organization's bound of trusts.
   */
  async candidates(db: Db, orgName: string, issuer: string): Promise<OidcTrustCandidate[]> {
    return db
      .selectFrom('oidc_trusts as t')
      .innerJoin('orgs as o', 'o.id', 't.org_id')
      .innerJoin('service_accounts as a', (join) =>
        join.onRef('a.org_id', '=', 't.org_id').onRef('a.id', '=', 't.service_account_id'),
      )
      .selectAll('t')
      .select([
        'a.name as account_name',
        'a.privilege as account_privilege',
        'o.name as org_name',
        'o.experimental_features_enabled as org_experimental_features_enabled',
      ])
      .where('o.name', '=', orgName)
      .where('t.issuer', '=', issuer)
      .orderBy('a.name')
      .orderBy('t.name')
      .execute();
  },
};
