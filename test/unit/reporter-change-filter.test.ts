/**
 * The change filter: a PUT when the running artifacts change (a digest appears or disappears, a
 * workload's image changes), none for scaling, restarts, pod names or timestamps.
 */
import { describe, expect, it } from 'vitest';
import {
  decideReport,
  identityChanges,
  podsIdentity,
  type LastSubmitted,
} from '../../services/reporter/src/change-filter.js';
import { podsToK8sReport } from '../../services/reporter/src/pods-report.js';
import { deploymentPods, makePod } from '../k8s/pods.js';

const identity = (pods: Array<Record<string, any>>) => podsIdentity(pods).identity;
const web = (image: string, replicas: number, ns = 'prod') => deploymentPods(ns, 'web', image, replicas);
const api = deploymentPods('prod', 'api', 'acme/api:3', 2);
const before = [...web('acme/web:1', 3), ...api];

describe('the identity of a report', () => {
  it.each([
    ['scaling 3 -> 5', [...web('acme/web:1', 5), ...api], false],
    ['scaling 3 -> 1', [...web('acme/web:1', 1), ...api], false],
    [
      'restarts and a new creation time',
      before.map((p) => makePod({ ...podSpec(p), restarts: 4, created: '2026-12-01T00:00:00Z' })),
      false,
    ],
    [
      'pods replaced under other names',
      before.map((p) => makePod({ ...podSpec(p), name: p.metadata.name + 'x' })),
      false,
    ],
    ['a rollout: the workload runs a new digest', [...web('acme/web:2', 3), ...api], true],
    ['a workload scaled to zero: its digest disappears', api, true],
    ['a new workload appears', [...before, ...deploymentPods('prod', 'cron', 'acme/cron:1', 1)], true],
    ['the same image moves to another namespace', [...web('acme/web:1', 3, 'staging'), ...api], true],
    [
      'the same digest under a new tag',
      before.map((p) =>
        p.metadata.name.startsWith('web')
          ? makePod({ ...podSpec(p), containers: [{ image: 'acme/web:1-retag', digest: digest(p) }] })
          : p,
      ),
      true,
    ],
  ])('%s: changed = %s', (_rule, after, changed) => {
    const a = identity(before);
    const b = identity(after);
    expect(decideReport({ identity: a, outcome: 'accepted' }, b, false).send).toBe(changed);
  });

  it('counts what the report would carry and leave out, and its digests are those of the report', () => {
    const waiting = makePod({
      namespace: 'prod',
      name: 'w',
      containers: [{ image: 'acme/w:1', digest: null }],
    });
    const pending = makePod({ namespace: 'prod', name: 'p', phase: 'Pending' });
    const pods = [...before, waiting, pending];
    const { identity: id, reported, leftOut } = podsIdentity(pods);
    const { report, imageIdUnknown } = podsToK8sReport(pods);
    expect([reported, leftOut]).toEqual([report.artifacts.length, imageIdUnknown.length]);
    const reportDigests = new Set(
      report.artifacts.flatMap((a) => Object.entries(a.digests).map(([i, d]) => `${i}@${d}`)),
    );
    expect(new Set(id.map((t) => t.split(' ')[2]))).toEqual(reportDigests);
  });

  it('names what started and stopped', () => {
    expect(identityChanges(identity(before), identity([...web('acme/web:2', 3), ...api]))).toEqual({
      started: [expect.stringMatching(/^prod ReplicaSet\/web acme\/web:2@[0-9a-f]{64}$/)],
      stopped: [expect.stringMatching(/^prod ReplicaSet\/web acme\/web:1@[0-9a-f]{64}$/)],
    });
  });
});

describe('decideReport', () => {
  const a = identity(before);
  const b = identity(api);
  it.each<[string, LastSubmitted | undefined, readonly string[], boolean, ReturnType<typeof decideReport>]>([
    ['the first report is sent', undefined, a, false, { send: true, reason: 'first' }],
    [
      'an unchanged state is skipped',
      { identity: a, outcome: 'accepted' },
      a,
      false,
      { send: false, reason: 'unchanged' },
    ],
    [
      'a state still being delivered is not sent twice',
      { identity: a, outcome: 'pending' },
      a,
      false,
      { send: false, reason: 'unchanged' },
    ],
    [
      'a changed state is sent',
      { identity: a, outcome: 'accepted' },
      b,
      false,
      { send: true, reason: 'change' },
    ],
    [
      'a rejected state is not sent again',
      { identity: a, outcome: 'rejected' },
      a,
      false,
      { send: false, reason: 'rejected' },
    ],
    [
      'a rejected state that changes is sent',
      { identity: a, outcome: 'rejected' },
      b,
      false,
      { send: true, reason: 'change' },
    ],
    [
      'the heartbeat sends an unchanged state',
      { identity: a, outcome: 'accepted' },
      a,
      true,
      { send: true, reason: 'heartbeat' },
    ],
  ])('%s', (_rule, last, next, heartbeat, expected) => {
    expect(decideReport(last, next, heartbeat)).toEqual(expected);
  });
});

function podSpec(p: Record<string, any>) {
  const owner = p.metadata.ownerReferences?.[0];
  return {
    namespace: p.metadata.namespace,
    name: p.metadata.name,
    image: p.status.containerStatuses[0].image,
    templateHash: p.metadata.labels['pod-template-hash'],
    owner: owner ? { kind: owner.kind, name: owner.name } : null,
  };
}

function digest(p: Record<string, any>): string {
  return (p.status.containerStatuses[0].imageID as string).slice(-64);
}
