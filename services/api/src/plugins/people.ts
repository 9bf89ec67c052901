/**
 * People sign in through the organization's OpenID Provider (authorization code flow with PKCE,
 * `state` and `nonce`, through `openid-client`) and work under a server-side session behind an
 * `HttpOnly`, `SameSite=Lax` cookie (`Secure`, and `__Host-` prefixed, when the public URL is
 * https). Routes: `GET /auth/providers`, `GET /auth/oidc/login`, `GET /auth/oidc/callback`,
 * `POST /auth/logout`. `app.sessions.principal(request)` is what the auth plugin asks for a
 * request that carries the cookie and no Authorization header.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import { Counter } from 'prom-client';
import type { OidcConfig } from '../config.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { peopleRepository } from '../storage/repositories/people.js';
import {
  completeSignIn,
  groupsOf,
  secretHash,
  whoAmI,
  type SignInOutcome,
} from '../usecases/access/people.js';
import type { Principal } from '../usecases/access/principal.js';

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

/** A sign-in between the redirect and the callback lives this long. */
const LOGIN_MAX_AGE_MS = 10 * 60_000;
/** How often `last_seen_at` is written for one session: the idle timeout is this precise. */
const LAST_SEEN_RESOLUTION_MS = 30_000;
/** How often finished and abandoned sessions and sign-ins are removed. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
const STATE_COOKIE = 'verity_oidc_state';

/** The `Cookie` header as name to value; the first of a repeated name wins. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';').slice(0, 100)) {
    const eq = part.indexOf('=');
    if (eq <= 0) {
      continue;
    }
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) {
      cookies.set(name, value);
    }
  }
  return cookies;
}

/** A console path on this origin to return to: anything else becomes `/`. */
export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 2000) {
    return '/';
  }
  // Only an absolute path of this origin: not `//host`, not `/\host`, no scheme, no control characters.
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) {
    return '/';
  }
  for (let i = 0; i < raw.length; i += 1) {
    if (raw.charCodeAt(i) < 0x20 || raw.charCodeAt(i) === 0x7f) {
      return '/';
    }
  }
  return raw;
}

const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** A small page for what the console cannot show: the sign-in's own failures. */
function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Verity</title>` +
        `<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>` +
        `<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">` +
        `<main><h1>${escapeHtml(title)}</h1>${body}<p><a href="/sign-in">Back to sign-in</a></p></main></body></html>`,
    );
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

interface CookieOptions {
  maxAgeSeconds?: number;
  path?: string;
}

