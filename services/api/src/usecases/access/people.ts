/**
 * People: the end of a sign-in through the identity provider (the person's record, roles from
 * groups, a session, audit entries), who a caller is, and an organization's members.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rolesFromGroups, type GroupRoleMap, type Role } from '../../domain/roles.js';
import { newId } from '../../ids.js';
import type { Db } from '../../storage/database.js';
import { auditLogRepository } from '../../storage/repositories/audit-log.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import { peopleRepository } from '../../storage/repositories/people.js';
import { epochSeconds } from '../../time.js';
import type { OrgScope } from '../scope/org-scope.js';
import type { Principal } from './principal.js';

/** Groups read from one token at most; a provider sending more is cut here, not trusted to be small. */
export const MAX_GROUPS = 1000;

/** The SHA-256 (hex) under which a session or sign-in value is stored. */
export function secretHash(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A new random value for a cookie: 256 bits, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The groups claim as a list of strings: an array, one string, or nothing. */
export function groupsOf(claim: unknown): string[] {
  const list = Array.isArray(claim) ? claim : typeof claim === 'string' ? [claim] : [];
  return list.filter((g): g is string => typeof g === 'string' && g.length <= 256).slice(0, MAX_GROUPS);
}

export interface SignInClaims {
  sub: string;
  name?: unknown;
  preferred_username?: unknown;
  email?: unknown;
  groups: string[];
}

export interface SignInRequest {
  issuer: string;
  claims: SignInClaims;
  groupRoles: GroupRoleMap;
  now: Date;
  sessionMaxMs: number;
  ip: string | null;
  requestId: string | null;
}

export type SignInOutcome =
  | { ok: true; session: string; person: { name: string; email: string | null }; organizations: string[] }
  | { ok: false; reason: 'no_access'; person: { name: string; email: string | null }; groups: string[] };

const text = (v: unknown, max = 256): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : undefined;

/** A unique handle for a new person: their username or e-mail, made unique with a suffix. */
async function freeName(db: Db, base: string): Promise<string> {
  const clean = base.replace(/[^A-Za-z0-9._@-]/g, '-').slice(0, 100) || 'person';
  for (let i = 1; i <= 20; i += 1) {
    const name = i === 1 ? clean : `${clean}-${i}`;
    if (!(await peopleRepository.nameTaken(db, name))) {
      return name;
    }
  }
  return `${clean}-${randomBytes(4).toString('hex')}`;
}

/**
 * Ends a sign-in: finds or creates the person by issuer and subject, reads their roles again
 * from their groups, opens a session and writes a `signIn` audit entry in each organization.
 * A person whose groups give no role in an existing organization gets no session.
 */
export async function completeSignIn(db: Db, req: SignInRequest): Promise<SignInOutcome> {
  const { claims, now } = req;
  const displayName =
    text(claims.name) ?? text(claims.preferred_username) ?? text(claims.email) ?? claims.sub;
  const email = text(claims.email, 320) ?? null;
  const wanted = rolesFromGroups(req.groupRoles, claims.groups);
  const orgs = await orgsRepository.findByNames(db, [...wanted.keys()]);
  const roles = new Map<string, Role>();
  for (const org of orgs) {
    roles.set(org.id, wanted.get(org.name) as Role);
  }
  const person = { name: displayName, email };
  if (roles.size === 0) {
    return { ok: false, reason: 'no_access', person, groups: claims.groups };
  }
  return db.transaction().execute(async (trx) => {
    let user = await peopleRepository.findByIdentity(trx, req.issuer, claims.sub);
    if (!user) {
      const id = newId(now.getTime());
      const name = await freeName(trx, text(claims.preferred_username) ?? email ?? claims.sub);
      await peopleRepository.insertPerson(trx, {
        id,
        name,
        email,
        issuer: req.issuer,
        subject: claims.sub,
        displayName,
      });
      user = await peopleRepository.findByIdentity(trx, req.issuer, claims.sub);
    }
    const userId = user?.id as string;
    await peopleRepository.recordSignIn(trx, userId, email, displayName, now);
    await peopleRepository.replaceGroupMemberships(trx, userId, roles);
    const session = newSecret();
    await peopleRepository.insertSession(trx, {
      id_hash: secretHash(session),
      user_id: userId,
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + req.sessionMaxMs),
      ip: req.ip,
    });
    await auditLogRepository.insert(
      trx,
      orgs.map((org) => ({
        org_id: org.id,
        at: now,
        actor_kind: 'user' as const,
        actor_name: displayName,
        actor_email: email,
        actor_subject: null,
        action: 'signIn',
        resource: `/auth/oidc/callback`,
        request_id: req.requestId,
        ip: req.ip,
      })),
    );
    return { ok: true as const, session, person, organizations: orgs.map((o) => o.name) };
  });
}

export interface Me {
  kind: 'user' | 'service_account';
  name: string;
  email: string | null;
  organizations: { org: string; role: Role }[];
}

/** Who the caller is, and where they may go with which role. */
export async function whoAmI(db: Db, principal: Principal): Promise<Me> {
  if (principal.kind === 'service_account') {
    return {
      kind: 'service_account',
      name: principal.name,
      email: null,
      organizations: principal.homeOrg
        ? [{ org: principal.homeOrg.name, role: principal.privilege ?? 'reader' }]
        : [],
    };
  }
  return {
    kind: 'user',
    name: principal.name,
    email: principal.email ?? null,
    organizations: await peopleRepository.memberships(db, principal.id),
  };
}

/** The people of the organization: their role, where it comes from, and their last sign-in. */
export async function listMembers(scope: OrgScope) {
  const rows = await peopleRepository.members(scope.db, scope.org.id);
  return rows.map((r) => ({
    name: r.name,
    display_name: r.display_name ?? r.name,
    email: r.email,
    role: r.role,
    source: r.source,
    signs_in_with: r.oidc_subject === null ? ('api_key' as const) : ('identity_provider' as const),
    last_sign_in_at: r.last_sign_in_at === null ? null : epochSeconds(r.last_sign_in_at),
  }));
}
