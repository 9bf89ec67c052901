/**
 * Reporter configuration: the multi-environment file of `kosli snapshot k8s --config-file` (its
 * valid and invalid fixtures), the single-environment variables, and every problem at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadReporterConfig, parseEnvironmentsFile } from '../../services/reporter/src/config.js';
import { problemsOf as configProblems } from '../helpers/config.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'k8s-config');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const BASE = { VERITY_API_URL: 'http://verity:8080/', VERITY_ORG: 'acme', VERITY_API_TOKEN: 'k' };

const problemsOf = (env: Record<string, string>, files: Record<string, string> = {}) =>
  configProblems(loadReporterConfig, env, files);

describe('the multi-environment config file', () => {
  it('accepts valid-multi.yaml: three environments with include, regex and exclude selections', () => {
    const { environments, problems } = parseEnvironmentsFile(fixture('valid-multi.yaml'));
    expect(problems).toEqual([]);
    expect(environments).toEqual([
      {
        name: 'prod-env',
        namespaces: ['prod-ns1', 'prod-ns2'],
        namespacesRegex: [],
        excludeNamespaces: [],
        excludeNamespacesRegex: [],
        labelSelector: undefined,
      },
      {
        name: 'staging-env',
        namespaces: [],
        namespacesRegex: ['^staging-.*'],
        excludeNamespaces: [],
        excludeNamespacesRegex: [],
        labelSelector: undefined,
      },
      {
        name: 'infra-env',
        namespaces: [],
        namespacesRegex: [],
        excludeNamespaces: ['prod-ns1', 'prod-ns2', 'default'],
        excludeNamespacesRegex: [],
        labelSelector: undefined,
      },
    ]);
  });

  it('accepts valid-single.yaml', () => {
    const { environments, problems } = parseEnvironmentsFile(fixture('valid-single.yaml'));
    expect(problems).toEqual([]);
    expect(environments.map((e) => [e.name, e.namespaces])).toEqual([['prod-env', ['prod-ns1', 'prod-ns2']]]);
  });

  it.each([
    [
      'conflicting-filters.yaml',
      /environments\[0\] \('bad-env'\): excludeNamespaces: cannot be combined with namespaces/,
    ],
    ['duplicate-names.yaml', /environments\[1\]: duplicate environment name 'prod-env'/],
    ['empty-environments.yaml', /'environments' must list at least one environment/],
    [
      'invalid-regex.yaml',
      /environments\[0\] \('bad-regex-env'\): namespacesRegex: invalid regex '\[invalid'/,
    ],
    ['invalid-yaml.yaml', /invalid YAML: .*line/],
    ['missing-name.yaml', /environments\[0\]\.name: missing required field 'name'/],
  ])('rejects %s naming the problem', (file, message) => {
    const { problems } = parseEnvironmentsFile(fixture(file));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('lists every problem of every entry, unknown fields and bad label selectors included', () => {
    const { problems } = parseEnvironmentsFile(
      [
        'environments:',
        '  - name: a',
        '    namespace: [prod]',
        '  - name: b',
        '    namespaces: [Not_A_Namespace]',
        '    excludeNamespacesRegex: ["(x"]',
        '  - name: c',
        '    labelSelector: "app in (web"',
        '  - name: "bad name!"',
        'extra: 1',
      ].join('\n'),
      'cfg',
    );
    expect(problems).toEqual([
      "cfg: unknown top-level field(s) 'extra'",
      "cfg: environments[0]: unknown field(s) 'namespace'",
      "cfg: environments[1] ('b'): excludeNamespacesRegex: cannot be combined with namespaces; use inclusions or exclusions, not both",
      "cfg: environments[1] ('b'): namespaces: 'Not_A_Namespace' is not a valid namespace name",
      expect.stringMatching(/^cfg: environments\[1\] \('b'\): excludeNamespacesRegex: invalid regex '\(x': /),
      "cfg: environments[2] ('c'): labelSelector: invalid label selector 'app in (web': expected ',' or ')' in the values of 'app in'",
      expect.stringMatching(/^cfg: environments\[3\] \('bad name!'\): name: 'bad name!' must match/),
    ]);
  });

  it('takes a label selector per environment', () => {
    const { environments, problems } = parseEnvironmentsFile(
      'environments:\n  - name: web\n    labelSelector: "app=web,tier notin (cache)"\n',
    );
    expect(problems).toEqual([]);
    expect(environments[0]!.labelSelector).toBe('app=web,tier notin (cache)');
  });
});

describe('loadReporterConfig', () => {
  it('reads one environment from variables, with defaults for the rest', () => {
    const c = loadReporterConfig({
      ...BASE,
      VERITY_ENVIRONMENT: 'prod',
      VERITY_NAMESPACES: 'a, b ,',
      VERITY_LABEL_SELECTOR: 'app=web',
      VERITY_HEARTBEAT_SECONDS: '300',
    });
    expect(c).toMatchObject({
      apiUrl: 'http://verity:8080',
      org: 'acme',
      token: { kind: 'value', value: 'k' },
      environments: [
        {
          name: 'prod',
          namespaces: ['a', 'b'],
          namespacesRegex: [],
          excludeNamespaces: [],
          excludeNamespacesRegex: [],
          labelSelector: 'app=web',
        },
      ],
      debounceMs: 2000,
      maxWaitMs: 10_000,
      heartbeatMs: 300_000,
      autoCreateEnvironments: false,
      port: 8081,
      logLevel: 'info',
    });
  });

  it('reads the environments from VERITY_REPORTER_CONFIG and the key from VERITY_API_TOKEN_FILE', () => {
    const c = loadReporterConfig(
      {
        ...BASE,
        VERITY_API_TOKEN: '',
        VERITY_API_TOKEN_FILE: '/secret/key',
        VERITY_REPORTER_CONFIG: '/cfg.yaml',
      },
      (p) => ({ '/secret/key': 'the-key\n', '/cfg.yaml': fixture('valid-multi.yaml') })[p]!,
    );
    expect(c.token).toEqual({ kind: 'file', path: '/secret/key' });
    expect(c.environments.map((e) => e.name)).toEqual(['prod-env', 'staging-env', 'infra-env']);
  });

  it('lists every bad variable at once', () => {
    expect(
      problemsOf({
        VERITY_API_URL: 'ftp://x',
        VERITY_ORG: '-bad',
        VERITY_API_TOKEN: 'a',
        VERITY_API_TOKEN_FILE: '/f',
        VERITY_ENVIRONMENT: 'prod',
        VERITY_NAMESPACES: 'a',
        VERITY_EXCLUDE_NAMESPACES_REGEX: '[x',
        VERITY_DEBOUNCE_MS: 'soon',
        VERITY_MAX_WAIT_MS: '10',
        VERITY_AUTO_CREATE_ENVIRONMENTS: 'maybe',
        VERITY_HEARTBEAT_SECONDS: '0',
        LOG_LEVEL: 'loud',
      }).map((p) => p.split(':')[0]),
    ).toEqual([
      'VERITY_API_URL',
      'VERITY_ORG',
      'VERITY_API_TOKEN',
      'VERITY_EXCLUDE_NAMESPACES_REGEX',
      'VERITY_EXCLUDE_NAMESPACES_REGEX',
      'VERITY_DEBOUNCE_MS',
      'VERITY_MAX_WAIT_MS',
      'LOG_LEVEL',
      'VERITY_HEARTBEAT_SECONDS',
      'VERITY_AUTO_CREATE_ENVIRONMENTS',
    ]);
  });

  it('requires the API, the organization, a key and an environment', () => {
    expect(problemsOf({})).toEqual([
      'VERITY_API_URL: required (the Verity server, e.g. http://verity:8080)',
      'VERITY_ORG: required (the organization to report to)',
      'VERITY_API_TOKEN: required, or VERITY_API_TOKEN_FILE naming a file that holds it',
      'VERITY_ENVIRONMENT: required (the environment to report), or VERITY_REPORTER_CONFIG',
    ]);
  });

  it('refuses single-environment variables next to a config file, and a missing or bad file', () => {
    expect(problemsOf({ ...BASE, VERITY_REPORTER_CONFIG: '/nope.yaml', VERITY_NAMESPACES: 'a' })).toEqual([
      'VERITY_NAMESPACES: cannot be used with VERITY_REPORTER_CONFIG; describe every environment in the file',
      "VERITY_REPORTER_CONFIG: cannot read '/nope.yaml': ENOENT: no such file",
    ]);
    expect(
      problemsOf(
        { ...BASE, VERITY_REPORTER_CONFIG: '/c.yaml' },
        { '/c.yaml': fixture('duplicate-names.yaml') },
      ),
    ).toEqual(["VERITY_REPORTER_CONFIG '/c.yaml': environments[1]: duplicate environment name 'prod-env'"]);
  });

  it('refuses an unreadable or empty key file', () => {
    expect(
      problemsOf(
        { ...BASE, VERITY_API_TOKEN: '', VERITY_API_TOKEN_FILE: '/k', VERITY_ENVIRONMENT: 'e' },
        { '/k': ' \n' },
      ),
    ).toEqual(["VERITY_API_TOKEN_FILE: '/k' is empty"]);
  });

  it('needs a maximum wait at least as long as the debounce', () => {
    expect(
      problemsOf({
        ...BASE,
        VERITY_ENVIRONMENT: 'e',
        VERITY_DEBOUNCE_MS: '5000',
        VERITY_MAX_WAIT_MS: '1000',
      }),
    ).toEqual(['VERITY_MAX_WAIT_MS: must be at least VERITY_DEBOUNCE_MS (5000), got 1000']);
  });
});
