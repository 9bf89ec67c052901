/** podsToK8sReport: the K8S report body as `kosli snapshot k8s` builds it, one rule per row. */
import { describe, expect, it } from 'vitest';
import { K8sReport } from '../../services/shared/contract/environment-reports.js';
import { podsToK8sReport, workloadOf } from '../../services/reporter/src/pods-report.js';
import { digestOf, makePod } from '../k8s/pods.js';

const nginx = 'docker.io/library/nginx:1.25';
const base = { namespace: 'prod', name: 'web-1', image: nginx };

describe('podsToK8sReport', () => {
  it.each([
    ['Running pods are reported', [makePod(base)], ['prod/web-1']],
    ['Failed pods are reported', [makePod({ ...base, phase: 'Failed' })], ['prod/web-1']],
    ['Pending pods are not', [makePod({ ...base, phase: 'Pending' })], []],
    ['Succeeded pods are not', [makePod({ ...base, phase: 'Succeeded' })], []],
    ['Unknown pods are not', [makePod({ ...base, phase: 'Unknown' })], []],
    [
      'entries are ordered by namespace then pod name',
      [
        makePod({ ...base, namespace: 'b', name: 'z' }),
        makePod({ ...base, namespace: 'a', name: 'y' }),
        makePod({ ...base, namespace: 'b', name: 'a' }),
      ],
      ['a/y', 'b/a', 'b/z'],
    ],
  ])('%s', (_rule, pods, expected) => {
    const { report } = podsToK8sReport(pods);
    expect(report.artifacts.map((a) => `${a.namespace}/${a.podName}`)).toEqual(expected);
    expect(K8sReport.safeParse(report).success).toBe(true);
  });

  it('keys each digest by the image as reported and takes the last 64 hex of the image id', () => {
    const pod = makePod({
      ...base,
      containers: [
        { image: nginx, name: 'web' },
        { image: 'ghcr.io/acme/sidecar@sha256:' + digestOf('x'), name: 'side' },
      ],
    });
    pod.status.containerStatuses[0].imageID = `docker-pullable://nginx@sha256:${digestOf(nginx).toUpperCase()}`;
    pod.status.containerStatuses[1].imageID = `sha256:${digestOf('side')}`;
    expect(podsToK8sReport([pod]).report.artifacts[0]!.digests).toEqual({
      [nginx]: digestOf(nginx),
      ['ghcr.io/acme/sidecar@sha256:' + digestOf('x')]: digestOf('side'),
    });
  });

  it('uses containerStatuses only: init and ephemeral containers are not reported', () => {
    const pod = makePod(base);
    pod.status.initContainerStatuses = [
      { name: 'init', image: 'busybox', imageID: `sha256:${digestOf('bb')}` },
    ];
    pod.status.ephemeralContainerStatuses = [
      { name: 'dbg', image: 'debug', imageID: `sha256:${digestOf('dbg')}` },
    ];
    expect(Object.keys(podsToK8sReport([pod]).report.artifacts[0]!.digests)).toEqual([nginx]);
  });

  it('collapses two containers of one image into one entry', () => {
    const pod = makePod({ ...base, containers: [{ image: nginx }, { image: nginx, name: 'b' }] });
    expect(podsToK8sReport([pod]).report.artifacts[0]!.digests).toEqual({ [nginx]: digestOf(nginx) });
  });

  it('gives the creation time in unix seconds, from a list (Date) or a watch event (string)', () => {
    const fromWatch = makePod({ ...base, created: '2026-11-01T12:00:07Z' });
    const fromList = makePod({ ...base, name: 'web-2' });
    fromList.metadata.creationTimestamp = new Date('2026-11-01T12:00:09.900Z');
    expect(podsToK8sReport([fromWatch, fromList]).report.artifacts.map((a) => a.creationTimestamp)).toEqual([
      Date.parse('2026-11-01T12:00:07Z') / 1000,
      Date.parse('2026-11-01T12:00:09Z') / 1000,
    ]);
  });

  it('serialises owners as apimachinery does, and null when there are none', () => {
    const owned = makePod({ ...base, owner: { kind: 'ReplicaSet', name: 'web-7d9f8b6c5d', uid: 'u-1' } });
    owned.metadata.ownerReferences.push({ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u-2' });
    const bare = makePod({ ...base, name: 'debug', owner: null });
    const { report } = podsToK8sReport([owned, bare]);
    expect(JSON.stringify(report.artifacts.map((a) => a.owners))).toBe(
      JSON.stringify([
        null,
        [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-7d9f8b6c5d',
            uid: 'u-1',
            controller: true,
            blockOwnerDeletion: true,
          },
          { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u-2' },
        ],
      ]),
    );
  });

  it.each([
    ['Running', 'an empty image id', ''],
    ['Running', 'an image id without a digest', 'docker://nginx:latest'],
    ['Failed', 'an empty image id', ''],
  ])('leaves out a %s pod with %s and names it, reporting the rest', (phase, _what, imageID) => {
    const waiting = makePod({ ...base, name: 'new', phase: phase as 'Running' });
    waiting.status.containerStatuses[0].imageID = imageID;
    const r = podsToK8sReport([makePod(base), waiting]);
    expect(r.report.artifacts.map((a) => a.podName)).toEqual(['web-1']);
    expect(r.imageIdUnknown).toEqual([{ namespace: 'prod', name: 'new' }]);
  });

  it('gives an empty cluster an empty artifacts array', () => {
    expect(podsToK8sReport([]).report).toEqual({ artifacts: [] });
  });
});

describe('workloadOf', () => {
  it.each([
    [
      "a Deployment's ReplicaSet without its pod-template hash",
      { owner: { kind: 'ReplicaSet', name: 'web-5f7c9' }, templateHash: '5f7c9' },
      'ReplicaSet/web',
    ],
    [
      'a ReplicaSet whose name does not end in the hash, as is',
      { owner: { kind: 'ReplicaSet', name: 'web' }, templateHash: '5f7c9' },
      'ReplicaSet/web',
    ],
    ['a StatefulSet', { owner: { kind: 'StatefulSet', name: 'db' } }, 'StatefulSet/db'],
    ['no owner', { owner: null }, '-'],
  ])('%s', (_rule, spec, expected) => {
    expect(workloadOf(makePod({ ...base, ...spec }))).toBe(expected);
  });
});
