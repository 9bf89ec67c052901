/**
 * Keyless CI: which service account an OIDC ID token from a CI issuer acts as. A trust names an
 * issuer, an audience and claim patterns; a claim pattern matches a token claim exactly, or, with
 * a trailing `*`, as a prefix. Pure: the caller verifies the signature and the times first.
 */

/** Trusts one service account and one organization hold at most (the field bounds are the contract's). */
export const OIDC_TRUST_LIMITS = { maxPerServiceAccount: 20, maxPerOrganization: 200 } as const;

/** Claims a trust may not pin: the issuer and audience have fields of their own, the rest change on every token. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti']);

/** Signature algorithms an ID token may use: asymmetric only (no `none`, no shared-secret HS*). */
export const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** The longest bearer value taken for a token (CI ID tokens are about 1 to 2 KiB). */
export const MAX_TOKEN_LENGTH = 8192;

/** What a trust requires of a token. */
export interface TrustRule {
  name: string;
  audience: string;
  claims: Record<string, string>;
}

/** True when `value` has the shape of a compact JWS: three base64url segments (the last may be empty). */
export function hasJwtShape(value: string): boolean {
  return value.length <= MAX_TOKEN_LENGTH && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}

/** True when a pattern matches a claim value: exactly, or as a prefix when it ends in `*`. */
export function claimMatches(pattern: string, value: unknown): boolean {
  let text: string;
  if (typeof value === 'string') {
    text = value;
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    // Some issuers send numbers (a build number); the pattern is their JSON text.
    text = String(value);
  } else {
    return false;
  }
  return pattern.endsWith('*') ? text.startsWith(pattern.slice(0, -1)) : text === pattern;
}

/** True when the token's `aud` (a string or an array of them) names `audience`. */
export function audienceMatches(audience: string, aud: unknown): boolean {
  return typeof aud === 'string' ? aud === audience : Array.isArray(aud) && aud.includes(audience);
}

/** The claim names of a trust that the token does not satisfy, sorted. */
export function mismatchedClaims(trust: TrustRule, payload: Record<string, unknown>): string[] {
  return Object.keys(trust.claims)
    .filter((name) => !claimMatches(trust.claims[name]!, payload[name]))
    .sort();
}

/** The outcome of matching a verified token against an organization's trusts of its issuer. */
export type TrustMatch<T extends TrustRule> =
  | { kind: 'one'; trust: T }
  | { kind: 'ambiguous'; count: number }
  | { kind: 'audience' }
  | { kind: 'claim'; claim: string };

/**
 * The one trust a token matches. When none does, the claim to name is the first mismatched claim
 * of the trust that came closest (fewest mismatches, then its name): never an expected value.
 */
export function matchTrusts<T extends TrustRule>(
  trusts: readonly T[],
  payload: Record<string, unknown>,
): TrustMatch<T> {
  const forAudience = trusts.filter((t) => audienceMatches(t.audience, payload.aud));
  if (forAudience.length === 0) {
    return { kind: 'audience' };
  }
  const matched: T[] = [];
  let closest: { claims: string[]; name: string } | undefined;
  for (const trust of forAudience) {
    const missed = mismatchedClaims(trust, payload);
    if (missed.length === 0) {
      matched.push(trust);
    } else if (
      !closest ||
      missed.length < closest.claims.length ||
      (missed.length === closest.claims.length && trust.name < closest.name)
    ) {
      closest = { claims: missed, name: trust.name };
    }
  }
  if (matched.length === 1) {
    return { kind: 'one', trust: matched[0]! };
  }
  if (matched.length > 1) {
    return { kind: 'ambiguous', count: matched.length };
  }
  return { kind: 'claim', claim: closest!.claims[0]! };
}

/** True when an issuer URL may be used: https, or http when the operator lists it. */
export function issuerSchemeAllowed(issuer: string, insecureIssuers: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return false;
  }
  if (url.username || url.password || url.search || url.hash) {
    return false;
  }
  return url.protocol === 'https:' || (url.protocol === 'http:' && insecureIssuers.includes(issuer));
}

/** Why a trust's claims are refused, or null: at least one claim must pin a value that is not only `*`. */
export function claimsProblem(claims: Record<string, string>): string | null {
  const names = Object.keys(claims);
  const reserved = names.find((n) => RESERVED_CLAIMS.has(n));
  if (reserved) {
    return `'${reserved}' cannot be a claim of a trust: ${reserved === 'iss' || reserved === 'aud' ? 'use the issuer and audience fields' : 'it changes on every token'}`;
  }
  if (!names.some((n) => claims[n] !== '*')) {
    return 'at least one claim must pin a value (a bare * matches every token of the issuer)';
  }
  return null;
}

/** The URL of an issuer's discovery document: the issuer plus the well-known path of OpenID Connect Discovery. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}
