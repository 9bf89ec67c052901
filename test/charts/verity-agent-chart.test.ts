/**
 * charts/verity-agent, rendered by a real helm: the CRD copies equal crds/, each program's
 * least-privilege RBAC, what each container gets, and what the chart refuses.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Ajv } from 'ajv';
import { chartDir, expectRefused, render, template, type K8sObject } from './helm.js';
import { loadOperatorConfig } from '../../services/operator/src/config.js';

const CHART = 'verity-agent';
const root = process.cwd();
const BASE = {
  api: { url: 'http://verity.verity-system.svc:8080' },
  org: 'acme',
  token: { existingSecret: 'agent-key' },
  reporter: { environments: [{ name: 'prod-k8s', namespacesRegex: ['^shop-.*'] }] },
};
const merge = (extra: Record<string, any>) => ({
  ...BASE,
  ...extra,
  reporter: { ...BASE.reporter, ...extra.reporter },
});
const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, suffix: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));
const containerOf = (objects: K8sObject[], component: string) =>
  named(objects, 'Deployment', `-${component}`)!.spec.template.spec.containers[0];
const envOf = (container: any) =>
  Object.fromEntries(container.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
/** The variables a container gets as literal values (not from the downward API). */
const literalEnv = (env: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));

describe('the CRDs in the agent chart', async () => {
  const sources = readdirSync(join(root, 'crds')).filter((f) => f.endsWith('.yaml'));
  const rendered = byKind(await render(CHART, { values: BASE }), 'CustomResourceDefinition');

  it('are byte-for-byte copies of crds/ (npm run charts:sync-crds)', () => {
    const copies = readdirSync(join(chartDir(CHART), 'files', 'crds')).sort();
    expect(copies).toEqual([...sources].sort());
    for (const f of sources) {
      expect(readFileSync(join(chartDir(CHART), 'files', 'crds', f), 'utf8'), f).toBe(
        readFileSync(join(root, 'crds', f), 'utf8'),
      );
    }
  });

  it('render equal to crds/, with only the keep annotation added', () => {
    expect(rendered.map((c) => c.metadata.name).sort()).toEqual([
      'actions.verity.dev',
      'environments.verity.dev',
      'policies.verity.dev',
    ]);
    for (const f of sources) {
      const source = parseAllDocuments(readFileSync(join(root, 'crds', f), 'utf8'))
        .map((d) => d.toJS())
        .filter(Boolean)[0];
      const copy = structuredClone(rendered.find((c) => c.metadata.name === source.metadata.name)!);
      expect(copy.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      delete copy.metadata.annotations;
      expect(copy, f).toEqual(source);
    }
  });

  it('accept every sample of crds/samples/ (the schemas the cluster will enforce)', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const samples = readdirSync(join(root, 'crds', 'samples')).flatMap((f) =>
      parseAllDocuments(readFileSync(join(root, 'crds', 'samples', f), 'utf8'))
        .map((d) => d.toJS())
        .filter((d) => d?.apiVersion === 'verity.dev/v1alpha1'),
    );
    expect(new Set(samples.map((d) => d.kind))).toEqual(new Set(['Environment', 'Policy', 'Action']));
    for (const sample of samples) {
      const crd = rendered.find((c) => c.spec.names.kind === sample.kind)!;
      const validate = ajv.compile(crd.spec.versions[0].schema.openAPIV3Schema);
      expect(
        validate(sample),
        `${sample.kind}/${sample.metadata.name}: ${JSON.stringify(validate.errors)}`,
      ).toBe(true);
    }
    const broken = structuredClone(samples.find((d) => d.kind === 'Environment'));
    broken.spec.type = 'mainframe';
    const crd = rendered.find((c) => c.spec.names.kind === 'Environment')!;
    expect(ajv.compile(crd.spec.versions[0].schema.openAPIV3Schema)(broken)).toBe(false);
  });

  it('lose the keep annotation with crds.keep=false, and are not rendered with crds.enabled=false', async () => {
    const unkept = byKind(
      await render(CHART, { values: { ...BASE, crds: { keep: false } } }),
      'CustomResourceDefinition',
    );
    expect(unkept).toHaveLength(3);
    for (const crd of unkept) {
      expect(crd.metadata.annotations).toBeUndefined();
    }
    const none = await render(CHART, { values: { ...BASE, crds: { enabled: false } } });
    expect(byKind(none, 'CustomResourceDefinition')).toEqual([]);
  });
});

