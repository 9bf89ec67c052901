/** Operator configuration: defaults, the Secret-mounted key file, and every bad variable at once. */
import { describe, expect, it } from 'vitest';
import { loadOperatorConfig, tokenReader } from '../../services/operator/src/config.js';
import { problemsOf as configProblems } from '../helpers/config.js';

const BASE = { VERITY_API_URL: 'http://verity:8080/', VERITY_ORG: 'acme', VERITY_API_TOKEN: 'k' };

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

const problemsOf = (env: Record<string, string>, files: Record<string, string> = {}) =>
  configProblems(loadOperatorConfig, env, files);

describe('operator configuration', () => {
  it('fills the defaults the agent chart relies on, watching only its own namespace', () => {
    const inPod = (p: string) => {
      if (p === SA_NAMESPACE) {
        return 'verity-system\n';
      }
      throw new Error('ENOENT');
    };
    expect(loadOperatorConfig(BASE, inPod)).toEqual({
      apiUrl: 'http://verity:8080',
      org: 'acme',
      token: { kind: 'value', value: 'k' },
      clusterWide: false,
      watchNamespaces: ['verity-system'],
      namespaces: [],
      secretNames: [],
      requeueIntervalMs: 300_000,
      workers: 4,
      retryBaseMs: 1000,
      retryMaxMs: 300_000,
      port: 8082,
      host: '0.0.0.0',
      logLevel: 'info',
      shutdownTimeoutMs: 10_000,
    });
  });

  it('reads the namespaces, the interval and the key file as the chart sets them', () => {
    const files = { '/var/run/secrets/verity/token': 'from-file\n' };
    const config = loadOperatorConfig(
      {
        VERITY_API_URL: 'https://verity.example.com',
        VERITY_ORG: 'acme',
        VERITY_API_TOKEN_FILE: '/var/run/secrets/verity/token',
        VERITY_WATCH_NAMESPACES: 'team-a, team-b,',
        VERITY_REQUEUE_INTERVAL_SECONDS: '60',
        VERITY_OPERATOR_PORT: '9000',
        LOG_LEVEL: 'debug',
      },
      (p) => files[p as keyof typeof files],
    );
    expect(config).toMatchObject({
      token: { kind: 'file', path: '/var/run/secrets/verity/token' },
      watchNamespaces: ['team-a', 'team-b'],
      requeueIntervalMs: 60_000,
      port: 9000,
      logLevel: 'debug',
    });
    // The file is read on every request, so a rotated Secret takes effect without a restart.
    let content = 'one\n';
    const read = tokenReader(config.token, () => content);
    expect(read()).toBe('one');
    content = 'two';
    expect(read()).toBe('two');
  });

  it('lists every bad variable at once', () => {
    expect(
      problemsOf({
        VERITY_API_URL: 'verity:8080',
        VERITY_ORG: 'bad org',
        VERITY_WATCH_NAMESPACES: 'ok,Not_A_Namespace',
        VERITY_REQUEUE_INTERVAL_SECONDS: '0',
        VERITY_OPERATOR_PORT: 'http',
        LOG_LEVEL: 'loud',
      }),
    ).toEqual([
      'VERITY_API_URL: must be an http or https URL',
      'VERITY_ORG: must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$',
      'VERITY_WATCH_NAMESPACES: must be a comma list of namespace names, or * for every namespace',
      'VERITY_REQUEUE_INTERVAL_SECONDS: must be an integer between 1 and 86400',
      'VERITY_OPERATOR_PORT: must be an integer between 0 and 65535',
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
      'VERITY_API_TOKEN: required, or VERITY_API_TOKEN_FILE naming a file that holds it',
    ]);
  });

  it('names the missing variables and an unreadable or empty key file', () => {
    expect(problemsOf({})).toEqual([
      'VERITY_API_URL: required (the Verity server, e.g. http://verity:8080)',
      'VERITY_ORG: required (the organization the resources belong to)',
      'VERITY_API_TOKEN: required, or VERITY_API_TOKEN_FILE naming a file that holds it',
    ]);
    expect(
      problemsOf({
        ...BASE,
        VERITY_WATCH_NAMESPACES: 'apps',
        VERITY_API_TOKEN: '',
        VERITY_API_TOKEN_FILE: '/nope',
      }),
    ).toEqual(["VERITY_API_TOKEN_FILE: cannot read '/nope': ENOENT: no such file"]);
    expect(
      problemsOf(
        { ...BASE, VERITY_WATCH_NAMESPACES: 'apps', VERITY_API_TOKEN: '', VERITY_API_TOKEN_FILE: '/empty' },
        { '/empty': ' \n' },
      ),
    ).toEqual(["VERITY_API_TOKEN_FILE: '/empty' is empty"]);
    expect(
      problemsOf({ ...BASE, VERITY_WATCH_NAMESPACES: 'apps', VERITY_API_TOKEN_FILE: '/t' }, { '/t': 'x' }),
    ).toEqual(['VERITY_API_TOKEN: set both VERITY_API_TOKEN and VERITY_API_TOKEN_FILE; use one']);
  });
});

