/** API keys: found by the hash of the presented key; the key itself is never stored. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { ApiKeysTable, Role } from '../tables/identity.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** A key with what authentication needs about its owner, in one query. */
export interface ApiKeyWithOwner extends ApiKeyRow {
  sa_name: string | null;
  sa_privilege: Role | null;
  org_name: string | null;
  org_experimental_features_enabled: boolean | null;
  user_name: string | null;
}

export const apiKeysRepository = {
  async findByHash(db: Db, keyHash: string): Promise<ApiKeyWithOwner | undefined> {
    return db
      .selectFrom('api_keys')
      .leftJoin('service_accounts', (j) =>
        j
          .onRef('service_accounts.org_id', '=', 'api_keys.org_id')
          .onRef('service_accounts.id', '=', 'api_keys.service_account_id'),
      )
      .leftJoin('orgs', 'orgs.id', 'api_keys.org_id')
      .leftJoin('users', 'users.id', 'api_keys.user_id')
      .selectAll('api_keys')
      .select([
        'service_accounts.name as sa_name',
        'service_accounts.privilege as sa_privilege',
        'orgs.name as org_name',
        'orgs.experimental_features_enabled as org_experimental_features_enabled',
        'users.name as user_name',
      ])
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst();
  },

  /** Whether a key with this hash exists, revoked or not. */
  async existsByHash(db: Db, keyHash: string): Promise<boolean> {
    const row = await db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return row !== undefined;
  },

  async insert(
    db: Db,
    row: Omit<ApiKeyRow, 'created_at' | 'last_used_at' | 'revoked_at'> & { created_at?: Date },
  ): Promise<ApiKeyRow> {
    return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** Service-account keys of the organization that still work at `now`. */
  async countActiveInOrg(db: Db, orgId: string, now: Date): Promise<number> {
    const row = await db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Keys of a service account that still work at `now` (not revoked, not expired). */
  async listActiveForServiceAccount(
    db: Db,
    orgId: string,
    serviceAccountId: string,
    now: Date,
  ): Promise<ApiKeyRow[]> {
    return db
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('service_account_id', '=', serviceAccountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at')
      .execute();
  },

  async findForServiceAccount(
    db: Db,
    orgId: string,
    serviceAccountId: string,
    keyId: string,
  ): Promise<ApiKeyRow | undefined> {
    return db
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('service_account_id', '=', serviceAccountId)
      .where('id', '=', keyId)
      .executeTakeFirst();
  },

  /** Revokes a live key; returns false when it was already revoked or absent. */
  async revoke(db: Db, keyId: string, at: Date): Promise<boolean> {
    const result = await db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  async setExpiry(db: Db, keyId: string, expiresAt: Date): Promise<void> {
    await db.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', keyId).execute();
  },

  /** Records a use at `at`, unless a later one is recorded already (another replica's). */
  async touchLastUsed(db: Db, keyId: string, at: Date): Promise<void> {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  },
};