describe('RBAC', async () => {
  const objects = await render(CHART, { values: BASE });
  const saOf = (component: string) =>
    named(objects, 'Deployment', `-${component}`)!.spec.template.spec.serviceAccountName;
  const leaderElection = (o: { metadata: { name: string } }) => o.metadata.name.endsWith('-leader-election');
  const operatorRoles = (rendered: K8sObject[]) => byKind(rendered, 'Role').filter((r) => !leaderElection(r));
  const operatorBindings = (rendered: K8sObject[]) =>
    byKind(rendered, 'RoleBinding').filter((b) => !leaderElection(b));
  const secretRule = (role: K8sObject) => role.rules.find((r: any) => r.resources.includes('secrets'));

  it('lets the reporter only read pods and namespaces', () => {
    expect(named(objects, 'ClusterRole', '-reporter')!.rules).toEqual([
      { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list', 'watch'] },
    ]);
  });

  it('gives the operator no cluster-wide rights by default: a Role in the release namespace alone', () => {
    expect(named(objects, 'ClusterRole', '-operator')).toBeUndefined();
    expect(named(objects, 'ClusterRoleBinding', '-operator')).toBeUndefined();
    for (const role of byKind(objects, 'ClusterRole')) {
      expect(role.rules.flatMap((r: any) => r.resources)).not.toContain('secrets');
    }
    expect(operatorRoles(objects).map((r) => [r.metadata.name, r.metadata.namespace])).toEqual([
      ['verity-verity-agent-operator', 'verity-system'],
    ]);
    expect(envOf(containerOf(objects, 'operator')).VERITY_WATCH_NAMESPACES).toBe('verity-system');
  });

  it('lets the operator manage its three kinds, their status and finalizers, read Secrets and record events', () => {
    expect(operatorRoles(objects)[0]!.rules).toEqual([
      {
        apiGroups: ['verity.dev'],
        resources: ['environments', 'policies', 'actions'],
        verbs: ['get', 'list', 'watch', 'update', 'patch'],
      },
      {
        apiGroups: ['verity.dev'],
        resources: ['environments/status', 'policies/status', 'actions/status'],
        verbs: ['get', 'update', 'patch'],
      },
      {
        apiGroups: ['verity.dev'],
        resources: ['environments/finalizers', 'policies/finalizers', 'actions/finalizers'],
        verbs: ['update', 'patch'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ]);
  });

  it('binds each role to its own program and to nothing else', () => {
    const reporter = named(objects, 'ClusterRoleBinding', '-reporter')!;
    expect(reporter.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: named(objects, 'ClusterRole', '-reporter')!.metadata.name,
    });
    const [operator] = operatorBindings(objects);
    expect(operator!.metadata.namespace).toBe('verity-system');
    expect(operator!.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: operatorRoles(objects)[0]!.metadata.name,
    });
    for (const [binding, component] of [
      [reporter, 'reporter'],
      [operator!, 'operator'],
    ] as const) {
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: saOf(component), namespace: 'verity-system' },
      ]);
    }
    expect(saOf('reporter')).not.toBe(saOf('operator'));
  });

  it('grants no wildcard and no write outside verity.dev and events', () => {
    const rules = [...byKind(objects, 'ClusterRole'), ...byKind(objects, 'Role')].flatMap((r) => r.rules);
    for (const rule of rules) {
      expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain('*');
      const writes = rule.verbs.some((v: string) => !['get', 'list', 'watch'].includes(v));
      if (writes && !rule.apiGroups.includes('verity.dev')) {
        expect([['events'], ['leases']]).toContainEqual(rule.resources);
      }
    }
  });

  it('with secretNames, lets the operator get only those Secrets', async () => {
    const named = await render(CHART, { values: merge({ operator: { secretNames: ['slack-webhook'] } }) });
    expect(operatorRoles(named).map((r) => [r.metadata.namespace, secretRule(r)])).toEqual([
      [
        'verity-system',
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['slack-webhook'] },
      ],
    ]);
  });

  it('watches every namespace only on request, with a ClusterRole limited to the named Secrets', async () => {
    const wide = await render(CHART, {
      values: merge({ operator: { clusterWide: true, secretNames: ['slack-webhook'] } }),
    });
    expect(operatorRoles(wide)).toEqual([]);
    expect(secretRule(named(wide, 'ClusterRole', '-operator')!)).toEqual({
      apiGroups: [''],
      resources: ['secrets'],
      verbs: ['get'],
      resourceNames: ['slack-webhook'],
    });
    expect(named(wide, 'ClusterRoleBinding', '-operator')!.roleRef.kind).toBe('ClusterRole');
    const env = envOf(containerOf(wide, 'operator'));
    expect(env.VERITY_WATCH_NAMESPACES).toBe('*');
    expect(loadOperatorConfig({ ...literalEnv(env) }, () => 'a-key')).toMatchObject({
      clusterWide: true,
      watchNamespaces: [],
      namespaces: [],
    });
  });

  it('maps each of operator.namespaces to its organization and its own key, with a Role in each', async () => {
    const teams = await render(CHART, {
      values: merge({
        operator: {
          watchNamespaces: ['shared'],
          namespaces: [
            { name: 'team-a', org: 'acme', token: { existingSecret: 'team-a-key' } },
            { name: 'team-b', org: 'globex', token: { existingSecret: 'globex-key', key: 'api-key' } },
          ],
        },
      }),
    });
    expect(operatorRoles(teams).map((r) => r.metadata.namespace)).toEqual(['shared', 'team-a', 'team-b']);
    expect(operatorBindings(teams).map((b) => b.metadata.namespace)).toEqual(['shared', 'team-a', 'team-b']);
    const container = containerOf(teams, 'operator');
    const pod = named(teams, 'Deployment', '-operator')!.spec.template.spec;
    const mount = container.volumeMounts.find((m: any) => m.name === 'namespace-tokens');
    expect(mount).toMatchObject({ readOnly: true });
    expect(pod.volumes.find((v: any) => v.name === 'namespace-tokens').projected.sources).toEqual([
      { secret: { name: 'team-a-key', items: [{ key: 'token', path: 'team-a/token' }] } },
      { secret: { name: 'globex-key', items: [{ key: 'api-key', path: 'team-b/token' }] } },
    ]);
    // What the operator makes of it, with the Secrets mounted where the chart says.
    const files: Record<string, string> = {
      [`${mount.mountPath}/team-a/token`]: 'key-a',
      [`${mount.mountPath}/team-b/token`]: 'key-b',
      '/var/run/secrets/verity/token': 'default-key',
    };
    const env = { ...literalEnv(envOf(container)), VERITY_LEADER_ELECTION_NAMESPACE: 'verity-system' };
    const config = loadOperatorConfig(env, (p) => {
      if (p in files) {
        return files[p]!;
      }
      throw new Error(`ENOENT ${p}`);
    });
    expect(config).toMatchObject({
      clusterWide: false,
      org: 'acme',
      watchNamespaces: ['shared'],
      namespaces: [
        {
          namespace: 'team-a',
          org: 'acme',
          token: { kind: 'file', path: `${mount.mountPath}/team-a/token` },
        },
        {
          namespace: 'team-b',
          org: 'globex',
          token: { kind: 'file', path: `${mount.mountPath}/team-b/token` },
        },
      ],
    });
  });

  it('confines the operator to the watched namespaces and the named Secrets when given', async () => {
    const scoped = await render(CHART, {
      values: merge({ operator: { watchNamespaces: ['team-a', 'team-b'], secretNames: ['slack-webhook'] } }),
    });
    expect(named(scoped, 'ClusterRole', '-operator')).toBeUndefined();
    const roles = byKind(scoped, 'Role').filter((r) => !leaderElection(r));
    expect(roles.map((r) => r.metadata.namespace)).toEqual(['team-a', 'team-b']);
    for (const role of roles) {
      expect(role.rules.find((r: any) => r.resources.includes('secrets'))).toEqual({
        apiGroups: [''],
        resources: ['secrets'],
        verbs: ['get'],
        resourceNames: ['slack-webhook'],
      });
    }
    const bindings = byKind(scoped, 'RoleBinding').filter((b) => !leaderElection(b));
    expect(bindings.map((b) => [b.metadata.namespace, b.roleRef.kind, b.subjects[0].namespace])).toEqual([
      ['team-a', 'Role', 'verity-system'],
      ['team-b', 'Role', 'verity-system'],
    ]);
    expect(envOf(containerOf(scoped, 'operator')).VERITY_WATCH_NAMESPACES).toBe('team-a,team-b');
  });
});

