/**
 * Environment policies (reference/cli-requests.md 3.7; spec endpoint 14): multipart `payload`
 * plus `policy_file`; every change of content a new immutable version.
 */
import { z } from 'zod';
import { EpochSeconds, ResourceName } from './common.js';

/** The JSON of the `payload` part of `PUT /policies/{org}`. */
export const PolicyPayload = z
  .strictObject({
    name: ResourceName,
    description: z.string().max(10_000).default(''),
    comment: z.string().max(10_000).default(''),
    type: z.literal('env').default('env'),
  })
  .meta({ id: 'PolicyPayload' });

export const PolicyVersion = z
  .object({
    version: z.number().int(),
    comment: z.string(),
    timestamp: EpochSeconds,
    created_by: z.string(),
    policy_yaml: z.string(),
  })
  .meta({ id: 'PolicyVersion' });

export const PolicyEvent = z
  .object({
    type: z.enum(['creation', 'metadata_update', 'new_version', 'renaming', 'archiving']),
    timestamp: EpochSeconds,
    user: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'PolicyEvent' });

/** A policy with its versions, events and the environments it is attached to. */
export const Policy = z
  .object({
    /** Index of the record's latest entry in the organization's transparency log; null until sequenced. */
    log_index: z.number().int().nullable().optional(),
    name: z.string(),
    description: z.string(),
    type: z.string(),
    created_by: z.string(),
    created_at: EpochSeconds,
    last_modified_at: EpochSeconds,
    archived: z.boolean(),
    versions: z.array(PolicyVersion),
    events: z.array(PolicyEvent),
    consuming_envs: z.array(z.string()),
  })
  .meta({ id: 'Policy' });
