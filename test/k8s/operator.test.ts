/**
 * The operator against the Kubernetes API server double and the real API app on PGlite, over
 * real HTTP on both sides, driven by the real `@kubernetes/client-node`. Waits are on watch
 * events and reconcile events, never on the clock.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createOpsServer } from '../../services/shared/agent/index.js';
import { Operator, keyOf, type ReconciledEvent } from '../../services/operator/src/operator.js';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { untilEvent } from '../helpers/wait.js';
import {
  ACTIONS,
  ApiServerDouble,
  ENVIRONMENTS,
  POLICIES,
  SECRETS,
  VERITY_KINDS,
  type ResourceType,
} from './api-server-double.js';
import { TcpProxy } from './tcp-proxy.js';

const ORG = 'acme';
const NS = 'verity-system';
const REQUEUE_MS = 400;

let t: TestApp;
let verity: ReturnType<typeof client>;
let proxy: TcpProxy;
let double: ApiServerDouble;
let operator: Operator;
const reconciles: ReconciledEvent[] = [];
const logs: Array<Record<string, unknown>> = [];

const TYPES: Record<string, ResourceType> = { Environment: ENVIRONMENTS, Policy: POLICIES, Action: ACTIONS };
const sample = (file: string) => parseYaml(readFileSync(`crds/samples/${file}`, 'utf8'));
const apply = (obj: any) => double.store.apply(TYPES[obj.kind]!, obj);
const get = (kind: string, name: string, ns = NS) => double.store.get(TYPES[kind]!, ns, name);
const condition = (obj: any, type: string) => obj?.status?.conditions?.find((c: any) => c.type === type);

/** Resolves once `check` holds for the cluster, checked now and after every store event. */
const until = <T>(check: () => T | undefined | false, what: string, ms?: number) =>
  untilEvent(double.store, 'event', check, what, ms);

/** Resolves once `check` holds for Verity, checked now and after every reconcile. */
const untilVerity = (check: () => Promise<boolean>, what: string, ms?: number) =>
  untilEvent(operator, 'reconciled', check, what, ms);

/** The resource once Ready=True for its current generation. */
const ready = (kind: string, name: string, ns = NS) =>
  until(() => {
    const obj = get(kind, name, ns);
    return obj &&
      condition(obj, 'Ready')?.status === 'True' &&
      obj.status.observedGeneration === obj.metadata.generation
      ? obj
      : undefined;
  }, `${kind} ${ns}/${name} Ready`);

const countFor = (key: string) => reconciles.filter((e) => keyOf(e.kind, e.namespace, e.name) === key).length;

