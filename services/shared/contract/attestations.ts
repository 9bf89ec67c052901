/**
 * Attestations (reference/cli-requests.md 3.4, openapi-catalog.md "Attestation POST bodies";
 * spec endpoints 2 and 12). Each kind's `data_json` is the common payload plus its own fields.
 */
import { z } from 'zod';
import { EpochSeconds, Fingerprint, Pagination, TimeSeconds } from './common.js';
import { SbomIndex } from './exposure.js';
import {
  Annotations,
  AttestationName,
  ExternalUrls,
  GitCommit,
  GitCommitRecord,
  MAX_COMMITS,
  MAX_LIST_ITEMS,
  RepoInfoInput,
  RepoInfoRecord,
  UserData,
} from './evidence-common.js';

/** The fields every attestation input carries (CommonAttestationPayload). */
export const CommonAttestationFields = {
  attestation_name: AttestationName,
  artifact_fingerprint: Fingerprint.nullable().optional(),
  target_artifacts: z.array(AttestationName).max(20).nullable().optional(),
  git_commit_info: GitCommit.nullable().optional(),
  repo_info: RepoInfoInput.nullable().optional(),
  origin_url: z.string().max(2048).nullable().optional(),
  description: z.string().max(4096).nullable().optional(),
  external_urls: ExternalUrls.nullable().optional(),
  annotations: Annotations.nullable().optional(),
  user_data: UserData.nullable().optional(),
};

const count = z.number().int().min(0);

/** One `<testsuite>` of a JUnit report. */
export const JUnitResult = z.strictObject({
  name: z.string().max(2048),
  failures: count,
  errors: count,
  skipped: count,
  total: count,
  duration: z.number().min(0),
  timestamp: TimeSeconds.nullable().optional(),
});

const Issue = z.strictObject({
  id: z.string().max(1024),
  message: z.string().max(65_536),
  locations: z
    .array(z.strictObject({ uri: z.string().max(4096), lines: z.string().max(64).nullable().optional() }))
    .max(1000)
    .optional(),
  priority_score: z.number().nullable().optional(),
});
const issues = z.array(Issue).max(20_000).nullable().optional();

/** A vulnerability scan summary (SARIF runs). */
export const ScanResults = z.strictObject({
  schema_version: z.number().int().optional().default(1),
  tool: z.strictObject({ name: z.string().max(255), version: z.string().max(255).nullable().optional() }),
  results: z
    .array(
      z.strictObject({
        high_count: count,
        medium_count: count,
        low_count: count,
        high: issues,
        medium: issues,
        low: issues,
      }),
    )
    .max(MAX_LIST_ITEMS),
});

/** One ticket of a ticket-tracker attestation. */
export const TicketItem = z.strictObject({
  issue_id: z.string().max(255),
  issue_url: z.string().max(2048).nullable().optional(),
  issue_exists: z.boolean(),
  issue_fields: z.record(z.string(), z.unknown()).nullable().optional(),
});

const PullRequestApprover = z.union([
  z.string().max(255),
  z.strictObject({
    username: z.string().max(255),
    state: z.string().max(64).nullable().optional(),
    timestamp: TimeSeconds.nullable().optional(),
  }),
]);
/** A pull request found for the commit. */
export const PullRequest = z.strictObject({
  url: z.string().max(2048),
  state: z.string().max(64),
  merge_commit: z.string().max(64).nullable().optional(),
  approvers: z.array(PullRequestApprover).max(500).nullable().optional(),
  author: z.string().max(255).nullable().optional(),
  created_at: TimeSeconds.nullable().optional(),
  merged_at: TimeSeconds.nullable().optional(),
  title: z.string().max(4096).nullable().optional(),
  head_ref: z.string().max(1024).nullable().optional(),
  base_ref: z.string().max(1024).nullable().optional(),
  commits: z.array(GitCommit).max(MAX_COMMITS).nullable().optional(),
});

/** Code-quality analysis results (camelCase, as the webhook payload names them). */
export const QualityResults = z.looseObject({
  analysedAt: z.string().max(64),
  revision: z.string().max(64),
  project: z.looseObject({
    key: z.string().max(1024),
    url: z.string().max(2048),
    name: z.string().optional(),
  }),
  serverUrl: z.string().max(2048).optional(),
  taskId: z.string().max(255).optional(),
  status: z.string().max(64).optional(),
  qualityGate: z
    .looseObject({
      status: z.string().max(64),
      conditions: z
        .array(
          z.looseObject({
            metric: z.string(),
            errorThreshold: z.string().optional(),
            operator: z.string(),
            status: z.string(),
            value: z.string().optional(),
          }),
        )
        .max(1000),
      name: z.string().optional(),
    })
    .nullable()
    .optional(),
});

