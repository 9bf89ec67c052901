/** Builders for runtime tests: K8S pods, reports, and multipart policy uploads. */
import type { FastifyInstance } from 'fastify';

/** A 64-hex fingerprint from a short seed. */
export const fp = (seed: string): string => seed.repeat(64).slice(0, 64);

/** One K8S pod entry as the CLI sends it. */
export function pod(name: string, images: Record<string, string>, creationTimestamp = 1_700_000_000) {
  return {
    podName: name,
    namespace: 'prod',
    digests: images,
    creationTimestamp,
    owners: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: `${name.split('-')[0]}-rs`,
        uid: 'u1',
        controller: true,
      },
    ],
  };
}

/** `replicas` pods of one image. */
export function deployment(
  name: string,
  image: string,
  fingerprint: string,
  replicas: number,
  ts = 1_700_000_000,
) {
  return Array.from({ length: replicas }, (_, i) => pod(`${name}-${i}`, { [image]: fingerprint }, ts + i));
}

/** PUT /policies/{org} as the CLI sends it: multipart `payload` + `policy_file`. */
export async function putPolicy(
  app: FastifyInstance,
  key: string,
  org: string,
  name: string,
  yaml: string,
  extra: Record<string, unknown> = {},
) {
  const boundary = 'verity-test-boundary';
  const payload = JSON.stringify({ name, description: '', comment: '', type: 'env', ...extra });
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="payload"\r\n\r\n${payload}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="policy_file"; filename="policy.yml"\r\nContent-Type: application/octet-stream\r\n\r\n${yaml}\r\n` +
    `--${boundary}--\r\n`;
  const res = await app.inject({
    method: 'PUT',
    url: `/api/v2/policies/${org}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  });
  return { status: res.statusCode, json: res.json<any>() };
}

export const POLICY_SCHEMA = '_schema: https://docs.kosli.com/schemas/policy/v1\n';
