/**
 * Pods of one deployment as the reporter sends them: `replicas` pods of one ReplicaSet, in
 * `namespace` (default: one of 20 team namespaces).
 */
import { createHash } from 'node:crypto';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

export function deploymentPods(
  d: number,
  rs: string,
  digests: Record<string, string>,
  opts: { replicas: number; createdAt: number; namespace?: string },
) {
  return Array.from({ length: opts.replicas }, (_, i) => ({
    podName: `svc-${d}-${rs}-${i}`,
    namespace: opts.namespace ?? `team-${d % 20}`,
    digests,
    creationTimestamp: opts.createdAt + i,
    owners: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: `svc-${d}-${rs}`,
        uid: sha(rs).slice(0, 36),
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  }));
}