describe('the namespaces the operator watches, and the organization of each', () => {
  const files = {
    '/keys/team-a/token': 'key-a\n',
    '/keys/team-b/token': 'key-b',
    '/keys/empty/token': ' \n',
  };
  const load = (env: Record<string, string>) =>
    loadOperatorConfig({ ...BASE, ...env }, (p) => {
      if (p in files) {
        return files[p as keyof typeof files];
      }
      throw new Error('ENOENT: no such file');
    });
  const TEAMS = JSON.stringify([
    { namespace: 'team-a', org: 'acme', tokenFile: '/keys/team-a/token' },
    { namespace: 'team-b', org: 'globex', tokenFile: '/keys/team-b/token' },
  ]);

  it('maps each namespace of VERITY_OPERATOR_NAMESPACES to its organization and key file', () => {
    const config = load({ VERITY_OPERATOR_NAMESPACES: TEAMS });
    expect(config).toMatchObject({
      clusterWide: false,
      watchNamespaces: [],
      namespaces: [
        { namespace: 'team-a', org: 'acme', token: { kind: 'file', path: '/keys/team-a/token' } },
        { namespace: 'team-b', org: 'globex', token: { kind: 'file', path: '/keys/team-b/token' } },
      ],
    });
    // Alongside namespaces that go to VERITY_ORG with the default key.
    expect(load({ VERITY_OPERATOR_NAMESPACES: TEAMS, VERITY_WATCH_NAMESPACES: 'shared' })).toMatchObject({
      watchNamespaces: ['shared'],
      namespaces: [{ namespace: 'team-a' }, { namespace: 'team-b' }],
    });
  });

  it('watches every namespace only when told so with *', () => {
    expect(load({ VERITY_WATCH_NAMESPACES: '*' })).toMatchObject({
      clusterWide: true,
      watchNamespaces: [],
      namespaces: [],
    });
  });

  it('refuses a bad list, a namespace listed twice, and an unreadable or empty key file', () => {
    expect(problemsOf({ ...BASE, VERITY_OPERATOR_NAMESPACES: '{nope' })).toEqual([
      'VERITY_OPERATOR_NAMESPACES: must be a JSON list of {namespace, org, tokenFile}',
    ]);
    expect(
      problemsOf({
        ...BASE,
        VERITY_OPERATOR_NAMESPACES: JSON.stringify([
          { namespace: 'Team_A', org: 'bad org', tokenFile: '/k' },
          { namespace: 'team-b', org: 'globex', token: 'inline' },
        ]),
      }),
    ).toEqual([
      'VERITY_OPERATOR_NAMESPACES: 0.namespace: must be a namespace name',
      'VERITY_OPERATOR_NAMESPACES: 0.org: must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$',
      'VERITY_OPERATOR_NAMESPACES: 1.tokenFile: Invalid input: expected string, received undefined',
      'VERITY_OPERATOR_NAMESPACES: 1: Unrecognized key: "token"',
    ]);
    expect(
      problemsOf(
        {
          ...BASE,
          VERITY_WATCH_NAMESPACES: 'team-a',
          VERITY_OPERATOR_NAMESPACES: JSON.stringify([
            { namespace: 'team-a', org: 'acme', tokenFile: '/keys/team-a/token' },
            { namespace: 'team-b', org: 'globex', tokenFile: '/missing' },
            { namespace: 'team-c', org: 'initech', tokenFile: '/keys/empty/token' },
          ]),
        },
        files,
      ),
    ).toEqual([
      'VERITY_OPERATOR_NAMESPACES: namespace team-a is listed twice (it maps to one organization)',
      "VERITY_OPERATOR_NAMESPACES: team-b: cannot read '/missing': ENOENT: no such file",
      "VERITY_OPERATOR_NAMESPACES: team-c: '/keys/empty/token' is empty",
    ]);
  });

  it('refuses * with per-namespace organizations, and no namespace at all outside a pod', () => {
    expect(
      problemsOf({ ...BASE, VERITY_WATCH_NAMESPACES: '*', VERITY_OPERATOR_NAMESPACES: TEAMS }, files),
    ).toEqual([
      'VERITY_OPERATOR_NAMESPACES: cannot be combined with VERITY_WATCH_NAMESPACES=*, which reconciles every namespace into VERITY_ORG',
    ]);
    expect(problemsOf(BASE)).toEqual([
      'VERITY_WATCH_NAMESPACES: required outside a pod (a comma list of namespaces, or * for every namespace)',
    ]);
    expect(problemsOf({ ...BASE, VERITY_WATCH_NAMESPACES: 'a,*' })).toEqual([
      'VERITY_WATCH_NAMESPACES: must be a comma list of namespace names, or * for every namespace',
    ]);
  });
});
