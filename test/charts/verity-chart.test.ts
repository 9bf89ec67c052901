/**
 * charts/verity, rendered by a real helm: what the API pod gets (security, probes, storage,
 * secrets as files), what the chart refuses and why, and the alerts of its PrometheusRule.
 */
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { chartDir, expectRefused, helm, render, template, TEST_IMAGES, type K8sObject } from './helm.js';
import { schemaProblems } from './k8s-schemas.js';
import { CONFIG_VARIABLES, loadConfig } from '../../services/api/src/config.js';
import { ensureBootstrap } from '../../services/api/src/usecases/access/bootstrap.js';
import { createTestDatabase } from '../helpers/database.js';
import { publicKeys, trustedRoot } from '../helpers/sigstore.js';

const CHART = 'verity';
const PG = 'postgres://verity:pw@db:5432/verity';
const find = (objects: K8sObject[], kind: string, name?: string) =>
  objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const apiContainer = (objects: K8sObject[]) => find(objects, 'Deployment')!.spec.template.spec.containers[0];
const envOf = (objects: K8sObject[]) =>
  Object.fromEntries(apiContainer(objects).env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
/** The env entries with a literal value, as the API's configuration reads them. */
const literalEnvOf = (objects: K8sObject[]) =>
  Object.fromEntries(
    Object.entries(envOf(objects)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
/**
 * Where a file of the API container comes from: the mount holding it, the volume's Secret or
 * ConfigMap and key, and the content when the chart itself writes that object.
 */
const fileSource = (objects: K8sObject[], file: string) => {
  const dir = file.slice(0, file.lastIndexOf('/'));
  const mount = apiContainer(objects).volumeMounts.find((m: any) => m.mountPath === dir);
  const volume = find(objects, 'Deployment')!.spec.template.spec.volumes.find(
    (v: any) => v.name === mount.name,
  );
  const kind = volume.secret ? 'Secret' : 'ConfigMap';
  const name: string = volume.secret ? volume.secret.secretName : volume.configMap.name;
  const items: any[] = (volume.secret ?? volume.configMap).items;
  const key: string = items.find((i) => `${dir}/${i.path}` === file).key;
  const object = find(objects, kind, name);
  const content: string | undefined = object?.stringData?.[key] ?? object?.data?.[key];
  return { kind, name, key, content };
};
const CA_PEM = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBdzCCAR2gAwIBAgIUVmVyaXR5IHRlc3QgQ0E=',
  '-----END CERTIFICATE-----',
].join('\n');

describe('the API chart by default (embedded database)', async () => {
  const objects = await render(CHART);
  const deployment = find(objects, 'Deployment')!;
  const pod = deployment.spec.template.spec;
  const container = apiContainer(objects);

  it('runs hardened: non-root, read-only root, no escalation, no capabilities, seccomp RuntimeDefault', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext.capabilities.add).toBeUndefined();
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('probes /healthz for liveness and startup and /readyz for readiness on the API port', () => {
    expect(container.ports).toContainEqual({ name: 'http', containerPort: 8080, protocol: 'TCP' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  });

  it('keeps the embedded database on a kept claim mounted at VERITY_DATA_DIR, and /tmp on an emptyDir', () => {
    const env = envOf(objects);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.DATABASE_URL_FILE).toBeUndefined();
    const mounts = Object.fromEntries(container.volumeMounts.map((m: any) => [m.name, m.mountPath]));
    expect(mounts).toEqual({ tmp: '/tmp', data: env.VERITY_DATA_DIR, bootstrap: '/etc/verity/bootstrap' });
    const volumes = Object.fromEntries(pod.volumes.map((v: any) => [v.name, v]));
    const claim = find(objects, 'PersistentVolumeClaim')!;
    expect(volumes.data.persistentVolumeClaim.claimName).toBe(claim.metadata.name);
    expect(volumes.tmp.emptyDir).toBeDefined();
    expect(claim.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it('leaves sign-in, the outbound CA and the key-expiry sweep to the API defaults', () => {
    const env = envOf(objects);
    const set = Object.keys(env).filter((name) =>
      /^VERITY_(OIDC_|API_KEY_SIGN_IN|OUTBOUND_CA|KEY_EXPIRY)/.test(name),
    );
    expect(set).toEqual([]);
    const config = loadConfig(literalEnvOf(objects), () => 'k'.repeat(24));
    expect(config).toMatchObject({
      oidc: undefined,
      oidcInsecureIssuers: [],
      apiKeySignIn: true,
      outboundCa: undefined,
      keyExpirySweepMs: 600_000,
    });
  });

  it('replaces the pod with Recreate, so two processes never open the data directory', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('selects its pods with the Service and the PodDisruptionBudget', () => {
    const selector = deployment.spec.selector.matchLabels;
    expect(pod).toBeDefined();
    expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
    expect(find(objects, 'Service')!.spec.selector).toEqual(selector);
    expect(find(objects, 'PodDisruptionBudget')!.spec.selector.matchLabels).toEqual(selector);
  });

  it('exposes only the API port on its Service: /metrics (which names every tenant) has its own port', () => {
    const services = objects.filter((o) => o.kind === 'Service');
    expect(services).toHaveLength(1);
    expect(services[0]!.spec.ports).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
    ]);
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 9464, protocol: 'TCP' });
    expect(envOf(objects).VERITY_METRICS_PORT).toBe('9464');
    expect(envOf(objects).PORT).toBe('8080');
  });

  it('generates the admin key into a kept Secret and passes it as a file, so the API never logs one', async () => {
    const env = envOf(objects);
    expect(env.VERITY_BOOTSTRAP_API_KEY).toBeUndefined();
    expect(env.VERITY_BOOTSTRAP_ORG).toBe('default');
    const secret = find(objects, 'Secret', 'verity-bootstrap')!;
    expect(secret.metadata.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
    const key: string = secret.stringData['api-key'];
    expect(key).toMatch(/^vty_[A-Za-z0-9]{43}$/);
    const file: string = env.VERITY_BOOTSTRAP_API_KEY_FILE;
    const mount = container.volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    expect(volume.secret.secretName).toBe('verity-bootstrap');
    expect(`${mount.mountPath}/${volume.secret.items[0].path}`).toBe(file);
    expect(volume.secret.items[0].key).toBe('api-key');
    // What the API makes of it: a configured key, so the first start generates (and prints) none.
    const literal = Object.fromEntries(
      Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
    const config = loadConfig(literal, (path) => (path === file ? key : ''));
    expect(config).toMatchObject({ bootstrapOrg: 'default', bootstrapApiKey: key });
    const db = await createTestDatabase();
    try {
      const boot = await ensureBootstrap(db.db, {
        orgName: config.bootstrapOrg,
        apiKey: config.bootstrapApiKey,
        now: new Date(),
      });
      expect(boot).toMatchObject({ org: 'default', orgCreated: true, configuredKeyCreated: true });
      expect(boot.generatedKey).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('keeps the generated key across upgrades: it reads the release Secret back before making one', async () => {
    const helpers = await import('node:fs').then((fs) =>
      fs.readFileSync(`${chartDir(CHART)}/templates/_helpers.tpl`, 'utf8'),
    );
    expect(helpers).toMatch(
      /lookup "v1" "Secret" \.Release\.Namespace \(include "verity\.bootstrapSecretName" \.\)/,
    );
    const optedOut = await render(CHART, { values: { bootstrap: { generateKey: false } } });
    expect(find(optedOut, 'Secret')).toBeUndefined();
    expect(envOf(optedOut).VERITY_BOOTSTRAP_API_KEY_FILE).toBeUndefined();
  });

  it('creates neither HPA, NetworkPolicy, ServiceMonitor nor PrometheusRule', () => {
    const kinds = objects.map((o) => o.kind).sort();
    expect(kinds).toEqual([
      'Deployment',
      'PersistentVolumeClaim',
      'PodDisruptionBudget',
      'Secret',
      'Service',
      'ServiceAccount',
    ]);
  });
});

describe('the API chart refuses', () => {
  it('an install that names no image: no default points at a namespace of someone else', async () => {
    const refused = await template(CHART, { withoutImage: true });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'image.repository is required: the chart names no default image. Build Dockerfile.api, push it to a registry you control and set image.repository',
    );
    // An install as the README gives it, without the image: refused before anything is created.
    const installed = await helm([
      'install',
      'verity',
      chartDir(CHART),
      '--dry-run=client',
      '--namespace',
      'verity-system',
    ]);
    expect(installed.code).not.toBe(0);
    expect(installed.stderr).toContain('image.repository is required');
    // helm lint only warns of a missing required value; it names it all the same.
    const linted = await helm(['lint', chartDir(CHART)]);
    expect(linted.stdout + linted.stderr).toContain('image.repository is required');
    const named = await render(CHART, {
      withoutImage: true,
      set: ['image.repository=ghcr.io/acme/verity-api'],
    });
    expect(apiContainer(named).image).toMatch(/^ghcr\.io\/acme\/verity-api:/);
  });

  it('an image repository with a tag or a digest in it (they have values of their own)', async () => {
    await expectRefused(
      CHART,
      { image: { repository: 'ghcr.io/acme/verity-api:1.0' } },
      /repository/,
      'schema',
    );
  });

  it('more than one replica with the embedded database', async () => {
    await expectRefused(
      CHART,
      { replicaCount: 2 },
      /replicaCount=2 with the embedded database: it serves one replica only/,
      'template',
    );
  });

  it('an autoscaler with the embedded database', async () => {
    await expectRefused(
      CHART,
      { autoscaling: { enabled: true } },
      /autoscaling.enabled with the embedded database/,
      'template',
    );
  });

  it('neither PostgreSQL nor persistence', async () => {
    await expectRefused(
      CHART,
      { persistence: { enabled: false } },
      /No database: set database.url or database.existingSecret \(PostgreSQL\), or persistence.enabled=true/,
      'template',
    );
  });

  it('database.url together with database.existingSecret', async () => {
    await expectRefused(
      CHART,
      { database: { url: PG, existingSecret: 'db' } },
      /database.url and database.existingSecret are both set/,
      'template',
    );
  });

  it('a bootstrap key without the organization it administers', async () => {
    await expectRefused(CHART, { bootstrap: { existingSecret: 'key' } }, /needs bootstrap.org/, 'template');
  });

  it('an identity provider without the client Verity is at it', async () => {
    await expectRefused(
      CHART,
      { auth: { oidc: { issuer: 'https://login.example.com' } } },
      /auth.oidc.issuer needs auth.oidc.clientId/,
      'template',
    );
  });

  it('an identity provider over http not named as insecure (the API would not start)', async () => {
    await expectRefused(
      CHART,
      {
        auth: {
          oidc: {
            issuer: 'http://idp.lab/realms/verity',
            clientId: 'verity',
            insecureIssuers: ['http://other.lab'],
          },
        },
      },
      /auth.oidc.issuer http:\/\/idp.lab\/realms\/verity is http: use https, or name it in auth.oidc.insecureIssuers/,
      'template',
    );
  });

  it('the client secret both inline and from an existing Secret', async () => {
    await expectRefused(
      CHART,
      {
        auth: {
          oidc: {
            issuer: 'https://login.example.com',
            clientId: 'verity',
            clientSecret: 'inline',
            existingSecret: 'oidc',
          },
        },
      },
      /auth.oidc.clientSecret and auth.oidc.existingSecret are both set/,
      'template',
    );
  });

  it.each([
    [{ certificates: CA_PEM, existingSecret: 'ca' }],
    [{ certificates: CA_PEM, existingConfigMap: 'ca' }],
    [{ existingSecret: 'ca', existingConfigMap: 'ca' }],
  ])('two sources of the outbound CA %j', async (outboundCa) => {
    await expectRefused(
      CHART,
      { config: { outboundCa } },
      /config.outboundCa: set one of certificates, existingConfigMap and existingSecret/,
      'template',
    );
  });

  // values.schema.json: wrong types and unknown keys never reach the templates.
  it.each([
    [{ replicaCount: 'two' }, /replicaCount.*want integer|replicaCount.*integer/],
    [{ replicaCont: 2 }, /additional properties 'replicaCont' not allowed/],
    [{ config: { logLevel: 'verbose' } }, /logLevel/],
    [{ config: { trustProxy: 'yes' } }, /trustProxy/],
    [{ config: { trustProxy: '10.0.0.0/8, ingress' } }, /trustProxy/],
    [{ config: { maxActiveKeysPerOrg: 0 } }, /maxActiveKeysPerOrg/],
    [{ metrics: { token: 'short' } }, /token/],
    [{ service: { port: 70000 } }, /port/],
    [{ bootstrap: { org: 'acme', apiKey: 'short' } }, /apiKey/],
    [{ database: { url: 'mysql://db/verity' } }, /database\/url|url/],
    [{ persistence: { size: 'big' } }, /size/],
    [{ image: { pullPolicy: 'Sometimes' } }, /pullPolicy/],
    [{ auth: { oidc: { issuer: 'login.example.com' } } }, /issuer/],
    [{ auth: { oidc: { clientID: 'verity' } } }, /additional properties 'clientID' not allowed/],
    [{ auth: { oidc: { groupRoles: { devs: { acme: 'owner' } } } } }, /groupRoles\/devs\/acme/],
    [
      { auth: { oidc: { groupRoles: { devs: { '-acme': 'admin' } } } } },
      /groupRoles\/devs.*'-acme' not allowed/,
    ],
    [{ auth: { oidc: { groupRoles: { devs: {} } } } }, /groupRoles\/devs/],
    [{ auth: { oidc: { groupRoles: { devs: 'admin' } } } }, /groupRoles\/devs/],
    [{ auth: { oidc: { sessionIdleMinutes: 0 } } }, /sessionIdleMinutes/],
    [{ auth: { oidc: { sessionMaxHours: 2161 } } }, /sessionMaxHours/],
    [{ auth: { oidc: { insecureIssuers: 'http://idp.lab' } } }, /insecureIssuers/],
    [{ auth: { oidc: { insecureIssuers: ['http://a.lab,http://b.lab'] } } }, /insecureIssuers/],
    [{ auth: { apiKeySignIn: 'no' } }, /apiKeySignIn/],
    [{ config: { outboundCa: { certificates: 'not a certificate' } } }, /certificates/],
    [{ config: { outboundCa: 'PEM' } }, /outboundCa/],
    [{ config: { keyExpirySweepMs: 999 } }, /keyExpirySweepMs/],
    [{ config: { keyExpirySweepMs: 86_400_001 } }, /keyExpirySweepMs/],
  ])('the wrong value set %j', async (values, message) => {
    await expectRefused(CHART, values, message, 'schema');
  });
});

describe('the API chart on PostgreSQL', async () => {
  const objects = await render(CHART, {
    values: { database: { url: PG }, replicaCount: 3, bootstrap: { org: 'acme', apiKey: 'k'.repeat(24) } },
  });
  const pod = find(objects, 'Deployment')!.spec.template.spec;

  it('runs the replicas with a rolling update and no claim', () => {
    expect(find(objects, 'Deployment')!.spec.replicas).toBe(3);
    expect(find(objects, 'Deployment')!.spec.strategy.type).toBe('RollingUpdate');
    expect(find(objects, 'PersistentVolumeClaim')).toBeUndefined();
  });

  it('reads the URL and the bootstrap key from Secrets mounted as files, never from plain env', () => {
    const env = envOf(objects);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.VERITY_BOOTSTRAP_API_KEY).toBeUndefined();
    expect(env.VERITY_BOOTSTRAP_ORG).toBe('acme');
    const secrets = objects.filter((o) => o.kind === 'Secret');
    const mountOf = (file: string) => {
      const dir = file.slice(0, file.lastIndexOf('/'));
      const mount = apiContainer(objects).volumeMounts.find((m: any) => m.mountPath === dir);
      const volume = pod.volumes.find((v: any) => v.name === mount.name);
      const item = volume.secret.items.find((i: any) => `${dir}/${i.path}` === file);
      const secret = secrets.find((s) => s.metadata.name === volume.secret.secretName);
      return secret?.stringData?.[item.key];
    };
    expect(mountOf(env.DATABASE_URL_FILE)).toBe(PG);
    expect(mountOf(env.VERITY_BOOTSTRAP_API_KEY_FILE)).toBe('k'.repeat(24));
  });

  it('sets only variables the API reads, with values its configuration accepts', async () => {
    const tuned = await render(CHART, {
      values: {
        database: { url: PG, preparedStatements: false },
        notifications: { retentionDays: 7 },
        bootstrap: { org: 'acme', apiKey: 'k'.repeat(24) },
        config: {
          trustProxy: 1,
          rateLimitPerOrgPerMinute: 6000,
          maxServiceAccountsPerOrg: 50,
          maxActiveKeysPerOrg: 200,
          keyExpirySweepMs: 60_000,
          outboundCa: { certificates: `${CA_PEM}\n` },
        },
        metrics: { host: '0.0.0.0', token: 'm'.repeat(20) },
        auth: {
          apiKeySignIn: false,
          oidc: {
            issuer: 'http://idp.lab.internal/realms/verity/',
            clientId: 'verity-console',
            clientSecret: 'oidc-client-secret-value',
            scopes: 'openid email groups',
            groupsClaim: 'roles',
            providerName: 'Lab SSO',
            groupRoles: {
              'platform-admins': { acme: 'admin' },
              'dev.team': { acme: 'member', 'acme.staging': 'reader' },
            },
            sessionIdleMinutes: 45,
            sessionMaxHours: 8,
            insecureIssuers: ['http://idp.lab.internal/realms/verity/', 'http://ci.lab.internal'],
          },
        },
      },
    });
    const env = envOf(tuned);
    for (const name of Object.keys(env)) {
      expect(CONFIG_VARIABLES, name).toContain(name);
    }
    // Files the pod would mount from Secrets and ConfigMaps: their content as the chart writes it.
    const files: Record<string, string> = {};
    for (const name of Object.keys(env).filter((n) => n.endsWith('_FILE'))) {
      const source = fileSource(tuned, env[name]);
      expect(source.content, `${name} from ${source.kind} ${source.name}`).toBeDefined();
      files[env[name]] = source.content!;
    }
    expect(
      Object.keys(env)
        .filter((n) => n.endsWith('_FILE'))
        .sort(),
    ).toEqual([
      'DATABASE_URL_FILE',
      'VERITY_BOOTSTRAP_API_KEY_FILE',
      'VERITY_METRICS_TOKEN_FILE',
      'VERITY_OIDC_CLIENT_SECRET_FILE',
      'VERITY_OUTBOUND_CA_FILE',
    ]);
    const config = loadConfig(literalEnvOf(tuned), (path) => {
      if (!(path in files)) {
        throw new Error(`ENOENT: ${path}`);
      }
      return files[path]!;
    });
    expect(config.oidc).toEqual({
      issuer: 'http://idp.lab.internal/realms/verity/',
      clientId: 'verity-console',
      clientSecret: 'oidc-client-secret-value',
      scopes: 'openid email groups',
      groupsClaim: 'roles',
      providerName: 'Lab SSO',
      groupRoles: {
        'platform-admins': { acme: 'admin' },
        'dev.team': { acme: 'member', 'acme.staging': 'reader' },
      },
      sessionIdleMs: 45 * 60_000,
      sessionMaxMs: 8 * 3_600_000,
    });
    expect(config).toMatchObject({
      oidcInsecureIssuers: ['http://idp.lab.internal/realms/verity', 'http://ci.lab.internal'],
      apiKeySignIn: false,
      keyExpirySweepMs: 60_000,
      outboundCa: CA_PEM,
      databaseUrl: PG,
      dbPreparedStatements: false,
      notificationRetentionDays: 7,
      bootstrapOrg: 'acme',
      trustProxy: { kind: 'hops', hops: 1, fromTrue: false },
      rateLimitPerOrgPerMinute: 6000,
      maxServiceAccountsPerOrg: 50,
      maxActiveKeysPerOrg: 200,
      metricsHost: '0.0.0.0',
      metricsToken: 'm'.repeat(20),
    });
  });

  it('keeps the metrics token in a Secret, mounts it as a file, and has the ServiceMonitor send it', async () => {
    const token = 't'.repeat(24);
    const rendered = await render(CHART, {
      values: { database: { url: PG }, metrics: { token }, serviceMonitor: { enabled: true } },
    });
    const env = envOf(rendered);
    expect(env.VERITY_METRICS_TOKEN).toBeUndefined();
    expect(env.VERITY_METRICS_TOKEN_FILE).toBe('/etc/verity/metrics/token');
    const secret = find(rendered, 'Secret', 'verity-metrics')!;
    expect(secret.stringData).toEqual({ 'metrics-token': token });
    const volume = find(rendered, 'Deployment')!.spec.template.spec.volumes.find(
      (v: any) => v.name === 'metrics-token',
    );
    expect(volume.secret).toMatchObject({
      secretName: 'verity-metrics',
      items: [{ key: 'metrics-token', path: 'token' }],
    });
    const endpoint = find(rendered, 'ServiceMonitor')!.spec.endpoints[0];
    expect(endpoint.authorization).toEqual({
      type: 'Bearer',
      credentials: { name: 'verity-metrics', key: 'metrics-token' },
    });
    // An existing Secret is only referenced; without a token nothing is sent or mounted.
    const existing = await render(CHART, {
      values: {
        database: { url: PG },
        metrics: { existingSecret: 'scrape', existingSecretKey: 'tok' },
        serviceMonitor: { enabled: true },
      },
    });
    expect(find(existing, 'Secret', 'verity-metrics')).toBeUndefined();
    expect(find(existing, 'ServiceMonitor')!.spec.endpoints[0].authorization.credentials).toEqual({
      name: 'scrape',
      key: 'tok',
    });
    const plain = await render(CHART, {
      values: { database: { url: PG }, serviceMonitor: { enabled: true } },
    });
    expect(find(plain, 'ServiceMonitor')!.spec.endpoints[0].authorization).toBeUndefined();
    expect(envOf(plain).VERITY_METRICS_TOKEN_FILE).toBeUndefined();
  });

  it('keeps the client secret of the identity provider in a Secret, read from a file, never plain env', async () => {
    const secretValue = 'client-secret-never-in-env';
    const oidc = { issuer: 'https://login.example.com', clientId: 'verity' };
    const rendered = await render(CHART, {
      values: { database: { url: PG }, auth: { oidc: { ...oidc, clientSecret: secretValue } } },
    });
    const env = envOf(rendered);
    expect(env.VERITY_OIDC_CLIENT_SECRET).toBeUndefined();
    expect(env.VERITY_OIDC_CLIENT_SECRET_FILE).toBe('/etc/verity/oidc/client-secret');
    expect(JSON.stringify(find(rendered, 'Deployment'))).not.toContain(secretValue);
    expect(fileSource(rendered, env.VERITY_OIDC_CLIENT_SECRET_FILE)).toEqual({
      kind: 'Secret',
      name: 'verity-oidc',
      key: 'client-secret',
      content: secretValue,
    });
    const config = loadConfig(literalEnvOf(rendered), (path) =>
      path === env.VERITY_OIDC_CLIENT_SECRET_FILE ? secretValue : PG,
    );
    expect(config.oidc).toMatchObject({
      ...oidc,
      clientSecret: secretValue,
      providerName: 'login.example.com',
    });

    // An existing Secret is only referenced; without either, a public client: nothing mounted.
    const existing = await render(CHART, {
      values: {
        database: { url: PG },
        auth: { oidc: { ...oidc, existingSecret: 'sso', existingSecretKey: 'secret' } },
      },
    });
    expect(find(existing, 'Secret', 'verity-oidc')).toBeUndefined();
    expect(fileSource(existing, envOf(existing).VERITY_OIDC_CLIENT_SECRET_FILE)).toMatchObject({
      kind: 'Secret',
      name: 'sso',
      key: 'secret',
    });
    const publicClient = await render(CHART, { values: { database: { url: PG }, auth: { oidc } } });
    expect(envOf(publicClient).VERITY_OIDC_CLIENT_SECRET_FILE).toBeUndefined();
    expect(find(publicClient, 'Secret', 'verity-oidc')).toBeUndefined();
    expect(apiContainer(publicClient).volumeMounts.map((m: any) => m.name)).not.toContain(
      'oidc-client-secret',
    );
    const noSecret = loadConfig(literalEnvOf(publicClient), () => PG);
    expect(noSecret.oidc).toMatchObject({ ...oidc, clientSecret: undefined });
  });

  it('mounts the outbound CA from its own ConfigMap, or an existing ConfigMap or Secret', async () => {
    const inline = await render(CHART, {
      values: { database: { url: PG }, config: { outboundCa: { certificates: CA_PEM } } },
    });
    const file = envOf(inline).VERITY_OUTBOUND_CA_FILE;
    expect(file).toBe('/etc/verity/outbound-ca/ca.crt');
    expect(fileSource(inline, file)).toEqual({
      kind: 'ConfigMap',
      name: 'verity-outbound-ca',
      key: 'ca.crt',
      content: `${CA_PEM}\n`,
    });
    expect(await schemaProblems(find(inline, 'ConfigMap')!)).toEqual([]);
    for (const [source, kind] of [
      ['existingConfigMap', 'ConfigMap'],
      ['existingSecret', 'Secret'],
    ] as const) {
      const existing = await render(CHART, {
        values: {
          database: { url: PG },
          config: { outboundCa: { [source]: 'internal-ca', existingKey: 'bundle.pem' } },
        },
      });
      expect(find(existing, 'ConfigMap')).toBeUndefined();
      expect(fileSource(existing, envOf(existing).VERITY_OUTBOUND_CA_FILE)).toEqual({
        kind,
        name: 'internal-ca',
        key: 'bundle.pem',
        content: undefined,
      });
    }
    // A change of the certificates rolls the pods.
    const other = await render(CHART, {
      values: {
        database: { url: PG },
        config: { outboundCa: { certificates: CA_PEM.replace('MIIB', 'MIIC') } },
      },
    });
    const checksum = (objects: K8sObject[]) =>
      find(objects, 'Deployment')!.spec.template.metadata.annotations['checksum/configmap'];
    expect(checksum(other)).not.toBe(checksum(inline));
  });

  it('mounts the Sigstore trusted root and public keys from its own ConfigMap, or an existing one', async () => {
    const root = trustedRoot();
    const keys = publicKeys();
    const inline = await render(CHART, {
      values: { database: { url: PG }, config: { sigstore: { trustedRoot: root, publicKeys: keys } } },
    });
    const env = envOf(inline);
    expect(env.VERITY_SIGSTORE_TRUSTED_ROOT_FILE).toBe('/etc/verity/sigstore/trusted_root.json');
    expect(env.VERITY_SIGSTORE_PUBLIC_KEYS_FILE).toBe('/etc/verity/sigstore/public_keys.json');
    const files: Record<string, string> = {};
    for (const name of ['VERITY_SIGSTORE_TRUSTED_ROOT_FILE', 'VERITY_SIGSTORE_PUBLIC_KEYS_FILE']) {
      const source = fileSource(inline, env[name]);
      expect(source).toMatchObject({ kind: 'ConfigMap', name: 'verity-sigstore' });
      files[env[name]] = source.content!;
    }
    expect(await schemaProblems(find(inline, 'ConfigMap', 'verity-sigstore')!)).toEqual([]);
    const config = loadConfig(literalEnvOf(inline), (path) => files[path] ?? PG);
    expect(JSON.parse(config.sigstoreTrustedRoot!)).toEqual(JSON.parse(root));
    expect(JSON.parse(config.sigstorePublicKeys!)).toEqual(JSON.parse(keys));
    // Only the trusted root, from an existing ConfigMap under its own key: nothing written.
    const existing = await render(CHART, {
      values: {
        database: { url: PG },
        config: { sigstore: { existingConfigMap: 'sigstore-trust', existingTrustedRootKey: 'root.json' } },
      },
    });
    expect(find(existing, 'ConfigMap', 'verity-sigstore')).toBeUndefined();
    expect(envOf(existing).VERITY_SIGSTORE_PUBLIC_KEYS_FILE).toBeUndefined();
    expect(fileSource(existing, envOf(existing).VERITY_SIGSTORE_TRUSTED_ROOT_FILE)).toEqual({
      kind: 'ConfigMap',
      name: 'sigstore-trust',
      key: 'root.json',
      content: undefined,
    });
    await expectRefused(
      CHART,
      { config: { sigstore: { trustedRoot: root, existingConfigMap: 'sigstore-trust' } } },
      /config.sigstore: set trustedRoot\/publicKeys or existingConfigMap, not both/,
      'template',
    );
  });

  it('uses an existing Secret and key when given, and writes none', async () => {
    const existing = await render(CHART, {
      values: { database: { existingSecret: 'pg', existingSecretKey: 'uri' }, replicaCount: 2 },
    });
    // Only the generated bootstrap key's: nothing holds the database URL.
    expect(existing.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([
      'verity-bootstrap',
    ]);
    const volume = find(existing, 'Deployment')!.spec.template.spec.volumes.find(
      (v: any) => v.name === 'database',
    );
    expect(volume.secret).toMatchObject({ secretName: 'pg', items: [{ key: 'uri', path: 'url' }] });
  });

  it('scales with an autoscaler instead of a fixed replica count', async () => {
    const scaled = await render(CHART, {
      values: { database: { url: PG }, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 } },
    });
    expect(find(scaled, 'Deployment')!.spec.replicas).toBeUndefined();
    expect(find(scaled, 'HorizontalPodAutoscaler')!.spec).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
  });
});

describe('the PrometheusRule', async () => {
  const objects = await render(CHART, {
    values: {
      database: { url: PG },
      prometheusRule: { enabled: true, reporterHeartbeatSeconds: 300 },
      serviceMonitor: { enabled: true },
    },
  });
  const rules: any[] = find(objects, 'PrometheusRule')!.spec.groups[0].rules;
  const byAlert = Object.fromEntries(rules.map((r) => [r.alert, r]));

  it('alerts on non-compliance, a silent reporter, failing notifications, the API error rate and deployments left unrecorded', () => {
    expect(Object.keys(byAlert).sort()).toEqual([
      'VerityApiErrorRate',
      'VerityDeploymentsBehind',
      'VerityEnvironmentNonCompliant',
      'VerityNotificationsFailing',
      'VerityReporterSilent',
    ]);
    expect(byAlert.VerityEnvironmentNonCompliant.expr).toMatch(/verity_environment_compliant\{.*\}\) == 0$/);
    expect(byAlert.VerityNotificationsFailing.expr).toMatch(
      /verity_notifications_total\{.*result="failure"\}/,
    );
    expect(byAlert.VerityApiErrorRate.expr).toMatch(/verity_http_requests_total\{.*status=~"5\.\."\}/);
    expect(byAlert.VerityDeploymentsBehind.expr).toMatch(
      /verity_deployments_deferred_age_seconds\{.*\}\) > 600$/,
    );
  });

  it('fires for a reporter silent longer than twice its heartbeat', () => {
    expect(byAlert.VerityReporterSilent.expr).toMatch(
      /verity_environment_last_report_age_seconds\{.*\}\) > 600$/,
    );
  });

  it('selects the series of this release, as the ServiceMonitor labels them', () => {
    for (const rule of rules) {
      expect(rule.expr).toContain('job="verity",namespace="verity-system"');
    }
    const monitor = find(objects, 'ServiceMonitor')!;
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    expect(monitor.spec.endpoints[0].relabelings).toContainEqual({
      action: 'replace',
      targetLabel: 'job',
      replacement: 'verity',
    });
  });

  it('scrapes the metrics port through a Service of its own, which the API Service never selects as', () => {
    const monitor = find(objects, 'ServiceMonitor')!;
    const services = objects.filter((o) => o.kind === 'Service');
    const selected = services.filter((svc) =>
      Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => svc.metadata.labels?.[k] === v),
    );
    expect(selected.map((svc) => svc.metadata.name)).toEqual(['verity-metrics']);
    expect(selected[0]!.spec.ports).toEqual([
      { name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    expect(selected[0]!.spec.selector).toEqual(find(objects, 'Deployment')!.spec.selector.matchLabels);
    const api = services.find((svc) => svc.metadata.name === 'verity')!;
    expect(api.spec.ports.map((p: any) => p.targetPort)).toEqual(['http']);
  });

  it('lets the network policy admit Prometheus to the metrics port on its own rule', async () => {
    const prometheus = [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }];
    const api = [{ podSelector: { matchLabels: { app: 'gateway' } } }];
    const rendered = await render(CHART, {
      values: { networkPolicy: { enabled: true, ingressFrom: api, metricsFrom: prometheus } },
    });
    const ingress = find(rendered, 'NetworkPolicy')!.spec.ingress;
    expect(ingress).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }], from: api },
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: prometheus },
    ]);
  });

  it('writes every expression as valid PromQL', () => {
    const parsesCleanly = (expr: string) => {
      let ok = true;
      promql.parse(expr).iterate({ enter: (n) => void (n.type.isError && (ok = false)) });
      return ok;
    };
    expect(parsesCleanly('sum(rate(x{a="b"[5m]))'), 'the PromQL check can fail').toBe(false);
    for (const rule of rules) {
      expect(parsesCleanly(rule.expr), rule.expr).toBe(true);
    }
  });
});

