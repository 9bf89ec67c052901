/**
 * People sign in through the organization's OpenID Provider (authorization code flow with PKCE,
 * `state` and `nonce`, through `openid-client`) and work under a server-side session behind an
 * `HttpOnly`, `SameSite=Lax` cookie (`Secure`, and `__Host-` prefixed, when the public URL is
 * https). Routes: `GET /auth/providers`, `GET /auth/oidc/login`, `GET /auth/oidc/callback`,
 * `POST /auth/logout`. `app.sessions.principal(request)` is what the auth plugin asks for a
 * request that carries the cookie and no Authorization header.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { peopleRepository } from '../storage/repositories/people.js';
import { secretHash, whoAmI } from '../usecases/access/people.js';
import type { Principal } from '../usecases/access/principal.js';
import { registerOidcRoutes } from './oidc-sign-in.js';
import {
  LAST_SEEN_RESOLUTION_MS,
  LOGIN_MAX_AGE_MS,
  parseCookies,
  SWEEP_INTERVAL_MS,
  type CookieOptions,
} from './sign-in-http.js';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: {
      /** The name of the session cookie. */
      cookieName: string;
      /** The person behind the request's session cookie; null when it carries none. 401 when it is not valid. */
      principal(request: FastifyRequest): Promise<Principal | null>;
      /** 403 unless a cookie-authenticated write comes from this origin. */
      checkOrigin(request: FastifyRequest): void;
    };
  }
}

/** The person behind a session cookie, and the origin check of their writes. */
function sessionAuth(app: FastifyInstance, cookieName: string, idleMs: number) {
  const publicOrigin = new URL(app.config.publicUrl).origin;

  async function principal(request: FastifyRequest): Promise<Principal | null> {
    const value = parseCookies(request.headers.cookie).get(cookieName);
    if (!value) {
      return null;
    }
    const idHash = secretHash(value);
    const session = await peopleRepository.findSession(app.db, idHash);
    const now = app.clock();
    if (!session) {
      throw new UnauthorizedError('Your session has ended: sign in again');
    }
    if (
      session.expires_at.getTime() <= now.getTime() ||
      now.getTime() - session.last_seen_at.getTime() > idleMs
    ) {
      await peopleRepository.deleteSession(app.db, idHash);
      throw new UnauthorizedError('Your session has expired: sign in again');
    }
    if (now.getTime() - session.last_seen_at.getTime() > LAST_SEEN_RESOLUTION_MS) {
      await peopleRepository.touchSession(app.db, idHash, now);
    }
    return {
      kind: 'user',
      id: session.user_id,
      name: session.display_name ?? session.user_name,
      ...(session.email ? { email: session.email } : {}),
      keyId: `session:${session.user_id}`,
    };
  }

  function checkOrigin(request: FastifyRequest): void {
    const site = request.headers['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
      throw new ForbiddenError(
        `A write with the session cookie must come from ${publicOrigin} (Sec-Fetch-Site: ${site})`,
      );
    }
    const origin = request.headers.origin;
    if (typeof origin === 'string' && origin !== publicOrigin) {
      throw new ForbiddenError(
        `A write with the session cookie must come from ${publicOrigin}, not ${origin}`,
      );
    }
  }

  return { principal, checkOrigin };
}

/** The session cookie's name and its `Set-Cookie` lines: `Secure` when the public URL is https. */
function cookies(publicUrl: string) {
  const secure = publicUrl.startsWith('https:');
  const cookieName = secure ? '__Host-verity_session' : 'verity_session';
  const cookie = (name: string, value: string, opts: CookieOptions = {}): string =>
    [
      `${name}=${value}`,
      `Path=${opts.path ?? '/'}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(secure ? ['Secure'] : []),
      ...(opts.maxAgeSeconds !== undefined ? [`Max-Age=${opts.maxAgeSeconds}`] : []),
    ].join('; ');
  return { cookieName, cookie };
}

/** Sessions: what the auth plugin asks of a request with the cookie, and the sweep of ended ones. */
export default fp(
  (app, _opts, done) => {
    const { cookieName } = cookies(app.config.publicUrl);
    const idleMs = app.config.oidc?.sessionIdleMs ?? 30 * 60_000;
    const { principal, checkOrigin } = sessionAuth(app, cookieName, idleMs);
    app.decorate('sessions', { cookieName, principal, checkOrigin });

    const sweep = setInterval(() => {
      peopleRepository
        .sweep(app.db, app.clock(), idleMs, LOGIN_MAX_AGE_MS)
        .catch((err: unknown) => app.log.warn({ err }, 'could not remove ended sessions'));
    }, SWEEP_INTERVAL_MS);
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
    done();
  },
  { name: 'people', dependencies: ['db', 'metrics'] },
);

/**
 * The `/auth` routes: the ways to sign in, the session, sign-out, and the sign-in flow. Registered
 * after the rate limit, so they are limited per client address like every other route.
 */
export const peopleRoutes = fp(
  (app, _opts, done) => {
    const { config } = app;
    const { cookieName, cookie } = cookies(config.publicUrl);
    const callbackUrl = `${config.publicUrl}/auth/oidc/callback`;
    const signIns = new Counter({
      name: 'verity_sign_ins_total',
      help: 'People signing in through the identity provider, by result (signed_in, no_access, refused)',
      labelNames: ['result'],
      registers: [app.metrics.registry],
    });

    app.get('/auth/providers', async () => ({
      oidc: config.oidc ? { name: config.oidc.providerName, login_url: '/auth/oidc/login' } : null,
      api_key_sign_in: config.apiKeySignIn,
    }));

    // The console asks this (not GET /api/v2/me) so that being signed out is an answer, not an error.
    app.get('/auth/session', async (request, reply) => {
      const person = await app.sessions.principal(request).catch((err: unknown) => {
        if (err instanceof UnauthorizedError) {
          return null;
        }
        throw err;
      });
      reply.header('cache-control', 'no-store');
      return { user: person ? await whoAmI(app.db, person) : null };
    });

    app.post('/auth/logout', async (request, reply) => {
      const value = parseCookies(request.headers.cookie).get(cookieName);
      if (value) {
        app.sessions.checkOrigin(request);
        await peopleRepository.deleteSession(app.db, secretHash(value));
      }
      return reply
        .code(204)
        .header('set-cookie', cookie(cookieName, '', { maxAgeSeconds: 0 }))
        .send();
    });

    const oidcConfig = config.oidc;
    if (oidcConfig) {
      registerOidcRoutes(app, oidcConfig, { cookie, cookieName, callbackUrl, signIns });
    }
    done();
  },
  { name: 'people-routes', dependencies: ['people', 'metrics'] },
);
