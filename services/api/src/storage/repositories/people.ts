/** People signed in through the identity provider: their records, sessions and sign-ins under way. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.js';
import type { Role } from '../tables/identity.js';
import type { SessionsTable } from '../tables/people.js';

export type SessionRow = Selectable<SessionsTable>;

/** A session with what authentication needs about its person. */
export interface SessionWithUser extends SessionRow {
  user_name: string;
  display_name: string | null;
  email: string | null;
}

export const peopleRepository = {
  async findByIdentity(db: Db, issuer: string, subject: string) {
    return db
      .selectFrom('users')
      .selectAll()
      .where('oidc_issuer', '=', issuer)
      .where('oidc_subject', '=', subject)
      .executeTakeFirst();
  },

  /** Whether a user already has this name (names are unique handles). */
  async nameTaken(db: Db, name: string): Promise<boolean> {
    const row = await db.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst();
    return row !== undefined;
  },

  async insertPerson(
    db: Db,
    person: {
      id: string;
      name: string;
      email: string | null;
      issuer: string;
      subject: string;
      displayName: string;
    },
  ): Promise<void> {
    await db
      .insertInto('users')
      .values({
        id: person.id,
        name: person.name,
        email: person.email,
        default_org_id: null,
        oidc_issuer: person.issuer,
        oidc_subject: person.subject,
        display_name: person.displayName,
      })
      .execute();
  },

  async recordSignIn(
    db: Db,
    userId: string,
    email: string | null,
    displayName: string,
    at: Date,
  ): Promise<void> {
    await db
      .updateTable('users')
      .set({ email, display_name: displayName, last_sign_in_at: at })
      .where('id', '=', userId)
      .execute();
  },

  /**
   * Replaces the memberships that came from groups with `roles` (organization id to role);
   * memberships an admin set are left alone unless the groups name the same organization.
   */
  async replaceGroupMemberships(db: Db, userId: string, roles: ReadonlyMap<string, Role>): Promise<void> {
    await db.deleteFrom('memberships').where('user_id', '=', userId).where('source', '=', 'oidc').execute();
    if (roles.size === 0) {
      return;
    }
    await db
      .insertInto('memberships')
      .values(
        [...roles].map(([orgId, role]) => ({
          org_id: orgId,
          user_id: userId,
          role,
          source: 'oidc' as const,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['org_id', 'user_id']).doUpdateSet((eb) => ({
          role: eb.ref('excluded.role'),
          source: eb.ref('excluded.source'),
        })),
      )
      .execute();
  },

  /** The organizations (with role) a user belongs to, by name. */
  async memberships(db: Db, userId: string): Promise<{ org: string; role: Role }[]> {
    return db
      .selectFrom('memberships')
      .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
      .select(['orgs.name as org', 'memberships.role'])
      .where('memberships.user_id', '=', userId)
      .orderBy('orgs.name')
      .execute();
  },

  /** The people of an organization with their role and last sign-in. */
  async members(db: Db, orgId: string) {
    return db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select([
        'users.name',
        'users.display_name',
        'users.email',
        'users.last_sign_in_at',
        'users.oidc_subject',
        'memberships.role',
        'memberships.source',
      ])
      .where('memberships.org_id', '=', orgId)
      .orderBy('users.name')
      .execute();
  },

  async insertSession(db: Db, row: SessionRow): Promise<void> {
    await db.insertInto('sessions').values(row).execute();
  },

  async findSession(db: Db, idHash: string): Promise<SessionWithUser | undefined> {
    return db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('sessions')
      .select(['users.name as user_name', 'users.display_name', 'users.email'])
      .where('sessions.id_hash', '=', idHash)
      .executeTakeFirst();
  },

  async touchSession(db: Db, idHash: string, at: Date): Promise<void> {
    await db.updateTable('sessions').set({ last_seen_at: at }).where('id_hash', '=', idHash).execute();
  },

  async deleteSession(db: Db, idHash: string): Promise<void> {
    await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  },

  /** Removes sessions past their absolute end or idle too long, and sign-ins never finished. */
  async sweep(db: Db, now: Date, idleMs: number, loginMaxAgeMs: number): Promise<void> {
    await db
      .deleteFrom('sessions')
      .where((eb) =>
        eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', new Date(now.getTime() - idleMs))]),
      )
      .execute();
    await db
      .deleteFrom('oidc_logins')
      .where('created_at', '<=', new Date(now.getTime() - loginMaxAgeMs))
      .execute();
  },

  async insertLogin(
    db: Db,
    row: { state_hash: string; code_verifier: string; nonce: string; return_to: string; created_at: Date },
  ): Promise<void> {
    await db.insertInto('oidc_logins').values(row).execute();
  },

  /** Takes a sign-in under way: it can be used once. */
  async takeLogin(db: Db, stateHash: string) {
    return db.deleteFrom('oidc_logins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
  },
};
