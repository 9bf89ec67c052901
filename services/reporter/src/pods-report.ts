/**
 * Pods to the body of `PUT /environments/{org}/{env}/report/K8S` (spec endpoint 3), as
 * `kosli snapshot k8s` builds it (reference/cli-requests.md section 4): Running and Failed pods,
 * their `containerStatuses` only, image as the kubelet reports it -> the last 64 hex characters
 * of its `imageID`. Unlike the CLI, a pod whose image id is not known yet is left out and named,
 * never failing the whole environment. Pure: pods in, report out.
 */
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { K8sOwner, K8sPod, K8sReport } from '../../shared/contract/environment-reports.js';

/**
 * The fields of a pod a report reads. A pod from a list has a Date creation time (the client
 * deserialises it); one from a watch event is plain JSON with an RFC 3339 string.
 */
export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    creationTimestamp?: Date | string;
    labels?: Record<string, string>;
    ownerReferences?: V1OwnerReference[];
  };
  status?: { phase?: string; containerStatuses?: Array<{ image?: string; imageID?: string }> };
}

/** A pod left out of a report. */
export interface PodRef {
  namespace: string;
  name: string;
}

/** A report and the pods left out of it. */
export interface PodsReport {
  report: K8sReport;
  /** Running or Failed pods left out because a container has no image id yet. */
  imageIdUnknown: PodRef[];
}

const HEX64 = /^[a-fA-F0-9]{64}$/;
const LOWER_HEX64 = /^[a-f0-9]{64}$/;

/** Seconds since the epoch of a Date or an RFC 3339 string. */
function unixSeconds(value: Date | string | undefined): number {
  if (value === undefined) {
    return 0;
  }
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isFinite(ms) && ms > 0 ? Math.floor(ms / 1000) : 0;
}

/** Owner references with the keys apimachinery writes, `controller`/`blockOwnerDeletion` omitted when unset. */
function serialiseOwners(owners: V1OwnerReference[] | undefined): K8sOwner[] | null {
  if (!owners || owners.length === 0) {
    return null;
  }
  return owners.map((o) => {
    const owner: K8sOwner = { apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid };
    if (o.controller !== undefined && o.controller !== null) {
      owner.controller = o.controller;
    }
    if (o.blockOwnerDeletion !== undefined && o.blockOwnerDeletion !== null) {
      owner.blockOwnerDeletion = o.blockOwnerDeletion;
    }
    return owner;
  });
}

/**
 * What a rollout changes and scaling does not: the controlling owner, with the pod-template hash
 * cut from a ReplicaSet's name so that a Deployment's successive ReplicaSets are one workload.
 * A pod without owners is its own workload class `-` (its name never counts).
 */
export function workloadOf(pod: PodLike): string {
  const owners = pod.metadata?.ownerReferences ?? [];
  const owner = owners.find((o) => o.controller === true) ?? owners[0];
  if (!owner) {
    return '-';
  }
  let name = owner.name;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && name.endsWith(`-${hash}`)) {
    name = name.slice(0, -hash.length - 1);
  }
  return `${owner.kind}/${name}`;
}

/**
 * What a pod contributes: nothing (`undefined`) unless Running or Failed; `'unknown'` when a
 * container has no image id yet; else image as reported -> last 64 hex of its image id.
 */
export function podDigests(pod: PodLike): Record<string, string> | 'unknown' | undefined {
  const phase = pod.status?.phase;
  if (phase !== 'Running' && phase !== 'Failed') {
    return undefined;
  }
  // Pods are immutable in the cache (an update replaces the object): derive once per object.
  const known = derived.get(pod);
  if (known !== undefined) {
    return known;
  }
  const digests: Record<string, string> | 'unknown' = deriveDigests(pod);
  derived.set(pod, digests);
  return digests;
}

const derived = new WeakMap<PodLike, Record<string, string> | 'unknown'>();

function deriveDigests(pod: PodLike): Record<string, string> | 'unknown' {
  const digests: Record<string, string> = {};
  for (const cs of pod.status?.containerStatuses ?? []) {
    const id = cs.imageID ?? '';
    const digest = id.length >= 64 ? id.slice(-64) : '';
    if (!cs.image || !HEX64.test(digest)) {
      return 'unknown';
    }
    digests[cs.image] = LOWER_HEX64.test(digest) ? digest : digest.toLowerCase();
  }
  return digests;
}

/** The report of a set of pods: one entry per Running or Failed pod whose image ids are all known. */
export function podsToK8sReport(pods: Iterable<PodLike>): PodsReport {
  const entries: K8sPod[] = [];
  const imageIdUnknown: PodRef[] = [];
  for (const pod of pods) {
    const digests = podDigests(pod);
    if (digests === undefined) {
      continue;
    }
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    if (digests === 'unknown') {
      imageIdUnknown.push({ namespace, name });
      continue;
    }
    entries.push({
      podName: name,
      namespace,
      digests,
      creationTimestamp: unixSeconds(pod.metadata?.creationTimestamp),
      owners: serialiseOwners(pod.metadata?.ownerReferences),
    });
  }
  // A stable order: equal states give byte-equal bodies, whatever order the cache lists them in.
  entries.sort((a, b) =>
    a.namespace === b.namespace ? (a.podName < b.podName ? -1 : 1) : a.namespace < b.namespace ? -1 : 1,
  );
  imageIdUnknown.sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  return { report: { artifacts: entries }, imageIdUnknown };
}
