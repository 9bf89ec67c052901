/**
 * Building blocks of the evidence wire shapes (flows, trails, artifacts, attestations):
 * commit and repo records, external URLs, annotations, user data, and the name patterns of
 * reference/openapi-catalog.md.
 */
import { z } from 'zod';
import { CommitSha, Fingerprint, TimeSeconds } from './common.js';

/** Trail names (spec: artifact record `trail_name`). */
export const TRAIL_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.~-]*$/;
/** Template reference names of artifacts. */
export const TEMPLATE_REFERENCE_PATTERN = /^[a-zA-Z0-9_-]+$/;
/** Attestation names (and target artifact names) in attestation inputs. */
export const ATTESTATION_NAME_PATTERN = /^[a-zA-Z0-9_,-]+$/;
/** Custom attestation type names. */
export const TYPE_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_~-]*$/;
/** Tag keys. */
export const TAG_KEY_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._~-]*$/;

/** The most entries any list in an evidence body may carry (suites, issues, pull requests...). */
export const MAX_LIST_ITEMS = 2_000;
/** The most commits a `commits_list` or a pull request may carry. */
export const MAX_COMMITS = 5_000;

const pattern = (re: RegExp) => z.string().max(255).regex(re, `must match pattern '${re.source}'`);

/** A trail name. */
export const TrailName = pattern(TRAIL_NAME_PATTERN);
/** An artifact's name in the template. */
export const TemplateReferenceName = pattern(TEMPLATE_REFERENCE_PATTERN);
/** An attestation name. */
export const AttestationName = pattern(ATTESTATION_NAME_PATTERN);
/** A custom attestation type name. */
export const TypeName = pattern(TYPE_NAME_PATTERN);

const text = (max = 4096) => z.string().max(max);
const url = text(2048);

/** A git commit as the CLI sends it (BasicCommitInfo, plus `parents` in commits lists). */
export const GitCommit = z
  .strictObject({
    sha1: z.string().min(1).max(64),
    message: text(65_536).nullable().optional(),
    author: text(1024).nullable().optional(),
    author_username: text(1024).nullable().optional(),
    branch: text(1024).nullable().optional(),
    timestamp: TimeSeconds.nullable().optional(),
    url: url.nullable().optional(),
    parents: z.array(z.string().max(64)).max(100).nullable().optional(),
    verified: z.boolean().nullable().optional(),
    signature_state: text(256).nullable().optional(),
  })
  .meta({ id: 'GitCommit' });
export type GitCommit = z.infer<typeof GitCommit>;

/** Repository hosts and CI providers a repo may name. */
export const REPO_PROVIDERS = [
  'github',
  'gitlab',
  'bitbucket',
  'bitbucket_cloud',
  'bitbucket_dc',
  'azure-devops',
  'azure_devops_services',
  'azure_devops_server',
  'circleci',
  'git',
  'subversion',
] as const;

/** `repo_info` on trails, artifacts and attestations; repos are created from it. */
export const RepoInfoInput = z
  .strictObject({
    name: z.string().min(1).max(512),
    url: url,
    id: text(256).nullable().optional(),
    description: text().nullable().optional(),
    provider: z.enum(REPO_PROVIDERS).nullable().optional(),
    namespace_path: z.array(text(256)).max(50).nullable().optional(),
    additional_info: z.record(z.string(), z.unknown()).nullable().optional(),
    vcs_instance: text(512).nullable().optional(),
  })
  .meta({ id: 'RepoInfoInput' });
export type RepoInfoInput = z.infer<typeof RepoInfoInput>;

/** `external_urls`: label -> {href, fingerprint?}; labels contain no `.` or `=`. */
export const ExternalUrls = z
  .record(
    z.string().regex(/^[^=.]+$/, "labels may not contain '.' or '='"),
    z.strictObject({ href: url, fingerprint: Fingerprint.nullable().optional() }),
  )
  .refine((r) => Object.keys(r).length <= 100, 'at most 100 external URLs')
  .meta({ id: 'ExternalUrls' });

/** Free-form string annotations. */
export const Annotations = z
  .record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'keys must match ^[A-Za-z0-9_-]+$'), z.string().max(4096))
  .refine((r) => Object.keys(r).length <= 100, 'at most 100 annotations')
  .meta({ id: 'Annotations' });

/** Any JSON object or array the client attaches. */
export const UserData = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);

/** Tags: key -> value. */
export const Tags = z.record(z.string(), z.string()).meta({ id: 'Tags' });

/** `PATCH /tags/{org}/{type}/{id}` body. */
export const TagPatch = z
  .strictObject({
    set_tags: z
      .record(
        z.string().max(255).regex(TAG_KEY_PATTERN, `keys must match '${TAG_KEY_PATTERN.source}'`),
        text(1024),
      )
      .refine((r) => Object.keys(r).length <= 100, 'at most 100 tags')
      .nullable()
      .optional(),
    remove_tags: z.array(z.string().max(255)).max(100).nullable().optional(),
  })
  .meta({ id: 'TagPatch' });

/** The git commit record as responses carry it. */
export const GitCommitRecord = z
  .object({
    sha1: z.string(),
    message: z.string().nullable().optional(),
    author: z.string().nullable().optional(),
    author_username: z.string().nullable().optional(),
    branch: z.string().nullable().optional(),
    timestamp: z.number().nullable().optional(),
    url: z.string().nullable().optional(),
    parents: z.array(z.string()).nullable().optional(),
    verified: z.boolean().nullable().optional(),
    signature_state: z.string().nullable().optional(),
  })
  .meta({ id: 'GitCommitRecord' });

/** The repo info record as responses carry it. */
export const RepoInfoRecord = z
  .object({
    name: z.string(),
    url: z.string(),
    id: z.string().nullable().optional(),
    description: z.string().nullable().optional(),
    provider: z.string().nullable().optional(),
    vcs_instance: z.string().nullable().optional(),
    namespace_path: z.array(z.string()).nullable().optional(),
    additional_info: z.record(z.string(), z.unknown()).nullable().optional(),
    short_name: z.string().nullable().optional(),
  })
  .meta({ id: 'RepoInfoRecord' });

export { CommitSha };
