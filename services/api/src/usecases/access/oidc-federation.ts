/**
 * Keyless CI: a CI job's OIDC ID token, sent as the bearer value, acts as the service account
 * whose trust it matches in the organization of the request's URL. The token is verified with
 * its issuer's published keys (an `IssuerKeySource` fetches and caches them), checked for time
 * and audience, then matched against the organization's trusts of its issuer, read from the
 * database on every request (so a removed trust refuses the next token on every replica).
 * Every refusal is a 401 that says what failed, never what a trust expects.
 */
import {
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type CryptoKey,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { ACCEPTED_ALGORITHMS, issuerSchemeAllowed, matchTrusts } from '../../domain/oidc-trust.js';
import { UnauthorizedError } from '../../errors.js';
import type { Db } from '../../storage/database.js';
import { oidcTrustsRepository, type OidcTrustCandidate } from '../../storage/repositories/oidc-trusts.js';
import type { Principal } from './principal.js';

/** Clock skew allowed on `exp`, `nbf` and `iat`, in seconds. */
export const CLOCK_SKEW_SECONDS = 60;
/** A token issued longer ago than this is refused whatever its `exp`. */
export const MAX_TOKEN_AGE = '24h';

/** Where an issuer's signing keys come from (plugins/oidc-issuer-keys.ts). */
export interface IssuerKeySource {
  /** The issuer's keys: cached while fresh, else fetched; UnauthorizedError when they cannot be had. */
  keys(issuer: string): Promise<JWTVerifyGetKey>;
  /** The keys fetched again for a key id not among them; null when fetched too recently to ask again. */
  refresh(issuer: string): Promise<JWTVerifyGetKey | null>;
  /** The keys already held, fetching nothing. */
  cached(issuer: string): JWTVerifyGetKey | undefined;
}

/** What verifying a token needs. */
export interface FederationContext {
  db: Db;
  keys: IssuerKeySource;
  insecureIssuers: readonly string[];
  now: Date;
  /** The request's `{org}`, undefined on routes without one. */
  orgName: string | undefined;
  /** The caller's address is over the failure limit: no fetch, only keys already held. */
  cacheOnly: boolean;
}

/** A caller-controlled text, shortened for a message. */
const shown = (text: string, max = 128) => (text.length > max ? `${text.slice(0, max)}...` : text);

const refuse = (message: string) => new UnauthorizedError(message);

/** The token's header and claims, read before any verification; 401 when they are not a JWT's. */
function readToken(token: string): { alg: string; kid: string | undefined; payload: JWTPayload } {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let payload: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    payload = decodeJwt(token);
  } catch {
    throw refuse('OIDC token is malformed: expected a signed JWT');
  }
  const alg = typeof header.alg === 'string' ? header.alg : '';
  if (!(ACCEPTED_ALGORITHMS as readonly string[]).includes(alg)) {
    throw refuse(
      `OIDC token algorithm '${shown(alg, 16)}' is not accepted: only asymmetric signatures (${ACCEPTED_ALGORITHMS.join(', ')})`,
    );
  }
  return { alg, kid: typeof header.kid === 'string' ? header.kid : undefined, payload };
}

/** The 401 for a failed check of the token, whatever failed: jose, or the key's import. */
function verificationFailure(err: unknown): UnauthorizedError {
  if (err instanceof errors.JWTExpired) {
    return refuse(
      err.claim === 'iat' ? `OIDC token was issued more than ${MAX_TOKEN_AGE} ago` : 'OIDC token has expired',
    );
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') {
      return refuse(`OIDC token has no '${err.claim}' claim`);
    }
    const what: Record<string, string> = {
      nbf: 'is not valid yet (nbf)',
      iat: 'was issued in the future (iat)',
      iss: 'issuer does not match',
    };
    return refuse(`OIDC token ${what[err.claim] ?? `claim '${err.claim}' is invalid`}`);
  }
  if (
    err instanceof errors.JWSSignatureVerificationFailed ||
    err instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return refuse('OIDC token signature is invalid');
  }
  if (err instanceof errors.JOSEError) {
    return refuse(`OIDC token could not be verified: ${err.code}`);
  }
  // An issuer's key WebCrypto will not import (malformed, or RSA under 2048 bits).
  return refuse("OIDC token could not be verified with its issuer's keys");
}

