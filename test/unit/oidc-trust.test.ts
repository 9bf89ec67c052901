/** Keyless CI rules: claim patterns, choosing the one trust, issuer schemes and trust claims. */
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../services/api/src/config.js';
import {
  audienceMatches,
  claimMatches,
  claimsProblem,
  discoveryUrl,
  hasJwtShape,
  issuerSchemeAllowed,
  matchTrusts,
  type TrustRule,
} from '../../services/api/src/domain/oidc-trust.js';

describe('claimMatches', () => {
  it.each([
    ['refs/heads/main', 'refs/heads/main', true],
    ['refs/heads/main', 'refs/heads/main2', false],
    ['refs/heads/*', 'refs/heads/feature/x', true],
    ['refs/heads/*', 'refs/tags/v1', false],
    ['acme/*', 'acme-evil/x', false],
    ['*', 'anything', true],
    ['*', '', true],
    ['a*b', 'a*b', true],
    ['a*b', 'axxb', false],
    ['42', 42, true],
    ['true', true, true],
    ['x', undefined, false],
    ['*', undefined, false],
    ['x', ['x'], false],
    ['x', { x: 1 }, false],
  ])('%j against %j is %s', (pattern, value, expected) => {
    expect(claimMatches(pattern, value)).toBe(expected);
  });
});

describe('audienceMatches', () => {
  it('takes a string aud or an array naming it', () => {
    expect(audienceMatches('verity', 'verity')).toBe(true);
    expect(audienceMatches('verity', ['sts', 'verity'])).toBe(true);
    expect(audienceMatches('verity', 'verity2')).toBe(false);
    expect(audienceMatches('verity', undefined)).toBe(false);
    expect(audienceMatches('verity', [1])).toBe(false);
  });
});

describe('matchTrusts', () => {
  const main: TrustRule = {
    name: 'main',
    audience: 'verity',
    claims: { repository: 'acme/pay', ref: 'refs/heads/main' },
  };
  const tags: TrustRule = {
    name: 'tags',
    audience: 'verity',
    claims: { repository: 'acme/pay', ref: 'refs/tags/*' },
  };
  const other: TrustRule = { name: 'other', audience: 'other', claims: { repository: 'acme/pay' } };
  const token = { aud: 'verity', repository: 'acme/pay', ref: 'refs/heads/main' };

  it('finds the one trust every claim of which matches', () => {
    expect(matchTrusts([main, tags, other], token)).toEqual({ kind: 'one', trust: main });
  });

  it('is ambiguous when several match, with their count', () => {
    const broad: TrustRule = { name: 'broad', audience: 'verity', claims: { repository: 'acme/*' } };
    expect(matchTrusts([main, broad], token)).toEqual({ kind: 'ambiguous', count: 2 });
  });

  it('says the audience when no trust has it', () => {
    expect(matchTrusts([main, tags], { ...token, aud: 'else' })).toEqual({ kind: 'audience' });
  });

  it('names the first mismatched claim of the closest trust', () => {
    expect(matchTrusts([main, tags], { ...token, ref: 'refs/pull/1/merge' })).toEqual({
      kind: 'claim',
      claim: 'ref',
    });
    expect(matchTrusts([main], { ...token, repository: 'x/y', ref: 'z' })).toEqual({
      kind: 'claim',
      claim: 'ref',
    });
    const strict: TrustRule = {
      name: 'a-strict',
      audience: 'verity',
      claims: { repository: 'x/y', ref: 'z', sub: 'q' },
    };
    expect(matchTrusts([strict, main], { ...token, repository: 'x/y', ref: 'z' })).toEqual({
      kind: 'claim',
      claim: 'sub',
    });
  });
});

describe('issuerSchemeAllowed', () => {
  it('takes https, and http only when listed', () => {
    expect(issuerSchemeAllowed('https://token.actions.githubusercontent.com', [])).toBe(true);
    expect(issuerSchemeAllowed('http://127.0.0.1:9000', [])).toBe(false);
    expect(issuerSchemeAllowed('http://127.0.0.1:9000', ['http://127.0.0.1:9000'])).toBe(true);
    expect(issuerSchemeAllowed('http://127.0.0.1:9001', ['http://127.0.0.1:9000'])).toBe(false);
    expect(issuerSchemeAllowed('ftp://x', [])).toBe(false);
    expect(issuerSchemeAllowed('https://u:p@x', [])).toBe(false);
    expect(issuerSchemeAllowed('https://x?y=1', [])).toBe(false);
    expect(issuerSchemeAllowed('https://x#y', [])).toBe(false);
    expect(issuerSchemeAllowed('not a url', [])).toBe(false);
  });

  it('finds the discovery document under the issuer', () => {
    expect(discoveryUrl('https://gitlab.com')).toBe('https://gitlab.com/.well-known/openid-configuration');
    expect(discoveryUrl('https://x/tenant/')).toBe('https://x/tenant/.well-known/openid-configuration');
  });
});

describe('claimsProblem', () => {
  it('wants at least one pinned claim and no registered time or issuer claims', () => {
    expect(claimsProblem({ repository: 'acme/pay' })).toBeNull();
    expect(claimsProblem({ repository: 'acme/*', ref: '*' })).toBeNull();
    expect(claimsProblem({ ref: '*' })).toMatch(/at least one claim must pin a value/);
    expect(claimsProblem({ aud: 'x' })).toMatch(/use the issuer and audience fields/);
    expect(claimsProblem({ exp: '1' })).toMatch(/changes on every token/);
  });
});

describe('hasJwtShape', () => {
  it('sees three base64url segments, the signature possibly empty, and nothing else', () => {
    expect(hasJwtShape('eyJh.eyJi.c2ln')).toBe(true);
    expect(hasJwtShape('eyJh.eyJi.')).toBe(true);
    expect(hasJwtShape('vty_abcDEF123-_')).toBe(false);
    expect(hasJwtShape('a.b')).toBe(false);
    expect(hasJwtShape('a.b.c.d')).toBe(false);
    expect(hasJwtShape('a+b.c.d')).toBe(false);
    expect(hasJwtShape(`${'a'.repeat(9000)}.b.c`)).toBe(false);
  });
});

describe('VERITY_OIDC_INSECURE_ISSUERS', () => {
  it('lists http(s) issuer URLs and refuses anything else', () => {
    expect(loadConfig({}).oidcInsecureIssuers).toEqual([]);
    expect(
      loadConfig({ VERITY_OIDC_INSECURE_ISSUERS: ' http://127.0.0.1:9000 , http://issuer.lab ' })
        .oidcInsecureIssuers,
    ).toEqual(['http://127.0.0.1:9000', 'http://issuer.lab']);
    let error: unknown;
    try {
      loadConfig({ VERITY_OIDC_INSECURE_ISSUERS: 'http://ok, ftp://no' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      "VERITY_OIDC_INSECURE_ISSUERS: 'ftp://no' is not an http(s) URL",
    ]);
  });
});
