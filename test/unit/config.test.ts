/** Configuration: defaults, files for secrets, and every bad variable reported at once. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/api/src/config.js';

describe('loadConfig', () => {
  it('starts with defaults on an empty environment: port 8080, embedded database in ./data', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: './data',
      logLevel: 'info',
      publicUrl: 'http://localhost:8080',
      bodyLimitBytes: 10 * 1024 * 1024,
      rateLimitPerMinute: 3000,
    });
  });

  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        LOG_LEVEL: 'loud',
        VERITY_BOOTSTRAP_API_KEY: 'short',
        VERITY_PUBLIC_URL: 'not a url',
        VERITY_TRUST_PROXY: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = (error as ConfigError).problems.map((p) => p.split(':')[0]).sort();
    expect(names).toEqual([
      'DATABASE_URL',
      'LOG_LEVEL',
      'PORT',
      'VERITY_BOOTSTRAP_API_KEY',
      'VERITY_PUBLIC_URL',
      'VERITY_TRUST_PROXY',
    ]);
    expect((error as ConfigError).message).toMatch(/^Invalid configuration:\n {2}- /);
  });

  it('bounds evidence files by the upload limit unless VERITY_EVIDENCE_MAX_BYTES says otherwise', () => {
    expect(loadConfig({ VERITY_UPLOAD_LIMIT_BYTES: '5000' }).evidenceMaxBytes).toBe(5000);
    expect(loadConfig({ VERITY_EVIDENCE_MAX_BYTES: '2048' }).evidenceMaxBytes).toBe(2048);
    expect(loadConfig({}).jqTimeoutMs).toBe(2000);
    expect(() => loadConfig({ VERITY_EVIDENCE_MAX_BYTES: '10', VERITY_JQ_TIMEOUT_MS: 'soon' })).toThrow(
      /VERITY_EVIDENCE_MAX_BYTES[\s\S]*VERITY_JQ_TIMEOUT_MS/,
    );
  });

  it('requires an organization for a bootstrap key', () => {
    expect(() => loadConfig({ VERITY_BOOTSTRAP_API_KEY: 'x'.repeat(32) })).toThrow(/VERITY_BOOTSTRAP_ORG/);
  });

  it('reads secrets from *_FILE variables and refuses both forms at once', () => {
    const files: Record<string, string> = {
      '/run/secrets/key': 'k'.repeat(40) + '\n',
      '/run/secrets/db': 'postgres://db/verity',
    };
    const read = (p: string) => {
      const v = files[p];
      if (v === undefined) {
        throw new Error('ENOENT');
      }
      return v;
    };
    const c = loadConfig(
      {
        VERITY_BOOTSTRAP_ORG: 'acme',
        VERITY_BOOTSTRAP_API_KEY_FILE: '/run/secrets/key',
        DATABASE_URL_FILE: '/run/secrets/db',
      },
      read,
    );
    expect(c.bootstrapApiKey).toBe('k'.repeat(40));
    expect(c.databaseUrl).toBe('postgres://db/verity');
    expect(() =>
      loadConfig({ DATABASE_URL: 'postgres://a/b', DATABASE_URL_FILE: '/run/secrets/db' }, read),
    ).toThrow(/use one/);
    expect(() => loadConfig({ DATABASE_URL_FILE: '/missing' }, read)).toThrow(/cannot read '\/missing'/);
  });

  it('reads the encryption secret from its variable or file, and refuses a short one', () => {
    expect(loadConfig({}).encryptionSecret).toBeUndefined();
    const secret = 's'.repeat(44);
    expect(loadConfig({ VERITY_ENCRYPTION_SECRET: secret }).encryptionSecret).toBe(secret);
    const read = (p: string) => (p === '/run/secrets/enc' ? `${secret}\n` : '');
    expect(loadConfig({ VERITY_ENCRYPTION_SECRET_FILE: '/run/secrets/enc' }, read).encryptionSecret).toBe(
      secret,
    );
    expect(() => loadConfig({ VERITY_ENCRYPTION_SECRET: 'short' })).toThrow(
      /VERITY_ENCRYPTION_SECRET: must be at least 32 characters/,
    );
  });

  it('trims the public URL and keeps rate limiting switchable', () => {
    const c = loadConfig({
      VERITY_PUBLIC_URL: 'https://verity.example.com/',
      VERITY_RATE_LIMIT_PER_MINUTE: '0',
    });
    expect(c.publicUrl).toBe('https://verity.example.com');
    expect(c.rateLimitPerMinute).toBe(0);
  });

  it('keeps 20,000 read views by default, none with 0, and refuses a negative count', () => {
    expect(loadConfig({}).readCacheEntries).toBe(20_000);
    expect(loadConfig({ VERITY_READ_CACHE_ENTRIES: '0' }).readCacheEntries).toBe(0);
    expect(() => loadConfig({ VERITY_READ_CACHE_ENTRIES: '-1' })).toThrow(/VERITY_READ_CACHE_ENTRIES/);
  });

  it('trusts no proxy, a hop count, or proxy addresses; never every hop', () => {
    const trust = (v: string) => loadConfig({ VERITY_TRUST_PROXY: v }).trustProxy;
    expect(loadConfig({}).trustProxy).toEqual({ kind: 'none' });
    expect(trust('false')).toEqual({ kind: 'none' });
    expect(trust('0')).toEqual({ kind: 'none' });
    expect(trust('2')).toEqual({ kind: 'hops', hops: 2, fromTrue: false });
    expect(trust('true')).toEqual({ kind: 'hops', hops: 1, fromTrue: true });
    expect(trust(' 10.0.0.0/8, fd00::/8 ,192.168.1.4, loopback')).toEqual({
      kind: 'addresses',
      addresses: ['10.0.0.0/8', 'fd00::/8', '192.168.1.4', 'loopback'],
    });
    expect(() => trust('17')).toThrow(/VERITY_TRUST_PROXY: a hop count must be between 1 and 16/);
    expect(() => trust('10.0.0.0/33, ingress.local')).toThrow(
      /VERITY_TRUST_PROXY: .*'10\.0\.0\.0\/33', 'ingress\.local'/,
    );
  });

  it('gives an organization ten keys worth of requests unless told, and caps its accounts and keys', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      rateLimitPerOrgPerMinute: 30_000,
      maxServiceAccountsPerOrg: 500,
      maxActiveKeysPerOrg: 2000,
    });
    expect(loadConfig({ VERITY_RATE_LIMIT_PER_MINUTE: '100' }).rateLimitPerOrgPerMinute).toBe(1000);
    expect(loadConfig({ VERITY_RATE_LIMIT_PER_ORG_PER_MINUTE: '0' }).rateLimitPerOrgPerMinute).toBe(0);
    expect(() =>
      loadConfig({ VERITY_MAX_SERVICE_ACCOUNTS_PER_ORG: '0', VERITY_MAX_ACTIVE_KEYS_PER_ORG: 'many' }),
    ).toThrow(/VERITY_MAX_SERVICE_ACCOUNTS_PER_ORG[\s\S]*VERITY_MAX_ACTIVE_KEYS_PER_ORG/);
  });
});