/** The system attestation types (`POST .../system` with `type_name`). */
export const SYSTEM_TYPES = ['decision', 'sbom'] as const;

/** RFC 3339 date-times as an SBOM writes them. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The summary `kosli attest sbom` sends of the SBOM it attaches (reference/peers-2026-11b.md 1.3):
 * the format, the SHA-256 of the file's bytes, and what the document says of itself.
 */
export const SbomSummary = z
  .strictObject({
    format: z
      .string()
      .max(64)
      .regex(/^(cyclonedx-1\.(\d+|x)|spdx-2\.[123])$/, 'must be cyclonedx-1.<minor> or spdx-2.1, 2.2 or 2.3'),
    original_fingerprint: Fingerprint,
    document: z.strictObject({
      created_at: z.string().max(64).regex(RFC3339, 'must be an RFC 3339 date-time').nullable(),
      tools: z.array(z.string().max(1024)).max(100).nullable(),
      subject: z
        .strictObject({
          name: z.string().max(2048),
          version: z.string().max(1024).nullable(),
          purl: z.string().max(4096).nullable(),
          sha256: Fingerprint.nullable(),
        })
        .nullable(),
      package_count: z.number().int().min(0),
    }),
  })
  .meta({ id: 'SbomSummary' });
export type SbomSummary = z.infer<typeof SbomSummary>;

/** `data_json` of each attestation kind, by the path segment. */
export const ATTESTATION_INPUTS = {
  generic: z
    .strictObject({ ...CommonAttestationFields, is_compliant: z.boolean() })
    .meta({ id: 'GenericAttestationInput' }),
  junit: z
    .strictObject({ ...CommonAttestationFields, junit_results: z.array(JUnitResult).max(MAX_LIST_ITEMS) })
    .meta({ id: 'JUnitAttestationInput' }),
  snyk: z
    .strictObject({ ...CommonAttestationFields, snyk_results: ScanResults })
    .meta({ id: 'ScanAttestationInput' }),
  jira: z
    .strictObject({ ...CommonAttestationFields, jira_results: z.array(TicketItem).max(MAX_LIST_ITEMS) })
    .meta({ id: 'TicketAttestationInput' }),
  pull_request: z
    .strictObject({
      ...CommonAttestationFields,
      git_provider: z.enum(['github', 'gitlab', 'bitbucket', 'azure']),
      pull_requests: z.array(PullRequest).max(MAX_LIST_ITEMS),
    })
    .meta({ id: 'PullRequestAttestationInput' }),
  sonar: z
    .strictObject({ ...CommonAttestationFields, sonar_results: QualityResults })
    .meta({ id: 'QualityAttestationInput' }),
  custom: z
    .strictObject({
      ...CommonAttestationFields,
      type_name: z.string().min(1).max(255),
      attestation_data: z.unknown().refine((v) => v !== undefined, 'Field required'),
    })
    .meta({ id: 'CustomAttestationInput' }),
  system: z
    .discriminatedUnion(
      'type_name',
      [
        z.strictObject({
          ...CommonAttestationFields,
          type_name: z.literal('decision'),
          control: z.string().min(1).max(256),
          attestation_data: z.strictObject({ is_compliant: z.boolean() }),
        }),
        z.strictObject({
          ...CommonAttestationFields,
          type_name: z.literal('sbom'),
          attestation_data: SbomSummary,
        }),
      ],
      {
        error: (issue) =>
          issue.code === 'invalid_union'
            ? `System attestation type '${String((issue.input as { type_name?: unknown } | undefined)?.type_name)}' does not exist; use one of ${SYSTEM_TYPES.join(', ')}`
            : undefined,
      },
    )
    .meta({ id: 'SystemAttestationInput' }),
} as const;
export type AttestationKind = keyof typeof ATTESTATION_INPUTS;
export const ATTESTATION_KINDS = Object.keys(ATTESTATION_INPUTS) as AttestationKind[];

/** The built-in types an override may name, besides `custom:<name>` and `system:<name>`. */
export const OVERRIDABLE_TYPES = ['generic', 'junit', 'snyk', 'pull_request', 'jira', 'sonar'] as const;

/** Body of `POST /attestations/{org}/{flow}/trail/{trail}/override` (spec endpoint 2). */
export const OverrideInput = z
  .strictObject({
    ...CommonAttestationFields,
    reason: z.string().min(1).max(4096),
    new_compliance_status: z.boolean(),
    original_attestation_type: z
      .string()
      .max(255)
      .regex(
        /^(generic|junit|snyk|pull_request|jira|sonar|decision|custom:.+|system:.+)$/,
        'must be one of generic, junit, snyk, pull_request, jira, sonar, custom:<name>, system:<name>',
      ),
  })
  .meta({ id: 'OverrideInput' });