async function verifyWith(
  token: string,
  keys: JWTVerifyGetKey,
  issuer: string,
  now: Date,
): Promise<JWTPayload> {
  const options = {
    issuer,
    algorithms: [...ACCEPTED_ALGORITHMS],
    clockTolerance: CLOCK_SKEW_SECONDS,
    maxTokenAge: MAX_TOKEN_AGE,
    requiredClaims: ['exp', 'iat'],
    currentDate: now,
  };
  try {
    return (await jwtVerify(token, keys, options)).payload;
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) {
      throw err;
    }
    // Several keys fit a token without `kid`: the one that verifies it wins.
    for await (const key of err as errors.JWKSMultipleMatchingKeys & AsyncIterable<CryptoKey>) {
      const verified = await jwtVerify(token, key, options).catch(() => undefined);
      if (verified) {
        return verified.payload;
      }
    }
    throw err;
  }
}

/** Verifies the token; a key id the held keys lack fetches them once more (within the refresh floor). */
async function verifyToken(
  ctx: FederationContext,
  token: string,
  issuer: string,
  kid: string | undefined,
): Promise<JWTPayload> {
  const noKey = () =>
    refuse(
      `OIDC token key '${shown(kid ?? '(none)', 64)}' is not among the keys of issuer '${shown(issuer)}'`,
    );
  const held = ctx.cacheOnly ? ctx.keys.cached(issuer) : await ctx.keys.keys(issuer);
  if (!held) {
    throw refuse(`OIDC token of issuer '${shown(issuer)}' cannot be verified now`);
  }
  try {
    return await verifyWith(token, held, issuer, ctx.now);
  } catch (err) {
    if (!(err instanceof errors.JWKSNoMatchingKey)) {
      throw verificationFailure(err);
    }
  }
  const refreshed = ctx.cacheOnly ? null : await ctx.keys.refresh(issuer);
  if (!refreshed) {
    throw noKey();
  }
  try {
    return await verifyWith(token, refreshed, issuer, ctx.now);
  } catch (err) {
    throw err instanceof errors.JWKSNoMatchingKey ? noKey() : verificationFailure(err);
  }
}

/** The principal of the one trust the verified claims match. */
function principalOf(trusts: OidcTrustCandidate[], payload: JWTPayload, orgName: string): Principal {
  const match = matchTrusts(trusts, payload as Record<string, unknown>);
  switch (match.kind) {
    case 'audience':
      throw refuse(`OIDC token audience does not match any trust of organization ${orgName}`);
    case 'claim':
      throw refuse(`OIDC token claim '${match.claim}' does not match any trust of organization ${orgName}`);
    case 'ambiguous':
      throw refuse(
        `OIDC token matches ${match.count} trusts of organization ${orgName}: it must match exactly one`,
      );
    case 'one':
      break;
  }
  const t = match.trust;
  return {
    kind: 'service_account',
    id: t.service_account_id,
    name: t.account_name,
    // The rate-limit bucket of the trust, as a key's is of its key.
    keyId: `oidc:${t.org_id}:${t.service_account_id}:${t.name}`,
    homeOrg: {
      id: t.org_id,
      name: t.org_name,
      experimentalFeaturesEnabled: t.org_experimental_features_enabled,
    },
    privilege: t.account_privilege,
    ...(typeof payload.sub === 'string' ? { subject: payload.sub } : {}),
    trust: t.name,
  };
}

/** The service account an ID token acts as in the request's organization; UnauthorizedError otherwise. */
export async function principalFromIdToken(ctx: FederationContext, token: string): Promise<Principal> {
  const { kid, payload: unverified } = readToken(token);
  const issuer = unverified.iss;
  if (typeof issuer !== 'string' || issuer === '') {
    throw refuse("OIDC token has no 'iss' claim");
  }
  if (ctx.orgName === undefined) {
    throw refuse('OIDC tokens are accepted only on routes that name an organization');
  }
  if (!issuerSchemeAllowed(issuer, ctx.insecureIssuers)) {
    throw refuse(
      `OIDC token issuer '${shown(issuer)}' is not an https URL, nor listed in VERITY_OIDC_INSECURE_ISSUERS`,
    );
  }
  // Over the failure limit, a token is checked against keys already held before any database work.
  const early = ctx.cacheOnly ? await verifyToken(ctx, token, issuer, kid) : undefined;
  const trusts = await oidcTrustsRepository.candidates(ctx.db, ctx.orgName, issuer);
  if (trusts.length === 0) {
    throw refuse(`OIDC token issuer '${shown(issuer)}' is not trusted by organization ${ctx.orgName}`);
  }
  // Keys are fetched only for an issuer a trust names.
  const payload = early ?? (await verifyToken(ctx, token, issuer, kid));
  return principalOf(trusts, payload, ctx.orgName);
}
