/** Artifacts (spec endpoint 1 and the artifact record; reference/cli-requests.md 3.3). */
import { z } from 'zod';
import { CommitSha, Fingerprint, Pagination } from './common.js';
import {
  Annotations,
  ExternalUrls,
  GitCommit,
  GitCommitRecord,
  MAX_COMMITS,
  RepoInfoInput,
  RepoInfoRecord,
  TemplateReferenceName,
  TrailName,
  UserData,
} from './evidence-common.js';

/** Body of `POST /artifacts/{org}/{flow}` (attest artifact; the deprecated report artifact). */
export const CreateArtifact = z
  .strictObject({
    fingerprint: Fingerprint,
    filename: z.string().min(1).max(1024),
    build_url: z.string().max(2048),
    commit_url: z.string().max(2048),
    trail_name: TrailName.nullable().optional(),
    template_reference_name: TemplateReferenceName.nullable().optional(),
    description: z.string().max(4096).nullable().optional(),
    git_commit: CommitSha.nullable().optional(),
    git_commit_info: GitCommit.nullable().optional(),
    repo_info: RepoInfoInput.nullable().optional(),
    commits_list: z.array(GitCommit).max(MAX_COMMITS).nullable().optional(),
    repo_url: z.string().max(2048).nullable().optional(),
    is_compliant: z.boolean().nullable().optional(),
    template: z
      .union([z.string().max(1024), z.array(z.string().max(255)).max(100)])
      .nullable()
      .optional(),
    external_urls: ExternalUrls.nullable().optional(),
    annotations: Annotations.nullable().optional(),
    user_data: UserData.nullable().optional(),
  })
  .meta({ id: 'CreateArtifact' });
export type CreateArtifact = z.infer<typeof CreateArtifact>;

/** An attestation of the artifact as its `evidence` map shows it (spec: artifact evidence record). */
export const ArtifactEvidence = z
  .object({
    evidence_type: z.string(),
    is_compliant: z.boolean(),
    created_at: z.string(),
    has_audit_package: z.boolean(),
    build_url: z.string().nullable(),
    evidence_archive_fingerprint: z.string().nullable(),
    description: z.string().nullable(),
    evidence_url: z.string().nullable(),
    evidence_fingerprint: z.string().nullable(),
    commit_sha: z.string().nullable(),
    git_provider: z.string().nullable(),
    user_data: z.unknown(),
    snyk_results: z.unknown(),
    junit_results: z.unknown(),
    jira_results: z.unknown(),
    pull_requests: z.array(z.unknown()).nullable(),
    attestation_id: z.string(),
  })
  .meta({ id: 'ArtifactEvidence' });

/** Where a fingerprint runs or ran: environment and snapshot. */
export const RuntimePlace = z
  .object({ environment_name: z.string(), snapshot_index: z.number() })
  .meta({ id: 'RuntimePlace' });
/** One line of an artifact's history. */
export const HistoryEntry = z
  .object({ event: z.string(), timestamp: z.number() })
  .meta({ id: 'HistoryEntry' });

/**
 * An artifact's history as an answer carries it: its first event (its report to the trail) and
 * its 100 most recent, oldest first; all of them when there are no more than 101.
 */
export const ArtifactHistory = z.array(HistoryEntry);
/** The events of an artifact's history in all, shown or not. */
export const ArtifactHistoryTotal = z.number().int();

/** `GET /artifacts/{org}/{flow}/fingerprint/{fp}/history`: a page of the whole history, oldest first. */
export const ArtifactHistoryPage = z
  .object({ data: z.array(HistoryEntry), pagination: Pagination })
  .meta({ id: 'ArtifactHistoryPage' });

/**
 * The artifact record (spec: Artifact record). `created_at` and `last_modified_at` are strings as
 * the spec types them, holding epoch seconds, which is what the CLI parses.
 */
export const ArtifactRecord = z
  .object({
    id: z.string(),
    /** Index of the record's latest entry in the organization's transparency log; null until sequenced. */
    log_index: z.number().int().nullable().optional(),
    trail_name: z.string().nullable(),
    template_reference_name: z.string().nullable(),
    fingerprint: z.string(),
    filename: z.string(),
    git_commit: z.string().nullable(),
    git_commit_info: GitCommitRecord.nullable(),
    repo_info: RepoInfoRecord.nullable(),
    commit_url: z.string().nullable(),
    build_url: z.string().nullable(),
    repo_url: z.string().nullable(),
    html_url: z.string(),
    api_url: z.string(),
    created_at: z.string(),
    last_modified_at: z.string(),
    user_data: z.unknown(),
    external_urls: z.record(z.string(), z.unknown()).nullable(),
    annotations: z.record(z.string(), z.string()).nullable(),
    state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'INCOMPLETE']),
    evidence: z.record(z.string(), ArtifactEvidence),
    template: z.array(z.string()).nullable(),
    flow_name: z.string(),
    state_info: z.string().nullable(),
    running: z.array(RuntimePlace),
    exited: z.array(RuntimePlace),
    history: ArtifactHistory,
    history_total: ArtifactHistoryTotal,
    commit_lead_times: z.record(z.string(), z.unknown()),
    build_lead_times: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ArtifactRecord' });
export type ArtifactRecord = z.infer<typeof ArtifactRecord>;

/** `GET /artifacts/{org}/{flow}/{fp}/latest_commit`. */
export const LatestCommit = z.object({ latest_commit: z.string().nullable() }).meta({ id: 'LatestCommit' });

/** `POST /artifacts/{org}/{flow}` answer. */
export const MessageOk = z.object({ message: z.string() }).meta({ id: 'MessageOk' });
