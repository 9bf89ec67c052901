/** Pods as the kubelet and controllers write them, for the API server double and unit tests. */
import { createHash } from 'node:crypto';

/** A stable 64-hex digest named after a string. */
export const digestOf = (name: string) => createHash('sha256').update(name).digest('hex');

export interface ContainerSpec {
  image: string;
  /** Digest of the image; `null`: the kubelet has not reported an image id yet. */
  digest?: string | null;
  name?: string;
}

export interface PodSpec {
  namespace: string;
  name: string;
  /** One container's image, or several containers. */
  image?: string;
  containers?: ContainerSpec[];
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  /** The controlling owner: a Deployment's ReplicaSet `<deployment>-<hash>` by default. */
  owner?: { kind: string; name: string; uid?: string } | null;
  /** pod-template-hash label; with a ReplicaSet owner, its name is `<workload>-<hash>`. */
  templateHash?: string;
  labels?: Record<string, string>;
  created?: string;
  restarts?: number;
}

/** A pod object as the API server serves it (plain JSON, no resourceVersion yet). */
export function makePod(spec: PodSpec): Record<string, any> {
  const containers = spec.containers ?? [{ image: spec.image ?? 'ghcr.io/acme/app:1.0' }];
  const labels: Record<string, string> = { ...(spec.labels ?? {}) };
  if (spec.templateHash) {
    labels['pod-template-hash'] = spec.templateHash;
  }
  const owner = spec.owner === undefined ? null : spec.owner;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      uid: digestOf(`${spec.namespace}/${spec.name}`).slice(0, 32),
      creationTimestamp: spec.created ?? '2026-11-01T12:00:00Z',
      labels,
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: owner.kind === 'ReplicaSet' ? 'apps/v1' : 'batch/v1',
                kind: owner.kind,
                name: owner.name,
                uid: owner.uid ?? digestOf(owner.name).slice(0, 32),
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      containers: containers.map((c, i) => ({ name: c.name ?? `c${i}`, image: c.image })),
    },
    status: {
      phase: spec.phase ?? 'Running',
      containerStatuses: containers.map((c, i) => {
        const digest = c.digest === undefined ? digestOf(c.image) : c.digest;
        return {
          name: c.name ?? `c${i}`,
          image: c.image,
          imageID: digest === null ? '' : `docker.io/${c.image.split(':')[0]}@sha256:${digest}`,
          ready: true,
          restartCount: spec.restarts ?? 0,
        };
      }),
    },
  };
}

/** The pods of one Deployment revision: `<workload>-<hash>-<i>`, owned by ReplicaSet `<workload>-<hash>`. */
export function deploymentPods(
  namespace: string,
  workload: string,
  image: string,
  replicas: number,
  hash = digestOf(image).slice(0, 10),
): Array<Record<string, any>> {
  return Array.from({ length: replicas }, (_, i) =>
    makePod({
      namespace,
      name: `${workload}-${hash}-${i}`,
      image,
      templateHash: hash,
      owner: { kind: 'ReplicaSet', name: `${workload}-${hash}` },
      labels: { app: workload },
    }),
  );
}
