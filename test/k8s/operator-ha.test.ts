/**
 * The operator run highly available: replicas elect a leader through a coordination.k8s.io Lease
 * on the Kubernetes API server double (real HTTP, the real client library), only the leader
 * reconciles, and a standby takes over when the leader goes. Reconciles leave Kubernetes Events
 * on the resource, and the reconcile-requested-at annotation reconciles at once.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaderElectionConfig } from '../../services/operator/src/leader-election.js';
import { Operator, type ReconciledEvent } from '../../services/operator/src/operator.js';
import { RECONCILE_REQUEST_ANNOTATION } from '../../services/operator/src/reconcile.js';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { until as poll } from '../helpers/wait.js';
import { ApiServerDouble, ENVIRONMENTS, LEASES, VERITY_KINDS } from './api-server-double.js';

const ORG = 'acme';
const NS = 'verity-system';
const LEASE = 'verity-operator';
const TIMINGS = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 };

let t: TestApp;
let apiUrl: string;
let key: string;
let double: ApiServerDouble;
const operators: Operator[] = [];
const reconciledBy = new Map<string, ReconciledEvent[]>();

function startOperator(identity: string): Operator {
  const election: LeaderElectionConfig = { leaseName: LEASE, leaseNamespace: NS, identity, ...TIMINGS };
  const quiet = () => undefined;
  const operator = new Operator({
    config: {
      apiUrl,
      org: ORG,
      token: { kind: 'value', value: key },
      clusterWide: true,
      watchNamespaces: [],
      // Long: only a spec change, a takeover or the annotation reconciles within a test.
      requeueIntervalMs: 600_000,
      workers: 2,
      retryBaseMs: 50,
      retryMaxMs: 400,
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      shutdownTimeoutMs: 1000,
      leaderElection: election,
    },
    kubeConfig: double.kubeConfig(),
    log: { info: quiet, warn: quiet, error: quiet, debug: quiet },
  });
  reconciledBy.set(identity, []);
  operator.on('reconciled', (e) => reconciledBy.get(identity)!.push(e));
  operator.start();
  operators.push(operator);
  return operator;
}

/** Polls `check` until it holds. */
const until = <T>(check: () => T | undefined | false, _what: string, ms = 15_000) =>
  poll(() => {
    const v = check();
    return v === false ? undefined : v;
  }, ms);

const environment = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) =>
  double.store.apply(ENVIRONMENTS, {
    apiVersion: 'verity.dev/v1alpha1',
    kind: 'Environment',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec,
  });
const get = (name: string) => double.store.get(ENVIRONMENTS, NS, name)!;
const ready = (name: string) =>
  until(() => {
    const obj = get(name);
    const c = obj?.status?.conditions?.find((x: any) => x.type === 'Ready');
    return c?.status === 'True' && obj.status.observedGeneration === obj.metadata.generation
      ? obj
      : undefined;
  }, `${name} Ready`);
const holder = () => double.lease(NS, LEASE)?.spec?.holderIdentity as string | undefined;

beforeAll(async () => {
  t = await createTestApp();
  key = await t.seedKey(ORG, 'member');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  double = await new ApiServerDouble().start();
  for (const type of VERITY_KINDS) {
    double.register(type);
  }
});

afterAll(async () => {
  for (const o of operators) {
    await o.stop();
  }
  await double?.close();
  await t?.close();
});