export default fp(
  (app, _opts, done) => {
    const { config } = app;
    const secure = config.publicUrl.startsWith('https:');
    const cookieName = secure ? '__Host-verity_session' : 'verity_session';
    const callbackUrl = `${config.publicUrl}/auth/oidc/callback`;
    const signIns = new Counter({
      name: 'verity_sign_ins_total',
      help: 'People signing in through the identity provider, by result (signed_in, no_access, refused)',
      labelNames: ['result'],
      registers: [app.metrics.registry],
    });

    const cookie = (name: string, value: string, opts: CookieOptions = {}): string =>
      [
        `${name}=${value}`,
        `Path=${opts.path ?? '/'}`,
        'HttpOnly',
        'SameSite=Lax',
        ...(secure ? ['Secure'] : []),
        ...(opts.maxAgeSeconds !== undefined ? [`Max-Age=${opts.maxAgeSeconds}`] : []),
      ].join('; ');

    const idleMs = config.oidc?.sessionIdleMs ?? 30 * 60_000;
    const { principal, checkOrigin } = sessionAuth(app, cookieName, idleMs);
    app.decorate('sessions', { cookieName, principal, checkOrigin });

    app.get('/auth/providers', async () => ({
      oidc: config.oidc ? { name: config.oidc.providerName, login_url: '/auth/oidc/login' } : null,
      api_key_sign_in: config.apiKeySignIn,
    }));

    // The console asks this (not GET /api/v2/me) so that being signed out is an answer, not an error.
    app.get('/auth/session', async (request, reply) => {
      const person = await principal(request).catch((err: unknown) => {
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
        checkOrigin(request);
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

interface OidcRouteDeps {
  cookie: (name: string, value: string, opts?: CookieOptions) => string;
  cookieName: string;
  callbackUrl: string;
  signIns: Counter<'result'>;
}

function providerUnavailable(
  app: FastifyInstance,
  oidcConfig: OidcConfig,
  reply: FastifyReply,
  err: unknown,
) {
  app.log.warn({ err }, 'identity provider not reachable');
  return page(
    reply,
    503,
    'Sign-in is not available',
    `<p>${escapeHtml(oidcConfig.providerName)} could not be reached. Try again in a minute.</p>`,
  );
}

/** The provider's configuration, discovered once and again after a failure. */
function discovery(app: FastifyInstance, oidcConfig: OidcConfig): () => Promise<oidc.Configuration> {
  let found: Promise<oidc.Configuration> | undefined;
  const insecure = app.config.oidcInsecureIssuers.includes(oidcConfig.issuer.replace(/\/+$/, ''));
  return () => {
    found ??= oidc
      .discovery(
        new URL(oidcConfig.issuer),
        oidcConfig.clientId,
        undefined,
        oidcConfig.clientSecret ? oidc.ClientSecretBasic(oidcConfig.clientSecret) : oidc.None(),
        { ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}), timeout: 10 },
      )
      .catch((err: unknown) => {
        found = undefined;
        throw err;
      });
    return found;
  };
}

function registerOidcRoutes(app: FastifyInstance, oidcConfig: OidcConfig, deps: OidcRouteDeps): void {
  const { cookie, callbackUrl } = deps;
  const provider = discovery(app, oidcConfig);
  const unavailable = (reply: FastifyReply, err: unknown) => providerUnavailable(app, oidcConfig, reply, err);

  app.get('/auth/oidc/login', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Record<string, unknown>).return_to);
    let configuration: oidc.Configuration;
    try {
      configuration = await provider();
    } catch (err) {
      return unavailable(reply, err);
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    await peopleRepository.insertLogin(app.db, {
      state_hash: secretHash(state),
      code_verifier: verifier,
      nonce,
      return_to: returnTo,
      created_at: app.clock(),
    });
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: callbackUrl,
      scope: oidcConfig.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return reply
      .header(
        'set-cookie',
        cookie(STATE_COOKIE, state, { path: '/auth/oidc', maxAgeSeconds: LOGIN_MAX_AGE_MS / 1000 }),
      )
      .header('cache-control', 'no-store')
      .redirect(url.href, 302);
  });

  app.get('/auth/oidc/callback', (request, reply) =>
    callback(app, oidcConfig, deps, provider, request, reply),
  );
}

/** The code for tokens, with the PKCE verifier, and the ID token's checked claims (state, nonce, audience, expiry, signature). */
async function exchangeCode(
  configuration: oidc.Configuration,
  currentUrl: URL,
  login: { code_verifier: string; nonce: string },
  state: string,
): Promise<oidc.IDToken> {
  const tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
    pkceCodeVerifier: login.code_verifier,
    expectedState: state,
    expectedNonce: login.nonce,
    idTokenExpected: true,
  });
  return tokens.claims() as oidc.IDToken;
}

function signInFromClaims(
  app: FastifyInstance,
  oidcConfig: OidcConfig,
  claims: oidc.IDToken,
  now: Date,
  request: FastifyRequest,
): Promise<SignInOutcome> {
  return completeSignIn(app.db, {
    issuer: claims.iss,
    claims: {
      sub: claims.sub,
      name: claims.name,
      preferred_username: claims.preferred_username,
      email: claims.email,
      groups: groupsOf(claims[oidcConfig.groupsClaim]),
    },
    groupRoles: oidcConfig.groupRoles,
    now,
    sessionMaxMs: oidcConfig.sessionMaxMs,
    ip: request.ip,
    requestId: request.id,
  });
}

