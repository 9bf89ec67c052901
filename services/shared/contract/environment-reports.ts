/**
 * Environment reports: what reporters PUT to `/environments/{org}/{env}/report/<type>`
 * (spec endpoint 3 for K8S; reference/cli-requests.md 3.6 and section 4 for the others).
 * A report is the full current state of the environment.
 */
import { z } from 'zod';
import { CreationSeconds } from './common.js';

/** The most entries a report may carry (pods, tasks, files). */
export const MAX_REPORT_ARTIFACTS = 50_000;
/** The most digests one entry may carry (containers of a pod). */
export const MAX_DIGESTS_PER_ENTRY = 200;

const Digest = z.string().regex(/^[a-f0-9]{64}$/, 'must be 64 lowercase hex characters');
/** Some reporters send "" for a digest they could not read. */
const DigestOrEmpty = z.string().regex(/^([a-f0-9]{64})?$/, 'must be 64 lowercase hex characters or empty');

const digests = (value: z.ZodString) =>
  z
    .record(z.string().min(1).max(2048), value)
    .refine(
      (d) => Object.keys(d).length <= MAX_DIGESTS_PER_ENTRY,
      `at most ${MAX_DIGESTS_PER_ENTRY} digests`,
    );

/** A Kubernetes owner reference as apimachinery serialises it; extra keys are kept. */
export const K8sOwner = z
  .looseObject({
    apiVersion: z.string(),
    kind: z.string(),
    name: z.string(),
    uid: z.string(),
    controller: z.boolean().nullable().optional(),
    blockOwnerDeletion: z.boolean().nullable().optional(),
  })
  .meta({ id: 'K8sOwner' });
export type K8sOwner = z.infer<typeof K8sOwner>;

/** One pod: image -> digest of each container, its creation time (unix seconds) and owners. */
export const K8sPod = z
  .strictObject({
    podName: z.string().min(1).max(253),
    namespace: z.string().min(1).max(253),
    digests: digests(Digest),
    creationTimestamp: CreationSeconds,
    owners: z.array(K8sOwner).max(20).nullable().optional(),
  })
  .meta({ id: 'K8sPod' });
export type K8sPod = z.infer<typeof K8sPod>;

/** Body of `PUT /environments/{org}/{env}/report/K8S`. */
export const K8sReport = z
  .strictObject({
    type: z.literal('K8S').optional(),
    artifacts: z.array(K8sPod).max(MAX_REPORT_ARTIFACTS),
  })
  .meta({ id: 'K8sReport' });
export type K8sReport = z.infer<typeof K8sReport>;

/** ECS: one running task. */
export const EcsTask = z
  .strictObject({
    taskArn: z.string().min(1).max(2048),
    cluster_name: z.string().max(255).nullable().optional(),
    service_name: z.string().max(255).nullable().optional(),
    digests: digests(DigestOrEmpty),
    creationTimestamp: CreationSeconds,
  })
  .meta({ id: 'EcsTask' });
export const EcsReport = z
  .strictObject({ type: z.literal('ECS').optional(), artifacts: z.array(EcsTask).max(MAX_REPORT_ARTIFACTS) })
  .meta({ id: 'EcsReport' });

/** server, docker, S3 and lambda entries: name -> digest, and a time. */
export const DigestEntry = z
  .strictObject({ digests: digests(Digest), creationTimestamp: CreationSeconds })
  .meta({ id: 'DigestEntry' });
const digestReport = (type: string, id: string) =>
  z
    .strictObject({
      type: z.literal(type).optional(),
      artifacts: z.array(DigestEntry).max(MAX_REPORT_ARTIFACTS),
    })
    .meta({ id });
export const ServerReport = digestReport('server', 'ServerReport');
export const DockerReport = digestReport('docker', 'DockerReport');
export const S3Report = digestReport('S3', 'S3Report');
export const LambdaReport = digestReport('lambda', 'LambdaReport');

/** Azure web apps. */
export const AzureAppsReport = z
  .strictObject({
    type: z.literal('azure-apps').optional(),
    artifacts: z
      .array(
        z.strictObject({
          app_name: z.string().min(1).max(255),
          app_kind: z.string().max(255),
          digests_source: z.enum(['acr', 'logs', 'kosli-cli']),
          digests: digests(DigestOrEmpty),
          creationTimestamp: CreationSeconds,
        }),
      )
      .max(MAX_REPORT_ARTIFACTS),
  })
  .meta({ id: 'AzureAppsReport' });

/** Cloud Run services and jobs. */
export const CloudRunReport = z
  .strictObject({
    type: z.literal('cloud-run').optional(),
    artifacts: z
      .array(
        z.strictObject({
          digests: digests(DigestOrEmpty),
          creationTimestamp: CreationSeconds,
          kind: z.enum(['service', 'job']),
          serviceName: z.string().max(255).optional(),
          revisionName: z.string().max(255).optional(),
          jobName: z.string().max(255).optional(),
        }),
      )
      .max(MAX_REPORT_ARTIFACTS),
  })
  .meta({ id: 'CloudRunReport' });

/** Report schemas by the `<type>` path segment. */
export const REPORT_SCHEMAS = {
  K8S: K8sReport,
  ECS: EcsReport,
  server: ServerReport,
  docker: DockerReport,
  S3: S3Report,
  lambda: LambdaReport,
  'azure-apps': AzureAppsReport,
  'cloud-run': CloudRunReport,
} as const;
export type ReportType = keyof typeof REPORT_SCHEMAS;