describe('the operator with two replicas', () => {
  let leader: Operator;
  let standby: Operator;
  let standbyName: string;

  it('elects one leader through the Lease, and only the leader reconciles', async () => {
    const a = startOperator('operator-a');
    const b = startOperator('operator-b');
    const name = await until(holder, 'a Lease holder');
    [leader, standby] = name === 'operator-a' ? [a, b] : [b, a];
    standbyName = name === 'operator-a' ? 'operator-b' : 'operator-a';
    await until(() => leader.isLeader, 'the holder to lead');
    expect(standby.isLeader).toBe(false);
    expect(double.lease(NS, LEASE)!.spec).toMatchObject({ holderIdentity: name, leaseDurationSeconds: 2 });

    environment('ha-prod', { description: 'first' });
    await ready('ha-prod');
    await until(() => reconciledBy.get(name)!.some((e) => e.name === 'ha-prod'), 'the leader to reconcile');
    expect(reconciledBy.get(standbyName)).toEqual([]);
    expect((await client(t.app, key).get(`/api/v2/environments/${ORG}/ha-prod`)).json).toMatchObject({
      description: 'first',
    });
  });

  it('records a Normal Event on the resource when a reconcile succeeds, and a Warning when it fails', async () => {
    const [succeeded] = await until(() => {
      const events = double.eventsFor('Environment', NS, 'ha-prod');
      return events.length > 0 && events;
    }, 'an Event on ha-prod');
    expect(succeeded).toMatchObject({
      type: 'Normal',
      reason: 'Succeeded',
      involvedObject: {
        apiVersion: 'verity.dev/v1alpha1',
        kind: 'Environment',
        namespace: NS,
        name: 'ha-prod',
        uid: get('ha-prod').metadata.uid,
      },
      source: { component: 'verity-operator' },
      reportingInstance: holder(),
    });

    environment('ha-broken', { type: 'NOT-A-TYPE' });
    const warning = await until(
      () => double.eventsFor('Environment', NS, 'ha-broken').find((e) => e.type === 'Warning'),
      'a Warning event',
    );
    expect(warning.reason).toBe('InvalidSpec');
    expect(warning.message).toContain('spec.type');
    expect(get('ha-broken').status.conditions.find((c: any) => c.type === 'Stalled').status).toBe('True');
  });

  it('reconciles at once when verity.dev/reconcile-requested-at changes, and records the value handled', async () => {
    const before = reconciledBy.get(holder()!)!.filter((e) => e.name === 'ha-prod').length;
    environment(
      'ha-prod',
      { description: 'first' },
      { [RECONCILE_REQUEST_ANNOTATION]: '2026-11-23T16:00:00Z' },
    );
    const handled = await until(
      () =>
        get('ha-prod').status.lastHandledReconcileAt === '2026-11-23T16:00:00Z' ? get('ha-prod') : undefined,
      'lastHandledReconcileAt',
    );
    // The spec did not change: the annotation alone caused the reconcile.
    expect(handled.metadata.generation).toBe(1);
    await until(
      () => reconciledBy.get(holder()!)!.filter((e) => e.name === 'ha-prod').length === before + 1,
      'the requested reconcile',
    );
  });

  it('fails over: when the leader dies without releasing the Lease, the standby leads within the lease duration', async () => {
    const lastRenew = new Date(double.lease(NS, LEASE)!.spec.renewTime).getTime();
    await leader.stop({ release: false });
    await until(() => standby.isLeader, 'the standby to lead');
    const tookOver = Date.now();
    expect(holder()).toBe(standbyName);
    expect(double.lease(NS, LEASE)!.spec.leaseTransitions).toBe(1);
    // It waited for the Lease to expire (a live leader's Lease is never taken) ...
    expect(tookOver - lastRenew).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs - TIMINGS.retryPeriodMs);
    // ... and not much longer: one retry period after it, give or take a busy machine.
    expect(tookOver - lastRenew).toBeLessThan(TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs + 1500);

    // The new leader reconciles what changes now.
    environment('ha-prod', { description: 'second' });
    await ready('ha-prod');
    expect((await client(t.app, key).get(`/api/v2/environments/${ORG}/ha-prod`)).json).toMatchObject({
      description: 'second',
    });
    expect(reconciledBy.get(standbyName)!.some((e) => e.name === 'ha-prod')).toBe(true);
  });

  it('hands over at once when the leader stops cleanly: it releases the Lease', async () => {
    const third = startOperator('operator-c');
    await new Promise((r) => setTimeout(r, TIMINGS.retryPeriodMs * 3));
    expect(third.isLeader).toBe(false);
    const stopped = Date.now();
    await standby.stop();
    await until(() => third.isLeader, 'the third replica to lead');
    expect(Date.now() - stopped).toBeLessThan(TIMINGS.leaseDurationMs);
    expect(holder()).toBe('operator-c');
    expect(double.store.list(LEASES, NS)).toHaveLength(1);
  });
});
