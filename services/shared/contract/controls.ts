/** Controls, a beta feature (spec endpoint 13; reference/cli-requests.md 3.9; semantics.md section 8). */
import { z } from 'zod';
import { EpochSeconds } from './common.js';
import { Tags } from './evidence-common.js';

const Links = z
  .record(z.string().min(1).max(255), z.string().max(2048))
  .refine((r) => Object.keys(r).length <= 50, 'at most 50 links');

/** Body of `POST /controls/{org}`. */
export const CreateControl = z
  .strictObject({
    identifier: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[a-zA-Z0-9][a-zA-Z0-9._~-]*$/, "must match pattern '^[a-zA-Z0-9][a-zA-Z0-9._~-]*$'"),
    name: z.string().min(1).max(512),
    description: z.string().max(8192).nullable().optional(),
    links: Links.nullable().optional(),
  })
  .meta({ id: 'CreateControl' });

/** Body of `PUT /controls/{org}/{identifier}`: only the fields present change. */
export const UpdateControl = z
  .strictObject({
    name: z.string().min(1).max(512).optional(),
    description: z.string().max(8192).nullable().optional(),
    links: Links.nullable().optional(),
  })
  .meta({ id: 'UpdateControl' });

/** A version of a control (spec: Control version). */
export const ControlVersion = z
  .object({
    identifier: z.string(),
    version: z.number().int(),
    name: z.string(),
    created_by: z.string(),
    description: z.string(),
    links: z.record(z.string(), z.string()),
    created_at: EpochSeconds,
    archived: z.boolean(),
  })
  .meta({ id: 'ControlVersion' });

/** What happened to a control: the enumeration of the spec's control response. */
export const ControlEvent = z
  .object({
    event: z.enum(['created', 'updated', 'archived', 'unarchived']),
    version: z.number().int(),
    created_at: EpochSeconds,
    created_by: z.string(),
  })
  .meta({ id: 'ControlEvent' });

/** A control: its latest version plus tags and history. */
export const Control = ControlVersion.extend({
  last_modified_at: EpochSeconds,
  tags: Tags,
  policies_referencing: z.array(z.string()),
  events: z.array(ControlEvent),
}).meta({ id: 'Control' });

/** `GET /controls/{org}`. */
export const ControlPage = z
  .object({
    controls: z.array(Control),
    page: z.number().int(),
    per_page: z.number().int(),
    total_pages: z.number().int(),
    total_count: z.number().int(),
  })
  .meta({ id: 'ControlPage' });