/** What a person whose groups give no role is told. */
function noAccessPage(
  reply: FastifyReply,
  outcome: { person: { name: string; email: string | null }; groups: string[] },
) {
  const who =
    escapeHtml(outcome.person.name) + (outcome.person.email ? ` (${escapeHtml(outcome.person.email)})` : '');
  const groups = outcome.groups.slice(0, 50).map((g) => `<code>${escapeHtml(g)}</code>`);
  return page(
    reply,
    403,
    'No access',
    `<p>You signed in as ${who}, but none of your groups gives a role in an organization of this Verity.</p>` +
      `<p>Your groups: ${groups.length ? groups.join(', ') : 'none'}.</p>` +
      `<p>Ask an administrator to map one of them to an organization.</p>`,
  );
}

/** The end of the flow: checks the answer, then signs the person in or says why not. */
async function callback(
  app: FastifyInstance,
  oidcConfig: OidcConfig,
  deps: OidcRouteDeps,
  provider: () => Promise<oidc.Configuration>,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { cookie, cookieName, callbackUrl, signIns } = deps;
  const query = request.query as Record<string, unknown>;
  reply.header('set-cookie', cookie(STATE_COOKIE, '', { path: '/auth/oidc', maxAgeSeconds: 0 }));
  const refuse = (status: number, title: string, message: string, reason: string) => {
    signIns.inc({ result: 'refused' });
    request.log.warn({ reason }, 'sign-in refused');
    return page(
      reply,
      status,
      title,
      `<p>${escapeHtml(message)}</p><p><a href="/auth/oidc/login">Sign in again</a></p>`,
    );
  };
  if (typeof query.error === 'string') {
    const described =
      typeof query.error_description === 'string' ? `: ${query.error_description.slice(0, 500)}` : '';
    const message = `${oidcConfig.providerName} answered ${query.error}${described}`;
    return refuse(400, 'Sign-in refused', message, query.error.slice(0, 100));
  }
  const state = typeof query.state === 'string' ? query.state : '';
  const browserState = parseCookies(request.headers.cookie).get(STATE_COOKIE);
  // The state must be the one this browser was sent off with (login CSRF), and used once.
  if (!state || browserState !== state) {
    return refuse(
      400,
      'Sign-in expired',
      'This sign-in did not start in this browser, or took too long.',
      'state',
    );
  }
  const login = await peopleRepository.takeLogin(app.db, secretHash(state));
  const now = app.clock();
  if (!login || now.getTime() - login.created_at.getTime() > LOGIN_MAX_AGE_MS) {
    return refuse(400, 'Sign-in expired', 'This sign-in was already used, or took too long.', 'state');
  }
  let configuration: oidc.Configuration;
  try {
    configuration = await provider();
  } catch (err) {
    return providerUnavailable(app, oidcConfig, reply, err);
  }
  let claims: oidc.IDToken;
  try {
    claims = await exchangeCode(configuration, new URL(request.url, callbackUrl), login, state);
  } catch (err) {
    request.log.warn({ err }, 'identity provider answer refused');
    const message = err instanceof Error ? err.message : 'the answer could not be checked';
    return refuse(400, 'Sign-in refused', `The identity provider's answer was refused: ${message}`, 'token');
  }
  const outcome = await signInFromClaims(app, oidcConfig, claims, now, request);
  if (!outcome.ok) {
    signIns.inc({ result: 'no_access' });
    request.log.warn(
      { person: outcome.person.name, groups: outcome.groups.slice(0, 50) },
      'sign-in without access',
    );
    return noAccessPage(reply, outcome);
  }
  signIns.inc({ result: 'signed_in' });
  request.log.info({ person: outcome.person.name, organizations: outcome.organizations }, 'signed in');
  const maxAge = Math.floor(oidcConfig.sessionMaxMs / 1000);
  return reply
    .header('set-cookie', cookie(cookieName, outcome.session, { maxAgeSeconds: maxAge }))
    .header('cache-control', 'no-store')
    .redirect(login.return_to, 302);
}
