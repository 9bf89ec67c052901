/** Custom attestation types (spec endpoint 18; reference/cli-requests.md 3.8; semantics.md section 8). */
import { z } from 'zod';
import { EpochSeconds } from './common.js';
import { TypeName } from './evidence-common.js';

/** The most jq rules and summary rows a type version may carry. */
export const MAX_TYPE_RULES = 50;

const JqExpression = z.string().min(1).max(4096);

/** `data_json` of `POST /custom-attestation-types/{org}`. */
export const CreateAttestationType = z
  .strictObject({
    name: TypeName,
    description: z.string().max(4096).nullable().optional(),
    comment: z.string().max(4096).nullable().optional(),
    evaluator: z
      .discriminatedUnion('content_type', [
        z.strictObject({ content_type: z.literal('jq'), rules: z.array(JqExpression).max(MAX_TYPE_RULES) }),
        z.strictObject({ content_type: z.literal('default') }),
      ])
      .nullable()
      .optional(),
    summary: z
      .array(z.strictObject({ name: z.string().min(1).max(255), expression: JqExpression }))
      .max(MAX_TYPE_RULES)
      .nullable()
      .optional(),
  })
  .meta({ id: 'CreateAttestationType' });
export type CreateAttestationType = z.infer<typeof CreateAttestationType>;

/** The multipart parts of the create, for the OpenAPI document. */
export const AttestationTypeForm = z
  .object({
    data_json: z.string().meta({ description: 'JSON: {"name", "description"?, "evaluator"?, "summary"?}' }),
    type_schema: z.string().optional().meta({ description: 'A JSON Schema of attestation_data (file part)' }),
  })
  .meta({ id: 'AttestationTypeForm' });

/** One version of a type. */
export const AttestationTypeVersion = z
  .object({
    version: z.number().int(),
    comment: z.string().nullable(),
    description: z.string().nullable(),
    timestamp: EpochSeconds,
    created_by: z.string(),
    type_schema: z.record(z.string(), z.unknown()).nullable(),
    evaluator: z.object({ content_type: z.string(), rules: z.array(z.string()).optional() }).nullable(),
    summary: z.array(z.object({ name: z.string(), expression: z.string() })).nullable(),
  })
  .meta({ id: 'AttestationTypeVersion' });

/** A type with its versions; with `?version=` only that version, without the type's own timestamps. */
export const AttestationType = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    org: z.string(),
    archived: z.boolean(),
    created_by: z.string().optional(),
    created_at: EpochSeconds.optional(),
    last_modified_at: EpochSeconds.optional(),
    versions: z.array(AttestationTypeVersion),
  })
  .meta({ id: 'AttestationType' });
export type AttestationType = z.infer<typeof AttestationType>;