describe('the operator replicas', async () => {
  const objects = await render(CHART, { values: BASE });
  const container = containerOf(objects, 'operator');
  const env = envOf(container);
  const lease = named(objects, 'Deployment', '-operator')!.metadata.name;

  it('elect a leader through a Lease, with the timings as values', async () => {
    expect(env).toMatchObject({
      VERITY_LEADER_ELECTION: 'true',
      VERITY_LEADER_ELECTION_LEASE_NAME: lease,
      VERITY_LEASE_DURATION_SECONDS: '15',
      VERITY_LEASE_RENEW_DEADLINE_SECONDS: '10',
      VERITY_LEASE_RETRY_PERIOD_SECONDS: '2',
    });
    expect(env.VERITY_POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.VERITY_LEADER_ELECTION_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(named(objects, 'Deployment', '-operator')!.spec.strategy).toMatchObject({ type: 'RollingUpdate' });
    // What the operator makes of it, in a pod named operator-0 of verity-system.
    const config = loadOperatorConfig(
      {
        ...literalEnv(env),
        VERITY_POD_NAME: 'operator-0',
        VERITY_LEADER_ELECTION_NAMESPACE: 'verity-system',
      },
      () => 'a-key',
    );
    expect(config.leaderElection).toEqual({
      leaseName: lease,
      leaseNamespace: 'verity-system',
      identity: 'operator-0',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
    });
  });

  it('may read and renew only their own Lease, in the release namespace', () => {
    const role = byKind(objects, 'Role').find((r) => r.metadata.name === `${lease}-leader-election`)!;
    expect(role.metadata.namespace).toBe('verity-system');
    expect(role.rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'update'],
        resourceNames: [lease],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    ]);
    const binding = byKind(objects, 'RoleBinding').find((b) => b.metadata.name === role.metadata.name)!;
    expect(binding.subjects).toEqual([
      {
        kind: 'ServiceAccount',
        name: named(objects, 'Deployment', '-operator')!.spec.template.spec.serviceAccountName,
        namespace: 'verity-system',
      },
    ]);
  });
});

