/** Trails and their compliance (reference/cli-requests.md 3.2; semantics.md sections 3 and 4). */
import { z } from 'zod';
import { EpochSeconds, Pagination, ResourceName } from './common.js';
import {
  ExternalUrls,
  GitCommit,
  GitCommitRecord,
  RepoInfoInput,
  Tags,
  TrailName,
  UserData,
} from './evidence-common.js';

/** `data_json` of `PUT /trails/{org}/{flow}` (or the JSON body). */
export const CreateTrail = z
  .strictObject({
    name: TrailName,
    description: z.string().max(4096).nullable().optional(),
    git_commit_info: GitCommit.nullable().optional(),
    repo_info: RepoInfoInput.nullable().optional(),
    origin_url: z.string().max(2048).nullable().optional(),
    external_urls: ExternalUrls.nullable().optional(),
    user_data: UserData.nullable().optional(),
  })
  .meta({ id: 'CreateTrail' });
export type CreateTrail = z.infer<typeof CreateTrail>;

/** The multipart parts of `PUT /trails/{org}/{flow}`, for the OpenAPI document. */
export const CreateTrailForm = z
  .object({
    data_json: z.string().meta({ description: 'JSON: the CreateTrail object' }),
    template_file: z.string().optional().meta({ description: 'A per-trail template YAML (file part)' }),
  })
  .meta({ id: 'CreateTrailForm' });

/** A status of one attestation slot (semantics.md section 4). */
export const AttestationStatus = z
  .object({
    attestation_name: z.string(),
    attestation_type: z.string().nullable(),
    attestation_id: z.string().nullable(),
    overridden_attestation_id: z.string().nullable(),
    status: z.enum(['COMPLETE', 'MISSING']),
    is_compliant: z.boolean().nullable(),
    unexpected: z.boolean(),
  })
  .meta({ id: 'AttestationStatus' });
export type AttestationStatus = z.infer<typeof AttestationStatus>;

/** A status of one artifact in its trail. */
export const ArtifactStatus = z
  .object({
    artifact_fingerprint: z.string().nullable(),
    artifact_id: z.string().nullable(),
    status: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE', 'MISSING']),
    is_compliant: z.boolean().nullable(),
    attestations_statuses: z.array(AttestationStatus),
    unexpected: z.boolean(),
    evaluated_at: EpochSeconds.nullable(),
    flow_template_id: z.string().nullable(),
  })
  .meta({ id: 'ArtifactStatus' });
export type ArtifactStatus = z.infer<typeof ArtifactStatus>;

/** An attestation aimed at an artifact that has not been bound (yet), and why. */
export const UnboundAttestation = z
  .object({
    attestation_id: z.string(),
    attestation_name: z.string(),
    attestation_type: z.string(),
    target_artifacts: z.array(z.string()),
    git_commit: z.string().nullable(),
    reason: z.string(),
  })
  .meta({ id: 'UnboundAttestation' });

/** The stored evaluation of a trail. */
export const TrailComplianceStatus = z
  .object({
    status: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE']),
    is_compliant: z.boolean(),
    attestations_statuses: z.array(AttestationStatus),
    artifacts_statuses: z.record(z.string(), ArtifactStatus),
    unbound_attestations: z.array(UnboundAttestation),
    evaluated_at: EpochSeconds.nullable(),
    flow_template_id: z.string().nullable(),
  })
  .meta({ id: 'TrailComplianceStatus' });
export type TrailComplianceStatus = z.infer<typeof TrailComplianceStatus>;

const TemplateAttestation = z.object({ name: z.string(), type: z.string() });
/** A parsed flow template as trails carry it. */
export const TemplateRecord = z
  .object({
    version: z.number(),
    trail: z.object({
      attestations: z.array(TemplateAttestation),
      artifacts: z.array(z.object({ name: z.string(), attestations: z.array(TemplateAttestation) })),
    }),
    content: z.string().nullable(),
  })
  .meta({ id: 'TemplateRecord' });

/** One entry of a trail's event log; fields beyond type and timestamp depend on the type. */
export const TrailEvent = z
  .looseObject({
    type: z.string(),
    timestamp: EpochSeconds,
  })
  .meta({ id: 'TrailEvent' });

/** `GET /trails/{org}/{flow}/{trail}/events`: a page of a trail's whole event log, oldest first. */
export const TrailEventsPage = z
  .object({ data: z.array(TrailEvent), pagination: Pagination })
  .meta({ id: 'TrailEventsPage' });

/** A trail as `GET /trails/{org}/{flow}/{trail}` returns it. */
export const Trail = z
  .object({
    name: z.string(),
    /** Index of the record's latest entry in the organization's transparency log; null until sequenced. */
    log_index: z.number().int().nullable().optional(),
    description: z.string(),
    git_commit_info: GitCommitRecord.nullable(),
    origin_url: z.string().nullable(),
    user_data: z.unknown(),
    repo_ids: z.array(z.string()),
    last_modified_at: EpochSeconds,
    created_at: EpochSeconds,
    compliance_status: TrailComplianceStatus,
    template: TemplateRecord,
    compliance_state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE']),
    is_compliant: z.boolean(),
    /** Its first event and its 100 most recent, oldest first (all of them when it has no more than 101). */
    events: z.array(TrailEvent),
    /** The events of the trail in all, shown or not (`GET /trails/{org}/{flow}/{trail}/events` pages them). */
    events_total: z.number().int(),
    created_by: z.string(),
    flow: z.object({ name: z.string(), tags: Tags }),
    external_urls: z.record(z.string(), z.unknown()).nullable(),
    html_url: z.string(),
  })
  .meta({ id: 'Trail' });
export type Trail = z.infer<typeof Trail>;

/** A trail in a listing. */
export const TrailListItem = z
  .object({
    name: z.string(),
    description: z.string(),
    flow_name: z.string(),
    compliance_state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE']),
    is_compliant: z.boolean(),
    git_commit_info: GitCommitRecord.nullable(),
    origin_url: z.string().nullable(),
    created_at: EpochSeconds,
    last_modified_at: EpochSeconds,
    html_url: z.string(),
  })
  .meta({ id: 'TrailListItem' });

/** `GET /trails/{org}` and `GET /trails/{org}/{flow}`: a page of trails. */
export const TrailPage = z
  .object({ data: z.array(TrailListItem), pagination: Pagination })
  .meta({ id: 'TrailPage' });

/** Query of `GET /trails/{org}`. */
export const TrailListQuery = z.strictObject({
  flow: ResourceName.optional(),
  fingerprint: z
    .string()
    .regex(/^[a-f0-9]{5,64}$/, 'must be 5 to 64 lowercase hex characters')
    .optional(),
  flow_tag: z
    .string()
    .max(512)
    .regex(/^[^:=]+[:=].*$/, "must be 'key:value' (or 'key=value')")
    .optional(),
});
