/**
 * Authentication and authorization for every `/api/v2` route (semantics.md section 2).
 * Bearer keys everywhere; HTTP Basic only where a route allows it (endpoint 1); a person's session
 * cookie (plugins/people.ts) when no Authorization header is sent. A route declares
 * `config.auth`: `'public'` or the permission it needs; a route that declares nothing does not start.
 * A key never reaches another organization: such requests get 403 before any handler runs.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { isReadMethod, PERMISSIONS, roleAllows, type Permission, type Role } from '../domain/roles.js';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '../errors.js';
import { isDatabaseUnavailable } from '../storage/errors.js';
import { apiKeysRepository, type ApiKeyWithOwner } from '../storage/repositories/api-keys.js';
import { usersRepository } from '../storage/repositories/users.js';
import { hashKey, hashesEqual } from '../usecases/access/api-keys.js';
import type { RequestOrg } from '../usecases/scope/org-scope.js';
import type { Principal } from '../usecases/access/principal.js';

export type RouteAuth = 'public' | { permission: Permission; basic?: boolean };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | null;
    org: RequestOrg | null;
    role: Role | null;
  }
}

/** How often `last_used_at` is written for one key: once a minute is precise enough. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The organization of an org-scoped request; throws if the route has none. */
export function requireOrg(request: FastifyRequest): RequestOrg {
  if (!request.org) {
    throw new Error(`route ${request.routeOptions.url} has no organization context`);
  }
  return request.org;
}

/** The authenticated caller; throws on a public route. */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) {
    throw new Error(`route ${request.routeOptions.url} is not authenticated`);
  }
  return request.principal;
}

/** The organization of an org-scoped request, as use cases take it. */
export function orgRef(request: FastifyRequest): { id: string; name: string } {
  const org = requireOrg(request);
  return { id: org.id, name: org.name };
}

/** The caller's role in the request's organization. */
export function requireRole(request: FastifyRequest): Role {
  if (!request.role) {
    throw new Error(`route ${request.routeOptions.url} has no role context`);
  }
  return request.role;
}

/** Candidate keys in an Authorization header: the bearer token, or Basic username then password. */
function presentedKeys(header: string | undefined, allowBasic: boolean): string[] {
  if (!header) {
    return [];
  }
  const [scheme, ...rest] = header.trim().split(/\s+/);
  const value = rest.join(' ');
  if (!scheme || !value) {
    return [];
  }
  if (scheme.toLowerCase() === 'bearer') {
    return [value];
  }
  if (scheme.toLowerCase() === 'basic' && allowBasic) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = colon >= 0 ? decoded.slice(0, colon) : decoded;
    const pass = colon >= 0 ? decoded.slice(colon + 1) : '';
    return [user, pass].filter((k) => k.length > 0);
  }
  return [];
}

/** Refuses to register an `/api/v2` route whose `config.auth` is missing or inconsistent. */
function checkRouteAuth(route: RouteOptions): void {
  if (!route.url.startsWith('/api/v2')) {
    return;
  }
  const auth = route.config?.auth;
  if (auth === undefined) {
    throw new Error(`Route ${String(route.method)} ${route.url} declares no config.auth`);
  }
  if (auth === 'public') {
    return;
  }
  if (!PERMISSIONS.includes(auth.permission)) {
    throw new Error(`Route ${String(route.method)} ${route.url} names unknown permission ${auth.permission}`);
  }
  if (!route.url.includes(':org') && auth.permission !== 'authenticated') {
    throw new Error(`Route ${String(route.method)} ${route.url} has no :org but requires ${auth.permission}`);
  }
}

/**
 * The stored key matching one of the presented keys, read through the key cache; `cacheOnly`:
 * from the cache alone, never the database.
 */
async function findKey(
  app: FastifyInstance,
  candidates: string[],
  cacheOnly: boolean,
): Promise<ApiKeyWithOwner | undefined> {
  for (const key of candidates) {
    const hash = hashKey(key);
    // Found keys are cached; change notifications evict them on revocation, expiry changes
    // and account changes, on every replica.
    let row = app.caches.keys.get(hash);
    if (!row && !cacheOnly) {
      const generation = app.caches.keys.generation();
      row = await apiKeysRepository.findByHash(app.db, hash);
      if (row) {
        app.caches.keys.set(hash, row, generation);
      }
    }
    if (row && hashesEqual(row.key_hash, hash)) {
      return row;
    }
  }
  return undefined;
}

/**
 * Writes `last_used_at` when the stored one is older than the resolution. Requests that find it
 * stale while the write is under way wait for that write instead of making their own: 64 CI jobs
 * on one key would otherwise queue 64 updates of one row, each waiting for the commit of the one
 * before, once a minute.
 */
async function recordUse(
  app: FastifyInstance,
  request: FastifyRequest,
  found: ApiKeyWithOwner,
  now: Date,
  touches: Map<string, Promise<void>>,
): Promise<void> {
  if (found.last_used_at && now.getTime() - found.last_used_at.getTime() <= LAST_USED_RESOLUTION_MS) {
    return;
  }
  const keyId = found.id;
  let touch = touches.get(keyId);
  if (!touch) {
    touch = apiKeysRepository.touchLastUsed(app.db, keyId, now).finally(() => touches.delete(keyId));
    touches.set(keyId, touch);
  }
  // Awaited (once a minute per key) so a read right after a request sees its use.
  await touch.catch((err: unknown) => {
    // The database is away: the request would only wait for it a second time.
    if (isDatabaseUnavailable(err)) {
      throw err;
    }
    request.log.warn({ err, keyId }, 'could not record key use');
  });
  found.last_used_at = now;
}