describe('NOTES.txt', () => {
  it('tells how to reach the API, where the key is, and how to install the agent next', async () => {
    const result = await helm([
      'install',
      'verity',
      chartDir(CHART),
      '--dry-run=client',
      '--namespace',
      'verity-system',
      '--set',
      `image.repository=${TEST_IMAGES[CHART]}`,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
    expect(notes).toContain('kubectl -n verity-system port-forward svc/verity 8080:8080');
    expect(notes).not.toContain('logs deploy/verity');
    expect(notes).toContain(
      "kubectl -n verity-system get secret verity-bootstrap -o jsonpath='{.data.api-key}' | base64 -d",
    );
    expect(notes).toContain('helm install verity-agent charts/verity-agent');
    expect(notes).toContain('--set api.url=http://verity.verity-system.svc:8080');
    expect(notes).toContain('--set image.repository=<your registry>/verity-agent');
  });
});

/**
 * Settings the API reads that no chart value sets, each with the reason. Empty today: a new
 * setting of `config.ts` fails the test below until the chart has a value for it (or it is
 * listed here with why it must not be in the chart).
 */
const NOT_IN_CHART: Record<string, string> = {};

/** Set by the chart from its own structure, not from a value of their own. */
const FIXED: Record<string, string> = {
  PORT: 'the container port the Service, the probes and the network policy name',
  HOST: 'all interfaces of the pod',
  VERITY_DATA_DIR: 'persistence.mountPath, where the claim is mounted',
};

/** Where the chart reads a variable's value: itself, or the file or Secret form of it. */
const chartNames = (variable: string) => [variable, `${variable}_FILE`, variable.replace(/_FILE$/, '')];

describe('the chart covers every setting of the API', async () => {
  const deploymentText = fs.readFileSync(`${chartDir(CHART)}/templates/deployment.yaml`, 'utf8');
  const valuesText = fs.readFileSync(`${chartDir(CHART)}/values.yaml`, 'utf8');
  const schema = JSON.parse(fs.readFileSync(`${chartDir(CHART)}/values.schema.json`, 'utf8'));
  const templated = new Set([...deploymentText.matchAll(/- name: ([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
  // `## @param <path> <VARIABLE>: ...`: the value documented as setting the variable.
  const documented = new Map(
    [...valuesText.matchAll(/^\s*## @param (\S+) ([A-Z][A-Z0-9_]+):/gm)].map((m) => [m[2]!, m[1]!]),
  );
  const inSchema = (path: string) =>
    path.split('.').reduce<any>((node, key) => node?.properties?.[key], schema) !== undefined;

  it('has a value (or a fixed setting, or a listed reason) for every variable config.ts reads', () => {
    const uncovered = CONFIG_VARIABLES.filter(
      (v) => !(v in NOT_IN_CHART) && !chartNames(v).some((n) => templated.has(n)),
    );
    expect(uncovered, 'settings of the API that no chart value sets').toEqual([]);
    for (const name of Object.keys(NOT_IN_CHART)) {
      expect(CONFIG_VARIABLES, `NOT_IN_CHART lists ${name}, which the API no longer reads`).toContain(name);
    }
  });

  it('documents each variable it sets in values.yaml, on a value values.schema.json knows', () => {
    const undocumented: string[] = [];
    for (const name of templated) {
      if (
        name in FIXED ||
        name.endsWith('_FILE') ||
        ['SMTP_URL', 'VERITY_WEBHOOK_SECRET', 'VERITY_LOG_SIGNING_KEY'].includes(name)
      ) {
        continue;
      }
      const path = documented.get(name);
      if (!path || !inSchema(path)) {
        undocumented.push(`${name} (${path ?? 'no @param names it'})`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it('passes every new value to the API as its configuration reads it', async () => {
    const objects = await render(CHART, {
      values: {
        database: {
          url: PG,
          statementTimeoutMs: 20_000,
          connectTimeoutMs: 7_000,
          encryption: { existingSecret: 'verity-at-rest' },
        },
        bootstrap: { org: 'acme', apiKey: 'k'.repeat(24) },
        config: {
          backupOrg: 'ops',
          evidenceMaxBytes: 50 * 1024 * 1024,
          sbomMaxComponents: 30_000,
          sbomMaxVersions: 50,
          authFailuresPerMinute: 30,
          reevaluationIntervalMs: 60_000,
          deploymentsDeferFrom: 20_000,
          changePollMs: 250,
          readCacheEntries: 0,
          readCacheBytes: 128 * 1024 * 1024,
          outboundTimeoutMs: 8_000,
        },
        evaluations: {
          enabled: false,
          pollMs: 10_000,
          jq: { timeoutMs: 3_000, maxHeapMb: 128, workers: 4, queuePerOrg: 40 },
          cel: { timeoutMs: 1_000, maxHeapMb: 32, workers: 3 },
        },
        notifications: {
          enabled: false,
          pollMs: 2_000,
          maxAttempts: 5,
          leaseMs: 30_000,
          emailFrom: 'Verity <verity@acme.example>',
          webhookSecret: { existingSecret: 'verity-webhooks', existingSecretKey: 'signing' },
        },
      },
    });
    const env = envOf(objects);
    expect(env.VERITY_WEBHOOK_SECRET).toEqual({
      secretKeyRef: { name: 'verity-webhooks', key: 'signing' },
    });
    expect(env.VERITY_ENCRYPTION_SECRET).toEqual({
      secretKeyRef: { name: 'verity-at-rest', key: 'encryption-secret' },
    });
    const files: Record<string, string> = {
      '/etc/verity/database/url': PG,
      '/etc/verity/bootstrap/api-key': 'k'.repeat(24),
    };
    const config = loadConfig(literalEnvOf(objects), (path) => {
      if (!(path in files)) {
        throw new Error(`ENOENT: ${path}`);
      }
      return files[path]!;
    });
    expect(config).toMatchObject({
      dbStatementTimeoutMs: 20_000,
      dbConnectTimeoutMs: 7_000,
      backupOrg: 'ops',
      evidenceMaxBytes: 50 * 1024 * 1024,
      readCacheEntries: 0,
      readCacheBytes: 128 * 1024 * 1024,
      changePollMs: 250,
      deploymentsDeferFrom: 20_000,
      emailFrom: 'Verity <verity@acme.example>',
    });
    const literal = literalEnvOf(objects);
    expect(literal).toMatchObject({
      VERITY_SBOM_MAX_COMPONENTS: '30000',
      VERITY_SBOM_MAX_VERSIONS: '50',
      VERITY_AUTH_FAILURES_PER_MINUTE: '30',
      VERITY_REEVALUATION_INTERVAL_MS: '60000',
      VERITY_DEPLOYMENTS_DEFER_FROM: '20000',
      VERITY_OUTBOUND_TIMEOUT_MS: '8000',
      VERITY_EVALUATIONS_ENABLED: 'false',
      VERITY_EVALUATIONS_POLL_MS: '10000',
      VERITY_JQ_TIMEOUT_MS: '3000',
      VERITY_JQ_MAX_HEAP_MB: '128',
      VERITY_JQ_WORKERS: '4',
      VERITY_JQ_QUEUE_PER_ORG: '40',
      VERITY_CEL_TIMEOUT_MS: '1000',
      VERITY_CEL_MAX_HEAP_MB: '32',
      VERITY_CEL_WORKERS: '3',
      VERITY_NOTIFIER_ENABLED: 'false',
      VERITY_NOTIFIER_POLL_MS: '2000',
      VERITY_NOTIFIER_MAX_ATTEMPTS: '5',
      VERITY_NOTIFIER_LEASE_MS: '30000',
    });
  });

  it('leaves every new setting to the API default unless a value is given', async () => {
    const env = envOf(await render(CHART));
    for (const name of [
      'VERITY_DB_STATEMENT_TIMEOUT_MS',
      'VERITY_JQ_WORKERS',
      'VERITY_NOTIFIER_ENABLED',
      'VERITY_EMAIL_FROM',
      'VERITY_WEBHOOK_SECRET',
      'VERITY_ENCRYPTION_SECRET',
    ]) {
      expect(env[name], name).toBeUndefined();
    }
  });

  it('refuses a value the API would refuse at start', async () => {
    await expectRefused(CHART, { evaluations: { jq: { workers: 0 } } }, /workers/, 'schema');
    await expectRefused(CHART, { database: { connectTimeoutMs: 50 } }, /connectTimeoutMs/, 'schema');
  });

  it('passes the object store of evidence files to the API, with no credentials', async () => {
    // The object store's variables alone: the files the others name are not on this machine.
    const objectStoreEnv = (objects: Parameters<typeof literalEnvOf>[0]) =>
      Object.fromEntries(
        Object.entries(literalEnvOf(objects)).filter(
          ([n]) => n.startsWith('VERITY_S3_') || n === 'VERITY_EVIDENCE_STORE',
        ),
      );
    const s3 = {
      bucket: 'acme-evidence',
      prefix: 'verity/',
      endpoint: 'https://minio.storage.svc:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      sse: 'aws:kms',
      kmsKeyId: 'arn:aws:kms:eu-west-1:111122223333:key/abc',
      objectLock: 'COMPLIANCE',
    };
    const objects = await render(CHART, {
      values: { database: { url: PG }, evidenceStore: { type: 's3', s3 } },
    });
    const env = objectStoreEnv(objects);
    expect(Object.keys(literalEnvOf(objects)).filter((n) => n.startsWith('AWS_'))).toEqual([]);
    const config = loadConfig(env);
    expect(config.evidenceStore).toBe('s3');
    expect(config.s3).toEqual({ ...s3, prefix: 'verity/' });
    // By default: the database, and no bucket.
    const plain = loadConfig(objectStoreEnv(await render(CHART, { values: { database: { url: PG } } })));
    expect([plain.evidenceStore, plain.s3]).toEqual(['database', undefined]);
  });

  it('refuses an object store without a bucket, a KMS key without SSE-KMS, or a bad bucket name', async () => {
    await expectRefused(
      CHART,
      { evidenceStore: { type: 's3' } },
      /needs evidenceStore.s3.bucket/,
      'template',
    );
    await expectRefused(
      CHART,
      { evidenceStore: { s3: { bucket: 'evidence', kmsKeyId: 'k' } } },
      /kmsKeyId needs evidenceStore.s3.sse aws:kms/,
      'template',
    );
    await expectRefused(CHART, { evidenceStore: { s3: { bucket: 'Evidence_Files' } } }, /bucket/, 'schema');
    await expectRefused(CHART, { evidenceStore: { type: 'tape' } }, /type/, 'schema');
  });
});
