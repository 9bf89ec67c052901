/**
 * Environments (reference/cli-requests.md 3.5; spec endpoints 7, 8 and 9; Terraform provider):
 * create or update, read, list, patch, rename, archive, join, attach and detach policies.
 */
import { z } from 'zod';
import { EpochSeconds, ResourceName, TimeSeconds } from './common.js';

export const ENVIRONMENT_TYPE_VALUES = [
  'K8S',
  'ECS',
  'S3',
  'lambda',
  'server',
  'docker',
  'azure-apps',
  'cloud-run',
  'logical',
] as const;
/** The kinds of environment; `logical` groups others and takes no reports. */
export const EnvironmentType = z.enum(ENVIRONMENT_TYPE_VALUES);

const NameList = z.array(ResourceName).max(200);

/** Body of `PUT /environments/{org}` (create or update). */
export const EnvironmentPut = z
  .strictObject({
    name: ResourceName,
    type: EnvironmentType,
    description: z.string().max(10_000).default(''),
    include_scaling: z.boolean().optional(),
    require_provenance: z.boolean().optional(),
    included_environments: NameList.nullable().optional(),
    policies: NameList.nullable().optional(),
  })
  .meta({ id: 'EnvironmentPut' });
export type EnvironmentPut = z.infer<typeof EnvironmentPut>;

/** Body of `PATCH /environments/{org}/{env}`: only present fields change. */
export const EnvironmentPatch = z
  .strictObject({
    description: z.string().max(10_000).optional(),
    include_scaling: z.boolean().optional(),
    included_environments: NameList.nullable().optional(),
    policies: NameList.nullable().optional(),
  })
  .meta({ id: 'EnvironmentPatch' });

/** An environment as `GET /environments/{org}/{env}` returns it. */
export const Environment = z
  .object({
    org: z.string(),
    name: z.string(),
    type: z.string(),
    description: z.string(),
    last_modified_at: EpochSeconds,
    last_reported_at: EpochSeconds.nullable(),
    last_changed_at: EpochSeconds.nullable(),
    /** Compliance of the latest snapshot; null when unknown (no policies). */
    state: z.boolean().nullable(),
    include_scaling: z.boolean(),
    require_provenance: z.boolean(),
    archived: z.boolean(),
    tags: z.record(z.string(), z.string()),
    policies: z.array(z.string()),
    included_environments: z.array(z.string()).nullable(),
    latest_snapshot_index: z.number().int().nullable(),
    /** Artifacts running in the latest snapshot (0 before the first report). */
    running_artifacts: z.number().int(),
  })
  .meta({ id: 'Environment' });
export type Environment = z.infer<typeof Environment>;

/** The paginated form of the list, when `page` or `per_page` is given. */
export const EnvironmentPage = z
  .object({
    page: z.number().int(),
    per_page: z.number().int(),
    total_pages: z.number().int(),
    total_count: z.number().int(),
    environments: z.array(Environment),
  })
  .meta({ id: 'EnvironmentPage' });

const RepeatedString = z.union([z.string(), z.array(z.string())]).optional();

/** Query of `GET /environments/{org}`. */
export const EnvironmentListQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(100_000).optional(),
  per_page: z.coerce.number().int().min(1).max(50).optional(),
  name: z.string().max(255).optional(),
  type: RepeatedString,
  tag: RepeatedString,
  space_id: RepeatedString,
  sort: z.enum(['name', 'last_modified_at', 'last_changed_at']).optional(),
  sort_direction: z.enum(['asc', 'desc']).optional(),
});

/** Body of `PUT /environments/{org}/{env}/rename`. */
export const EnvironmentRename = z.strictObject({ new_name: ResourceName }).meta({ id: 'EnvironmentRename' });
/** Body of `PUT /environments/{org}/{logical}/join`. */
export const EnvironmentJoin = z
  .strictObject({ physical_env_name: ResourceName })
  .meta({ id: 'EnvironmentJoin' });
/** Body of `POST` and `DELETE /environments/{org}/{env}/policies` (spec endpoints 7 and 8). */
export const PolicyNames = z
  .strictObject({ policy_names: z.array(ResourceName).min(1).max(100) })
  .meta({ id: 'PolicyNames' });

/** One environment event as `GET /environments/{org}/{env}/events` lists it. */
export const EnvironmentEvent = z
  .object({
    environment_name: z.string(),
    snapshot_index: z.number().int(),
    artifact_name: z.string(),
    sha256: z.string(),
    description: z.string(),
    reported_at: EpochSeconds,
    pipeline: z.string(),
    type: z.string(),
    flows: z.array(z.object({ flow_name: z.string(), deployments: z.array(z.number()).nullable() })),
    artifact_compliance: z.boolean().nullable(),
    snapshot_compliance: z.boolean().nullable(),
  })
  .meta({ id: 'EnvironmentEvent' });

/** Query of the events endpoint; `repo_name` and `interval` as the CLI sends them. */
export const EnvironmentEventsQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(15),
  interval: z.string().max(100).optional(),
  reverse: z.enum(['true', 'false', 'True', 'False']).optional(),
  repo_name: RepeatedString,
  start: z.string().max(50).optional(),
  end: z.string().max(50).optional(),
  start_ts: z.coerce.number().pipe(TimeSeconds).optional(),
  end_ts: z.coerce.number().pipe(TimeSeconds).optional(),
});