/** Who the request's valid key or CI ID token is; UnauthorizedError when it presents neither. */
async function authenticate(
  app: FastifyInstance,
  request: FastifyRequest,
  allowBasic: boolean,
  touches: Map<string, Promise<void>>,
): Promise<Principal> {
  // Keyless CI: a JWT bearer value is an OIDC ID token a service account may trust.
  const idToken = app.hasDecorator('oidcFederation') ? app.oidcFederation.idTokenOf(request) : undefined;
  if (idToken !== undefined) {
    return app.oidcFederation.authenticate(request, idToken);
  }
  const candidates = presentedKeys(request.headers.authorization, allowBasic);
  if (candidates.length === 0) {
    throw new UnauthorizedError("Missing API key: send the header 'Authorization: Bearer <API key>'");
  }
  const now = app.clock();
  // An address over the failure limit gets no key lookup: only keys already known go on.
  const wait = app.hasDecorator('authFailureRetryAfter') ? app.authFailureRetryAfter(request) : 0;
  const found = await findKey(app, candidates, wait > 0);
  if (!found && wait > 0) {
    throw new TooManyRequestsError(wait);
  }
  if (!found) {
    throw new UnauthorizedError('Invalid API key');
  }
  if (found.revoked_at !== null) {
    throw new UnauthorizedError('API key has been revoked');
  }
  if (found.expires_at !== null && found.expires_at.getTime() <= now.getTime()) {
    throw new UnauthorizedError('API key has expired');
  }
  await recordUse(app, request, found, now, touches);
  return principalOf(found);
}

/** Who holds a key: its service account (with its home organization) or its user. */
function principalOf(key: ApiKeyWithOwner): Principal {
  if (key.service_account_id === null) {
    return { kind: 'user', id: key.user_id ?? '', name: key.user_name ?? 'unknown', keyId: key.id };
  }
  return {
    kind: 'service_account',
    id: key.service_account_id,
    name: key.sa_name ?? 'unknown',
    keyId: key.id,
    homeOrg: {
      id: key.org_id ?? '',
      name: key.org_name ?? '',
      experimentalFeaturesEnabled: key.org_experimental_features_enabled === true,
    },
    privilege: key.sa_privilege ?? 'reader',
  };
}

/**
 * Who is calling: the holder of the presented key or, with no Authorization header, the person
 * behind the session cookie. A write with the cookie must come from this origin (no CSRF).
 */
async function identify(
  app: FastifyInstance,
  request: FastifyRequest,
  allowBasic: boolean,
  touches: Map<string, Promise<void>>,
): Promise<Principal> {
  if (request.headers.authorization === undefined) {
    const person = await app.sessions.principal(request);
    if (person) {
      if (!isReadMethod(request.method)) {
        app.sessions.checkOrigin(request);
      }
      return person;
    }
  }
  return authenticate(app, request, allowBasic, touches);
}

/** Sets the request's organization and role, and returns the role; 403 for a non-member. */
/**
 * The organization a principal names and its role there, for callers that name the organization
 * outside the path (the MCP endpoint); null when the principal has no access to it.
 */
export async function orgAccess(
  app: FastifyInstance,
  principal: Principal,
  orgName: string,
): Promise<{ org: RequestOrg; role: Role } | null> {
  if (principal.kind === 'service_account') {
    if (principal.homeOrg?.name !== orgName) {
      return null;
    }
    return { org: principal.homeOrg, role: principal.privilege ?? 'reader' };
  }
  const membership = await usersRepository.membershipByOrgName(app.db, principal.id, orgName);
  if (!membership) {
    return null;
  }
  return {
    org: {
      id: membership.org_id,
      name: membership.org_name,
      experimentalFeaturesEnabled: membership.experimental_features_enabled,
    },
    role: membership.role,
  };
}

async function enterOrg(
  app: FastifyInstance,
  request: FastifyRequest,
  principal: Principal,
  orgName: string,
): Promise<Role> {
  const access = await orgAccess(app, principal, orgName);
  if (!access) {
    throw new ForbiddenError(`Access denied to ${request.url.split('?')[0]}`);
  }
  request.org = access.org;
  request.role = access.role;
  return access.role;
}

export default fp(
  (app, _opts, done) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('org', null);
    app.decorateRequest('role', null);

    app.addHook('onRoute', checkRouteAuth);
    /** `last_used_at` writes under way, by key id (recordUse). */
    const touches = new Map<string, Promise<void>>();

    app.addHook('onRequest', async (request) => {
      const auth = request.routeOptions.config.auth;
      if (auth === undefined || auth === 'public') {
        return;
      }
      const principal = await identify(app, request, auth.basic === true, touches).catch(
        async (err: unknown) => {
          // Guessing keys or flooding junk headers is limited per client address (rate-limit.ts).
          if (err instanceof UnauthorizedError && app.hasDecorator('countFailedAuthentication')) {
            await app.countFailedAuthentication(request);
          }
          throw err;
        },
      );
      request.principal = principal;

      const orgName = (request.params as Record<string, string | undefined>).org;
      if (orgName === undefined) {
        return;
      }
      const role = await enterOrg(app, request, principal, orgName);
      if (!roleAllows(role, auth.permission)) {
        throw new ForbiddenError();
      }
    });
    done();
  },
  { name: 'auth', dependencies: ['db', 'caches', 'people'] },
);
