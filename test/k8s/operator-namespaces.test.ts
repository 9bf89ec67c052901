/**
 * The operator with a namespace per organization: a resource in team-a is reconciled into acme
 * with team-a's key, one in team-b into globex with team-b's key, and one in a namespace that is
 * not listed is never read, so it changes nothing. Against the Kubernetes API server double and
 * the real API app, over real HTTP.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operator } from '../../services/operator/src/operator.js';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { untilEvent } from '../helpers/wait.js';
import { ApiServerDouble, ENVIRONMENTS, SECRETS, VERITY_KINDS } from './api-server-double.js';

let t: TestApp;
let double: ApiServerDouble;
let operator: Operator;
let acme: ReturnType<typeof client>;
let globex: ReturnType<typeof client>;
const logs: Array<Record<string, unknown>> = [];

const environment = (namespace: string, name: string, description: string, verityName = 'prod-k8s') => ({
  apiVersion: 'verity.dev/v1alpha1',
  kind: 'Environment',
  metadata: { namespace, name },
  spec: { name: verityName, type: 'K8S', description },
});
const ready = (namespace: string, name: string) =>
  untilEvent(
    double.store,
    'event',
    () => {
      const obj = double.store.get(ENVIRONMENTS, namespace, name) as any;
      return obj?.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True'
        ? obj
        : undefined;
    },
    `Environment ${namespace}/${name} Ready`,
  );

beforeAll(async () => {
  t = await createTestApp();
  const acmeKey = await t.seedKey('acme', 'member');
  const globexKey = await t.seedKey('globex', 'member');
  acme = client(t.app, await t.seedKey('acme', 'reader'));
  globex = client(t.app, await t.seedKey('globex', 'reader'));
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  double = await new ApiServerDouble().start();
  for (const type of [...VERITY_KINDS, SECRETS]) {
    double.register(type);
  }
  const log = (level: string) => (obj: object, msg: string) => void logs.push({ level, msg, ...obj });
  operator = new Operator({
    config: {
      apiUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
      // The default organization and key serve no listed namespace here: a key that opens nothing.
      org: 'acme',
      token: { kind: 'value', value: 'not-a-key' },
      clusterWide: false,
      watchNamespaces: [],
      namespaces: [
        { namespace: 'team-a', org: 'acme', token: { kind: 'value', value: acmeKey } },
        { namespace: 'team-b', org: 'globex', token: { kind: 'value', value: globexKey } },
      ],
      requeueIntervalMs: 600_000,
      workers: 2,
      retryBaseMs: 50,
      retryMaxMs: 400,
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      shutdownTimeoutMs: 1000,
    },
    kubeConfig: double.kubeConfig(),
    log: { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') },
  });
  const synced = new Promise<void>((resolve) => operator.once('synced', resolve));
  operator.start();
  await synced;
});

afterAll(async () => {
  await operator?.stop();
  await double?.close();
  await t?.close();
});

describe('an operator with an organization per namespace', () => {
  it("reconciles team-b's resource into globex with globex's key, and team-a's into acme", async () => {
    double.store.apply(ENVIRONMENTS, environment('team-b', 'prod', 'globex production'));
    double.store.apply(ENVIRONMENTS, environment('team-a', 'prod', 'acme production'));
    await ready('team-b', 'prod');
    await ready('team-a', 'prod');

    const inGlobex = await globex.get('/api/v2/environments/globex/prod-k8s');
    expect(inGlobex.status).toBe(200);
    expect(inGlobex.json).toMatchObject({ type: 'K8S', description: 'globex production' });
    const inAcme = await acme.get('/api/v2/environments/acme/prod-k8s');
    expect(inAcme.status).toBe(200);
    expect(inAcme.json).toMatchObject({ description: 'acme production' });
    // acme's key cannot see globex, nor globex's acme: each write went with its namespace's key.
    expect((await acme.get('/api/v2/environments/globex/prod-k8s')).status).toBe(403);
  });

  it('leaves a resource in a namespace that is not listed unread: Verity and its status stay as they were', async () => {
    const before = (await acme.get('/api/v2/environments/acme/prod-k8s')).json;
    double.store.apply(ENVIRONMENTS, {
      ...environment('team-c', 'takeover', 'written from team-c'),
      spec: { name: 'prod-k8s', type: 'K8S', description: 'written from team-c', policies: [] },
    });
    // A later change in a listed namespace is reconciled: by then team-c's would have been too.
    double.store.apply(ENVIRONMENTS, environment('team-a', 'later', 'a later one', 'staging-k8s'));
    await ready('team-a', 'later');

    expect((await acme.get('/api/v2/environments/acme/prod-k8s')).json).toEqual(before);
    expect((await globex.get('/api/v2/environments/globex/prod-k8s')).json.description).toBe(
      'globex production',
    );
    expect(double.store.get(ENVIRONMENTS, 'team-c', 'takeover')!.status).toBeUndefined();
    // Nothing was even asked about team-c: the operator watches only the namespaces it maps.
    expect(logs.filter((l) => l.namespace === 'team-c')).toEqual([]);
    expect(logs.filter((l) => l.msg === 'resources listed').map((l) => l.namespace)).toEqual(
      expect.arrayContaining(['team-a', 'team-b']),
    );
    expect(logs.some((l) => l.msg === 'resources listed' && l.namespace === '*')).toBe(false);
  });
});
