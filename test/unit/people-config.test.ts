/** Sign-in settings as the process reads them, and roles from a person's groups. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/api/src/config.js';
import { rolesFromGroups } from '../../services/api/src/domain/roles.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      return err.problems;
    }
    throw err;
  }
  return [];
};

describe('sign-in settings', () => {
  it('reads the provider, the group roles and the session timeouts', () => {
    const config = loadConfig({
      VERITY_OIDC_ISSUER: 'https://sso.example.com/realms/acme',
      VERITY_OIDC_CLIENT_ID: 'verity',
      VERITY_OIDC_GROUP_ROLES: '{"platform":{"acme":"admin"},"auditors":{"acme":"reader"}}',
      VERITY_OIDC_SESSION_IDLE_MINUTES: '15',
    });
    expect(config.oidc).toEqual({
      issuer: 'https://sso.example.com/realms/acme',
      clientId: 'verity',
      clientSecret: undefined,
      scopes: 'openid profile email',
      groupsClaim: 'groups',
      providerName: 'sso.example.com',
      groupRoles: { platform: { acme: 'admin' }, auditors: { acme: 'reader' } },
      sessionIdleMs: 15 * 60_000,
      sessionMaxMs: 12 * 3_600_000,
    });
    expect(config.apiKeySignIn).toBe(true);
    expect(loadConfig({}).oidc).toBeUndefined();
  });

  it('refuses an http issuer unless named as allowed, and an issuer without a client', () => {
    expect(problemsOf({ VERITY_OIDC_ISSUER: 'http://sso.lab', VERITY_OIDC_CLIENT_ID: 'v' })).toEqual([
      'VERITY_OIDC_ISSUER: must be https (name it in VERITY_OIDC_INSECURE_ISSUERS to allow http, for tests and labs)',
    ]);
    expect(
      problemsOf({
        VERITY_OIDC_ISSUER: 'http://sso.lab/',
        VERITY_OIDC_CLIENT_ID: 'v',
        VERITY_OIDC_INSECURE_ISSUERS: 'http://sso.lab',
      }),
    ).toEqual([]);
    expect(problemsOf({ VERITY_OIDC_ISSUER: 'https://sso.example.com' })).toEqual([
      'VERITY_OIDC_CLIENT_ID: is required with VERITY_OIDC_ISSUER',
    ]);
  });

  it.each([
    ['not JSON', '{platform', /VERITY_OIDC_GROUP_ROLES: must be JSON/],
    ['an unknown role', '{"platform":{"acme":"owner"}}', /roles: reader, snapshotter, member, admin/],
    ['a group naming no organization', '{"platform":{}}', /names no organization/],
    ['a list', '["platform"]', /must map groups/],
  ])('refuses group roles that are %s', (_what, value, message) => {
    const problems = problemsOf({ VERITY_OIDC_GROUP_ROLES: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });
});

describe('roles from groups', () => {
  const mapping = {
    platform: { acme: 'admin' as const },
    auditors: { acme: 'reader' as const, globex: 'reader' as const },
    devs: { acme: 'member' as const },
  };

  it('gives the highest role any group gives, per organization', () => {
    expect(Object.fromEntries(rolesFromGroups(mapping, ['auditors', 'devs']))).toEqual({
      acme: 'member',
      globex: 'reader',
    });
    expect(Object.fromEntries(rolesFromGroups(mapping, ['devs', 'platform', 'auditors']))).toEqual({
      acme: 'admin',
      globex: 'reader',
    });
  });

  it('gives nothing for unmapped groups, and ignores inherited object keys', () => {
    expect(rolesFromGroups(mapping, ['marketing', '__proto__', 'constructor', 'toString']).size).toBe(0);
  });
});
