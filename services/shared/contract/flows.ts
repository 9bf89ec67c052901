/** Flows (reference/cli-requests.md 3.1; spec endpoints 10 and 11, and the flow listing). */
import { z } from 'zod';
import { EpochSeconds, Pagination, ResourceName } from './common.js';
import { Tags } from './evidence-common.js';

/** `data_json` of `PUT /flows/{org}/template_file`. */
export const CreateFlowData = z
  .strictObject({
    name: ResourceName,
    description: z.string().max(4096).optional().default(''),
    visibility: z.enum(['public', 'private']).optional(),
    template: z.array(z.string().max(255)).max(100).optional(),
  })
  .meta({ id: 'CreateFlowData' });
export type CreateFlowData = z.infer<typeof CreateFlowData>;

/** Body of the legacy `PUT /flows/{org}`: a list of expected evidence names instead of a YAML template. */
export const LegacyCreateFlow = z
  .strictObject({
    name: ResourceName,
    description: z.string().max(4096).optional().default(''),
    visibility: z.enum(['public', 'private']).optional(),
    template: z.array(z.string().max(255)).max(100).optional(),
  })
  .meta({ id: 'LegacyCreateFlow' });

/** Body of `PUT /flows/{org}/{flow}/rename` (spec endpoint 10). */
export const RenameInput = z.strictObject({ new_name: ResourceName }).meta({ id: 'RenameInput' });

/** The multipart parts of `PUT /flows/{org}/template_file`, for the OpenAPI document. */
export const FlowTemplateForm = z
  .object({
    data_json: z.string().meta({ description: 'JSON: {"name", "description", "visibility"?}' }),
    template_file: z.string().optional().meta({ description: 'The flow template YAML (file part)' }),
  })
  .meta({ id: 'FlowTemplateForm' });

/** A flow as `GET /flows/{org}/{flow}` and the flow listing return it. */
export const Flow = z
  .object({
    name: z.string(),
    description: z.string(),
    visibility: z.string(),
    org: z.string(),
    /**
     * The raw template YAML; for legacy flows the expected names joined by spaces; for a flow
     * created without a template, the minimal template `version: 1` (nothing expected).
     */
    template: z.string(),
    repo_url: z.string().nullable(),
    tags: Tags,
    archived: z.boolean(),
    created_at: EpochSeconds,
    last_modified_at: EpochSeconds,
    latest_activity_at: EpochSeconds.nullable(),
    latest_state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE']).nullable(),
    last_deployment_at: EpochSeconds.nullable(),
    html_url: z.string(),
  })
  .meta({ id: 'Flow' });
export type Flow = z.infer<typeof Flow>;

/** `GET /flows/{org}` with `per_page`: a page of flows. */
export const FlowPage = z.object({ data: z.array(Flow), pagination: Pagination }).meta({ id: 'FlowPage' });
