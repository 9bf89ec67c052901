/**
 * The sign-in flow with the identity provider: `GET /auth/oidc/login` sends the browser off with
 * PKCE, `state` and `nonce`; `GET /auth/oidc/callback` checks the answer and opens a session.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import type { Counter } from 'prom-client';
import type { OidcConfig } from '../config.js';
import { peopleRepository } from '../storage/repositories/people.js';
import { completeSignIn, groupsOf, secretHash, type SignInOutcome } from '../usecases/access/people.js';
import {
  escapeHtml,
  LOGIN_MAX_AGE_MS,
  page,
  parseCookies,
  safeReturnTo,
  STATE_COOKIE,
  type CookieOptions,
} from './sign-in-http.js';

export interface OidcRouteDeps {
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

export function registerOidcRoutes(app: FastifyInstance, oidcConfig: OidcConfig, deps: OidcRouteDeps): void {
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