describe('the two programs', async () => {
  const objects = await render(CHART, { values: BASE });

  it.each([
    ['reporter', 8081, 'dist/services/reporter/src/main.js'],
    ['operator', 8082, 'dist/services/operator/src/main.js'],
  ])('runs the %s hardened, with probes, the API, the org and the key file', (component, port, entry) => {
    const deployment = named(objects, 'Deployment', `-${component}`)!;
    const pod = deployment.spec.template.spec;
    const container = containerOf(objects, component);
    // Two operators elect a leader; the reporter runs once.
    expect(deployment.spec.replicas).toBe(component === 'operator' ? 2 : 1);
    expect(container.command).toEqual(['node', entry]);
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.ports).toEqual([{ name: 'http', containerPort: port, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    const env = envOf(container);
    expect(env).toMatchObject({ VERITY_API_URL: BASE.api.url, VERITY_ORG: 'acme' });
    expect(env[`VERITY_${component.toUpperCase()}_PORT`]).toBe(String(port));
    // The key is a file from the Secret, never an environment variable.
    const tokenDir = env.VERITY_API_TOKEN_FILE.slice(0, env.VERITY_API_TOKEN_FILE.lastIndexOf('/'));
    const mount = container.volumeMounts.find((m: any) => m.mountPath === tokenDir);
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    expect(volume.secret).toMatchObject({
      secretName: 'agent-key',
      items: [{ key: 'token', path: 'token' }],
    });
    expect(container.volumeMounts.find((m: any) => m.mountPath === '/tmp')).toBeDefined();
  });

  it('gives the reporter its environments file and heartbeat', () => {
    const container = containerOf(objects, 'reporter');
    const env = envOf(container);
    expect(env.VERITY_HEARTBEAT_SECONDS).toBe('600');
    const configMap = named(objects, 'ConfigMap', '-reporter')!;
    const file = env.VERITY_REPORTER_CONFIG.split('/').pop();
    expect(parse(configMap.data[file])).toEqual({ environments: BASE.reporter.environments });
  });

  it('writes the reporter configuration in the reporter format (the multi-environment fixture)', async () => {
    const values = parse(
      readFileSync(join(chartDir(CHART), 'ci', 'reporter-and-operator-values.yaml'), 'utf8'),
    );
    const rendered = await render(CHART, { values });
    const configMap = named(rendered, 'ConfigMap', '-reporter')!;
    expect(parse(configMap.data['environments.yaml'])).toEqual({
      environments: [
        { name: 'prod-env', namespaces: ['prod-ns1', 'prod-ns2'] },
        { name: 'staging-env', namespacesRegex: ['^staging-.*'] },
        { name: 'infra-env', excludeNamespaces: ['prod-ns1', 'prod-ns2', 'default'] },
      ],
    });
  });

  it('writes the token Secret only from token.value', async () => {
    expect(byKind(objects, 'Secret')).toEqual([]);
    const inline = await render(CHART, { values: { ...BASE, token: { value: 'agent-key-0123456789' } } });
    const [secret] = byKind(inline, 'Secret');
    expect(secret!.stringData).toEqual({ token: 'agent-key-0123456789' });
    const volume = named(inline, 'Deployment', '-operator')!.spec.template.spec.volumes.find(
      (v: any) => v.name === 'token',
    );
    expect(volume.secret.secretName).toBe(secret!.metadata.name);
  });

  it('switches each program off on its own, with its RBAC and configuration', async () => {
    const operatorOnly = await render(CHART, { values: merge({ reporter: { enabled: false } }) });
    expect(operatorOnly.filter((o) => o.metadata.name.endsWith('-reporter'))).toEqual([]);
    expect(named(operatorOnly, 'Deployment', '-operator')).toBeDefined();
    const reporterOnly = await render(CHART, { values: merge({ operator: { enabled: false } }) });
    expect(reporterOnly.filter((o) => o.metadata.name.endsWith('-operator'))).toEqual([]);
    expect(named(reporterOnly, 'Deployment', '-reporter')).toBeDefined();
  });
});

describe('the agent chart refuses', () => {
  it('an install that names no image: no default points at a namespace of someone else', async () => {
    const refused = await template(CHART, { values: BASE, withoutImage: true });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'image.repository is required: the chart names no default image. Build Dockerfile.reporter, push it to a registry you control and set image.repository',
    );
    const named = await render(CHART, {
      values: BASE,
      withoutImage: true,
      set: ['image.repository=ghcr.io/acme/verity-agent'],
    });
    const images = named
      .filter((o) => o.kind === 'Deployment')
      .map((o) => o.spec.template.spec.containers[0].image as string);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      expect(image).toMatch(/^ghcr\.io\/acme\/verity-agent:/);
    }
  });

  it('a missing API URL, organization or key', async () => {
    await expectRefused(CHART, { ...BASE, api: { url: '' } }, /api.url is empty/, 'template');
    await expectRefused(CHART, { ...BASE, org: '' }, /org is empty/, 'template');
    await expectRefused(CHART, { ...BASE, token: {} }, /No API key/, 'template');
    await expectRefused(
      CHART,
      { ...BASE, token: { value: 'k', existingSecret: 's' } },
      /both set/,
      'template',
    );
  });

  it('a reporter with no environment', async () => {
    await expectRefused(
      CHART,
      merge({ reporter: { environments: [] } }),
      /reporter.environments is empty/,
      'template',
    );
  });

  it('watching every namespace without operator.secretNames, or with namespaces listed', async () => {
    await expectRefused(
      CHART,
      merge({ operator: { clusterWide: true } }),
      /operator.clusterWide=true would let the operator read every Secret in the cluster: set operator.secretNames/,
      'template',
    );
    await expectRefused(
      CHART,
      merge({ operator: { clusterWide: true, secretNames: ['hook'], watchNamespaces: ['team-a'] } }),
      /leave operator.watchNamespaces and operator.namespaces empty/,
      'template',
    );
  });

  it('a namespace mapped twice', async () => {
    await expectRefused(
      CHART,
      merge({
        operator: {
          watchNamespaces: ['team-a'],
          namespaces: [{ name: 'team-a', org: 'globex', token: { existingSecret: 'k' } }],
        },
      }),
      /namespace team-a is listed twice/,
      'template',
    );
  });

  it.each([
    [
      { reporter: { environments: [{ name: 'x', namespaces: ['a'], excludeNamespaces: ['b'] }] } },
      /environments\/0/,
    ],
    [{ reporter: { environments: [{ namespaces: ['a'] }] } }, /name/],
    [{ reporter: { environments: [{ name: 'x', namespace: ['a'] }] } }, /namespace/],
    [{ reporter: { heartbeatSeconds: '600' } }, /heartbeatSeconds/],
    [{ operator: { watchNamespaces: 'team-a' } }, /watchNamespaces/],
    [{ operator: { clusterWide: 'yes' } }, /clusterWide/],
    [{ operator: { namespaces: [{ name: 'team-a', org: 'acme' }] } }, /token/],
    [{ operator: { namespaces: [{ name: 'Team_A', org: 'acme', token: { existingSecret: 'k' } }] } }, /name/],
    [{ operator: { namespaces: [{ name: 'team-a', org: 'a b', token: { existingSecret: 'k' } }] } }, /org/],
    [
      {
        operator: {
          namespaces: [{ name: 'team-a', org: 'acme', token: { existingSecret: 'k', value: 'v' } }],
        },
      },
      /value/,
    ],
    [{ crds: { keep: 'yes' } }, /keep/],
  ])('the wrong value set %j', async (extra, message) => {
    await expectRefused(CHART, merge(extra), message, 'schema');
  });
});