export type OverrideInput = z.infer<typeof OverrideInput>;

/** The multipart parts of an attestation, for the OpenAPI document. */
export const AttestationForm = z
  .object({
    data_json: z.string().meta({ description: 'JSON: the attestation input of this kind' }),
    attachment_file: z.string().optional().meta({ description: 'An evidence file (file part)' }),
  })
  .meta({ id: 'AttestationForm' });

/** An evidence file attached to an attestation. */
export const EvidenceFile = z
  .object({
    filename: z.string(),
    sha256: z.string(),
    size: z.number(),
    content_type: z.string(),
    download_url: z.string(),
  })
  .meta({ id: 'EvidenceFile' });

/** The result of evaluating a custom attestation against its type version. */
export const CustomEvaluation = z
  .object({
    type_version: z.number(),
    schema_errors: z.array(z.string()),
    rule_results: z.array(z.object({ rule: z.string(), result: z.unknown(), error: z.string().nullable() })),
    summary: z.array(z.object({ name: z.string(), value: z.unknown(), error: z.string().nullable() })),
  })
  .meta({ id: 'CustomEvaluation' });

/** The verification of an attestation's signed evidence (a Sigstore bundle or DSSE envelope as its file). */
export const AttestationSignature = z
  .object({
    verified: z.boolean(),
    kind: z.enum(['sigstore-bundle', 'dsse']),
    /** A certificate's subject alternative name (workflow URI, e-mail), or a keyed signature's key id. */
    identity: z.string().nullable(),
    /** The OIDC issuer the certificate records; null for keyed signatures. */
    issuer: z.string().nullable(),
    /** Why it did not verify; null when it did. */
    reason: z.string().nullable(),
  })
  .meta({ id: 'AttestationSignature' });

/** An attestation as every read returns it (a superset of the list item of endpoint 12). */
export const Attestation = z
  .object({
    attestation_id: z.string(),
    /** Index of the record's latest entry in the organization's transparency log; null until sequenced. */
    log_index: z.number().int().nullable().optional(),
    attestation_name: z.string(),
    attestation_type: z.string(),
    is_compliant: z.boolean(),
    flow_name: z.string(),
    trail_name: z.string(),
    artifact_fingerprint: z.string().nullable(),
    target_artifacts: z.array(z.string()).nullable(),
    created_at: EpochSeconds,
    reported_by: z.string(),
    description: z.string(),
    origin_url: z.string(),
    html_url: z.string(),
    has_audit_package: z.boolean(),
    schema_version: z.number().int(),
    user_data: z.unknown(),
    git_commit_info: GitCommitRecord.nullable(),
    repo_info: RepoInfoRecord.nullable(),
    external_urls: z.record(z.string(), z.unknown()).nullable(),
    annotations: z.record(z.string(), z.string()).nullable(),
    evidence_file: EvidenceFile.nullable(),
    /** The kind-specific payload: junit_results, pull_requests, attestation_data, ... */
    junit_results: z.unknown().optional(),
    snyk_results: z.unknown().optional(),
    jira_results: z.unknown().optional(),
    pull_requests: z.unknown().optional(),
    git_provider: z.string().optional(),
    sonar_results: z.unknown().optional(),
    type_name: z.string().optional(),
    attestation_data: z.unknown().optional(),
    control: z.string().optional(),
    control_version: z.number().nullable().optional(),
    reason: z.string().optional(),
    new_compliance_status: z.boolean().optional(),
    original_attestation_type: z.string().optional(),
    evaluation: CustomEvaluation.nullable().optional(),
    /** Whether SBOM evidence (CycloneDX, SPDX) was indexed for exposure queries, and why not. */
    sbom_index: SbomIndex.optional(),
    /** Present when the evidence file is signed evidence: whether it verified, by whom, and why not. */
    signature: AttestationSignature.optional(),
  })
  .meta({ id: 'Attestation' });
export type Attestation = z.infer<typeof Attestation>;

/** Endpoint 12: a page of a flow's attestations in a time span. */
export const AttestationPage = z
  .object({
    data: z.array(Attestation),
    _links: z.record(z.string(), z.unknown()),
    pagination: Pagination,
  })
  .meta({ id: 'AttestationPage' });

/** `GET /attestations/{org}`: a cursor page. */
export const AttestationCursorPage = z
  .object({
    data: z.array(Attestation),
    _links: z.record(z.string(), z.unknown()),
    total_count: z.number().int().optional().meta({
      description: 'With `trail` (and no `name_regex`): how many attestations match in all, over every page',
    }),
  })
  .meta({ id: 'AttestationCursorPage' });