beforeAll(async () => {
  t = await createTestApp();
  const key = await t.seedKey(ORG, 'member');
  verity = client(t.app, key);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  proxy = await new TcpProxy((t.app.server.address() as AddressInfo).port).start();
  double = await new ApiServerDouble().start();
  for (const type of [...VERITY_KINDS, SECRETS]) {
    double.register(type);
  }
  const log = (level: string) => (obj: object, msg: string) => void logs.push({ level, msg, ...obj });
  operator = new Operator({
    config: {
      apiUrl: proxy.url,
      org: ORG,
      token: { kind: 'value', value: key },
      clusterWide: true,
      watchNamespaces: [],
      requeueIntervalMs: REQUEUE_MS,
      workers: 3,
      retryBaseMs: 50,
      retryMaxMs: 400,
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      shutdownTimeoutMs: 1000,
    },
    kubeConfig: double.kubeConfig(),
    log: { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') },
    informerRestartBaseMs: 20,
  });
  operator.on('reconciled', (e) => reconciles.push(e));
  const synced = new Promise<void>((resolve) => operator.once('synced', resolve));
  operator.start();
  await synced;
});

afterAll(async () => {
  await operator?.stop();
  await double?.close();
  await proxy?.stop();
  await t?.close();
});

describe('the operator', () => {
  it('reconciles every sample into Verity, and each resource turns Ready at its generation', async () => {
    // The logical sample groups prod-lambda, an environment another reporter made in Verity.
    expect(
      (
        await verity.put(`/api/v2/environments/${ORG}`, {
          name: 'prod-lambda',
          type: 'lambda',
          description: '',
        })
      ).status,
    ).toBe(201);
    const secret = sample('secret-slack-webhook.yaml');
    double.putSecret(NS, secret.metadata.name, secret.stringData, secret.metadata.labels);
    for (const file of [
      'policy.yaml',
      'policy-object.yaml',
      'environment.yaml',
      'environment-logical.yaml',
      'action.yaml',
      'action-flow.yaml',
    ]) {
      apply(sample(file));
    }

    // action-flow.yaml names a Secret that is not there yet: retried, with the reason shown.
    const waiting = await until(() => {
      const a = get('Action', 'shop-releases');
      return condition(a, 'Ready')?.reason === 'SecretNotFound' ? a : undefined;
    }, 'shop-releases waiting for its Secret');
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(waiting, 'Ready').message).toContain(`Secret ${NS}/release-hook not found`);
    expect(condition(waiting, 'Reconciling')).toMatchObject({ status: 'True' });
    double.putSecret(
      NS,
      'release-hook',
      { address: 'https://hooks.example.com/releases' },
      { 'verity.dev/allow-operator-read': 'true' },
    );

    const policy = await ready('Policy', 'provenance-required');
    const gates = await ready('Policy', 'prod-gates');
    const prod = await ready('Environment', 'prod');
    const production = await ready('Environment', 'production');
    const action = await ready('Action', 'prod-changes');
    const flowAction = await ready('Action', 'shop-releases');
    for (const obj of [policy, gates, prod, production, action, flowAction]) {
      expect(obj.status.observedGeneration).toBe(1);
    }

    const env = (await verity.get(`/api/v2/environments/${ORG}/prod-k8s`)).json;
    expect(env).toMatchObject({
      type: 'K8S',
      description: 'Production cluster, eu-west-1',
      tags: { team: 'platform', tier: 'production' },
    });
    expect([...env.policies].sort()).toEqual(['prod-gates', 'provenance-required']);
    expect([...prod.status.policies].sort()).toEqual(['prod-gates', 'provenance-required']);
    const logical = (await verity.get(`/api/v2/environments/${ORG}/production`)).json;
    expect(logical).toMatchObject({ type: 'logical', description: 'Everything that serves customers' });
    expect([...logical.included_environments].sort()).toEqual(['prod-k8s', 'prod-lambda']);

    for (const name of ['provenance-required', 'prod-gates']) {
      const p = (await verity.get(`/api/v2/policies/${ORG}/${name}`)).json;
      expect(p.versions.map((v: any) => v.version)).toEqual([1]);
      expect(get('Policy', name)!.status).toMatchObject({
        policyVersion: 1,
        contentHash: expect.any(String),
      });
    }
    expect((await verity.get(`/api/v2/policies/${ORG}/prod-gates`)).json.description).toBe(
      'Scans and reviews required in production',
    );

    const actions = (await verity.get(`/api/v2/actions/${ORG}`)).json;
    const prodChanges = actions.find((a: any) => a.name === 'prod-changes');
    expect(prodChanges).toMatchObject({ type: 'env', environments: ['prod-k8s'] });
    expect(prodChanges.targets.map((x: any) => [x.type, x.webhook ?? x.emails])).toEqual([
      ['SLACK', 'https://hooks.slack.com/services/T000/B000/XXXXXXXX'],
      ['WEBHOOK', 'https://hooks.example.com/verity'],
      ['EMAIL', ['platform-oncall@example.com']],
    ]);
    expect(action.status.actionNumber).toBe(prodChanges.number);
    expect(action.metadata.finalizers).toEqual(['verity.dev/finalizer']);
    const releases = actions.find((a: any) => a.name === 'shop-releases');
    expect(releases).toMatchObject({ type: 'flow', flows: ['shop-backend', 'shop-frontend'] });
    expect(releases.targets[0].webhook).toBe('https://hooks.example.com/releases');
    expect(flowAction.status.actionNumber).toBe(releases.number);
    // Environments and policies hold no finalizer: Verity has no delete for them.
    expect(prod.metadata.finalizers).toBeUndefined();
    expect(policy.metadata.finalizers).toBeUndefined();
  });

  it('makes exactly one new policy version for a content edit, and none for the same content re-applied', async () => {
    const edited = sample('policy.yaml');
    edited.spec.content = edited.spec.content.replace(
      'trail-compliance:\n    required: true',
      'trail-compliance:\n    required: false',
    );
    edited.spec.comment = 'Trail compliance optional';
    apply(edited);
    const v2 = await until(() => {
      const p = get('Policy', 'provenance-required');
      return p?.status?.observedGeneration === 2 ? p : undefined;
    }, 'the edit reconciled');
    expect(v2.status.policyVersion).toBe(2);
    const versions = async () =>
      (await verity.get(`/api/v2/policies/${ORG}/provenance-required`)).json.versions.map((v: any) => [
        v.version,
        v.comment,
      ]);
    expect(await versions()).toEqual([
      [1, 'Initial version'],
      [2, 'Trail compliance optional'],
    ]);

    // The same document written differently (a comment, other indentation, keys reordered).
    const same = structuredClone(edited);
    same.spec.content = [
      '# reformatted',
      'artifacts:',
      '  trail-compliance: { required: false }',
      '  provenance:',
      '      required: true',
      '      exceptions:',
      '        - if: ${{ matches(artifact.name, "^docker.io/datadog/.*") }}',
      '_schema: https://kosli.com/schemas/policy/environment/v1',
      '',
    ].join('\n');
    apply(same);
    const p3 = await ready('Policy', 'provenance-required');
    expect(p3.metadata.generation).toBe(3);
    expect(p3.status.policyVersion).toBe(2);
    expect(p3.status.contentHash).toBe(v2.status.contentHash);
    expect(await versions()).toHaveLength(2);
  });

  it('skips a suspended resource with a Suspended condition and leaves Verity as it is', async () => {
    const suspended = sample('policy-object.yaml');
    suspended.spec.suspend = true;
    suspended.spec.content.artifacts.attestations = [];
    apply(suspended);
    const p = await until(() => {
      const obj = get('Policy', 'prod-gates');
      return condition(obj, 'Ready')?.reason === 'Suspended' ? obj : undefined;
    }, 'prod-gates suspended');
    expect(condition(p, 'Ready').status).toBe('Unknown');
    expect(p.status.observedGeneration).toBe(2);
    expect((await verity.get(`/api/v2/policies/${ORG}/prod-gates`)).json.versions).toHaveLength(1);
    apply(sample('policy-object.yaml'));
    expect((await ready('Policy', 'prod-gates')).status.policyVersion).toBe(1);
  });

  it('detaches in Verity a policy removed from the Environment', async () => {
    const env = sample('environment.yaml');
    env.spec.policies = ['provenance-required'];
    apply(env);
    const obj = await ready('Environment', 'prod');
    expect(obj.metadata.generation).toBe(2);
    expect(obj.status.policies).toEqual(['provenance-required']);
    expect((await verity.get(`/api/v2/environments/${ORG}/prod-k8s`)).json.policies).toEqual([
      'provenance-required',
    ]);
  });

  it('repairs drift made through the API at the periodic requeue', async () => {
    const url = `/api/v2/environments/${ORG}/prod-k8s`;
    expect((await verity.delete(`${url}/policies`, { policy_names: ['provenance-required'] })).status).toBe(
      200,
    );
    expect((await verity.patch(url, { description: 'changed by hand' })).status).toBe(200);
    expect((await verity.get(url)).json.policies).toEqual([]);
    await untilVerity(async () => {
      const env = (await verity.get(url)).json;
      return env.policies.length === 1 && env.description === 'Production cluster, eu-west-1';
    }, 'the drift repaired');
    expect((await verity.get(url)).json.policies).toEqual(['provenance-required']);
  });

  it('stalls on an invalid spec, with no retry loop', async () => {
    // Passes the double (it does not validate against the CRD) but not the operator's schema.
    apply({
      apiVersion: 'verity.dev/v1alpha1',
      kind: 'Action',
      metadata: { name: 'bad-triggers', namespace: NS },
      spec: {
        type: 'flow',
        triggers: ['ON_STARTED_ARTIFACT'],
        targets: [{ type: 'EMAIL', emails: ['a@example.com'] }],
      },
    });
    // Valid for the schema, refused by Verity: an environment's type cannot change.
    apply({
      apiVersion: 'verity.dev/v1alpha1',
      kind: 'Environment',
      metadata: { name: 'lambda-as-k8s', namespace: NS },
      spec: { name: 'prod-lambda', type: 'K8S' },
    });
    const bad = await until(() => {
      const a = get('Action', 'bad-triggers');
      return condition(a, 'Stalled')?.status === 'True' ? a : undefined;
    }, 'bad-triggers stalled');
    expect(condition(bad, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(condition(bad, 'Ready').message).toContain('triggers');
    expect(condition(bad, 'Reconciling')).toBeUndefined();
    expect(bad.status.observedGeneration).toBe(1);
    expect(bad.metadata.finalizers).toBeUndefined();
    const rejected = await until(() => {
      const e = get('Environment', 'lambda-as-k8s');
      return condition(e, 'Stalled')?.status === 'True' ? e : undefined;
    }, 'lambda-as-k8s stalled');
    expect(condition(rejected, 'Ready')).toMatchObject({ status: 'False', reason: 'Rejected' });
    expect(condition(rejected, 'Ready').message).toContain('type lambda');

    // Let other resources go through two periodic requeues: the stalled ones stay untouched.
    const badKey = keyOf('Action', NS, 'bad-triggers');
    const rejectedKey = keyOf('Environment', NS, 'lambda-as-k8s');
    const prodKey = keyOf('Environment', NS, 'prod');
    const prodBefore = countFor(prodKey);
    await untilVerity(async () => countFor(prodKey) >= prodBefore + 2, 'two periodic requeues of prod');
    expect(countFor(badKey)).toBe(1);
    expect(countFor(rejectedKey)).toBe(1);
    const statusWrites = (name: string) =>
      double.writes.filter((w) => w.name === name && w.subresource === 'status').length;
    expect(statusWrites('bad-triggers')).toBe(1);
    expect(statusWrites('lambda-as-k8s')).toBe(1);
    expect(reconciles.filter((e) => e.result === 'stalled').length).toBeGreaterThanOrEqual(2);
  });

  it('writes no status when nothing changed', async () => {
    const key = keyOf('Environment', NS, 'production');
    const before = countFor(key);
    const writes = double.writes.filter((w) => w.name === 'production').length;
    await untilVerity(async () => countFor(key) >= before + 2, 'two periodic requeues of production');
    expect(double.writes.filter((w) => w.name === 'production').length).toBe(writes);
  });

  it('deletes a deleted Action in Verity, then releases the finalizer', async () => {
    const number = get('Action', 'prod-changes')!.status.actionNumber;
    const events: string[] = [];
    const onEvent = (e: any) => {
      if (e.object.metadata.name === 'prod-changes') {
        events.push(e.type);
      }
    };
    double.store.on('event', onEvent);
    await double.kubeConfig().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'verity.dev',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'actions',
      name: 'prod-changes',
    });
    await until(() => events.includes('DELETED'), 'prod-changes gone');
    double.store.off('event', onEvent);
    expect(events[0]).toBe('MODIFIED'); // marked deleting, held by the finalizer
    expect(get('Action', 'prod-changes')).toBeUndefined();
    expect((await verity.get(`/api/v2/actions/${ORG}/${number}`)).status).toBe(404);
    const names = (await verity.get(`/api/v2/actions/${ORG}`)).json.map((a: any) => a.name);
    expect(names).not.toContain('prod-changes');
    expect(names).toContain('shop-releases');
  });

  it('renames an action in Verity when spec.name changes, keeping one copy', async () => {
    const before = get('Action', 'shop-releases')!.status.actionNumber;
    const renamed = sample('action-flow.yaml');
    renamed.spec.name = 'shop-releases-v2';
    apply(renamed);
    const obj = await ready('Action', 'shop-releases');
    expect(obj.metadata.generation).toBe(2);
    const actions = (await verity.get(`/api/v2/actions/${ORG}`)).json;
    const names = actions.map((a: any) => a.name);
    expect(names).toContain('shop-releases-v2');
    expect(names).not.toContain('shop-releases');
    const current = actions.find((a: any) => a.name === 'shop-releases-v2');
    expect(obj.status.actionNumber).toBe(current.number);
    expect(current.number).not.toBe(before);
  });

  it('reports the API being down as Ready=False with the reason, and recovers when it is back', async () => {
    await proxy.stop();
    apply({
      apiVersion: 'verity.dev/v1alpha1',
      kind: 'Environment',
      metadata: { name: 'staging', namespace: NS },
      spec: { description: 'Staging' },
    });
    const down = await until(() => {
      const e = get('Environment', 'staging');
      return condition(e, 'Ready')?.reason === 'ApiUnreachable' ? e : undefined;
    }, 'staging waiting for the API');
    expect(condition(down, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(down, 'Ready').message).toMatch(/^Verity API: PUT|^Verity API: GET/);
    expect(condition(down, 'Reconciling')).toMatchObject({ status: 'True', reason: 'ProgressingWithRetry' });
    expect(condition(down, 'Stalled')).toBeUndefined();

    await proxy.start();
    const up = await ready('Environment', 'staging');
    expect(condition(up, 'Reconciling')).toBeUndefined();
    expect((await verity.get(`/api/v2/environments/${ORG}/staging`)).json).toMatchObject({
      type: 'K8S',
      description: 'Staging',
    });
  });

  it('restarts a failed informer and goes on reconciling', async () => {
    const restarted = new Promise<string>((resolve) => operator.once('restart', (kind) => resolve(kind)));
    double.failNext('watch', 500, 1);
    double.dropWatches();
    expect(['Environment', 'Policy', 'Action']).toContain(await restarted);
    await double.waitForWatches(3);
    apply({
      apiVersion: 'verity.dev/v1alpha1',
      kind: 'Policy',
      metadata: { name: 'after-restart', namespace: NS },
      spec: { content: { _schema: 'https://kosli.com/schemas/policy/environment/v1' } },
    });
    expect((await ready('Policy', 'after-restart')).status.policyVersion).toBe(1);
  });

  it('serves /healthz, /readyz and /metrics with the reconcile counters, and logs per object', async () => {
    const server = createOpsServer({
      ready: () => operator.ready,
      registry: operator.metrics.registry,
      notReady: 'custom resources not listed yet',
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const text = await (await fetch(`${base}/metrics`)).text();
      const count = (labels: string) =>
        Number(
          new RegExp(`^verity_operator_reconcile_total\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0,
        );
      expect(count('kind="Environment",result="success"')).toBeGreaterThan(0);
      expect(count('kind="Action",result="stalled"')).toBe(1);
      expect(count('kind="Environment",result="error"')).toBeGreaterThan(0);
      expect(text).toMatch(
        /^verity_operator_reconcile_duration_seconds_bucket\{le="0\.1",kind="Policy"\} \d+$/m,
      );
      expect(text).toContain('process_resident_memory_bytes');
      expect(text).toMatch(/^verity_operator_informer_restarts_total\{kind="\w+"\} [1-9]/m);
    } finally {
      server.closeAllConnections();
      server.close();
    }
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'reconciled',
        kind: 'Action',
        namespace: NS,
        name: 'bad-triggers',
        generation: 1,
        result: 'stalled',
      }),
    );
  });
});
