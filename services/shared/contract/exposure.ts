/**
 * Exposure: which artifacts contained a component (by package URL), or have a fingerprint or
 * commit, and where and when they ran, with the environment's compliance over each interval.
 * Also the SBOM indexing outcome an attestation carries.
 */
import { z } from 'zod';
import {
  CommitSha,
  EpochSeconds,
  Fingerprint,
  inTimeRange,
  Pagination,
  QueryInt,
  TIME_RANGE_MESSAGE,
} from './common.js';

/** One SBOM document found in an attestation's evidence, and what indexing it gave. */
export const SbomDocument = z
  .object({
    /** Where it was found: `attestation_data`, the attached file, or a member of the attached archive. */
    source: z.string(),
    format: z.enum(['CycloneDX', 'SPDX']).nullable(),
    spec_version: z.string().nullable(),
    /** Distinct package URLs indexed. */
    components: z.number().int(),
    /** Package URLs that did not parse, left out. */
    skipped: z.number().int(),
    /** Why the document was not indexed; null when it was. */
    reason: z.string().nullable(),
  })
  .meta({ id: 'SbomDocument' });

/** Whether an attestation's SBOM evidence was indexed for exposure queries, and why not. */
export const SbomIndex = z
  .object({
    indexed: z.boolean(),
    /** Distinct components indexed, over all documents. */
    components: z.number().int(),
    /**
     * Components found but left out by the attestation's bounds (components per attestation,
     * versions of one package); those past the components bound are counted, not parsed.
     * Absent on attestations indexed before the bounds were counted.
     */
    skipped: z.number().int().optional(),
    /** Why nothing was indexed, or why components were left out; null when neither. */
    reason: z.string().nullable(),
    documents: z.array(SbomDocument),
  })
  .meta({ id: 'SbomIndex' });
export type SbomIndex = z.infer<typeof SbomIndex>;

/**
 * A time in a query: seconds since the epoch, or an ISO 8601 date-time with an offset, from
 * year 1 to 9999, refused before any query runs.
 */
export const QueryTime = z
  .union([
    z
      .string()
      .regex(/^\d+(\.\d+)?$/, 'seconds since the epoch')
      .transform((s) => new Date(Number(s) * 1000)),
    z.iso.datetime({ offset: true }).transform((s) => new Date(s)),
  ])
  .refine(inTimeRange, TIME_RANGE_MESSAGE)
  .meta({ description: 'Seconds since the epoch, or an ISO 8601 date-time' });

/** `GET /exposure/{org}`: exactly one of purl, fingerprint or commit; from/to clip the intervals. */
export const ExposureQuery = z.strictObject({
  purl: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .meta({ description: 'A package URL; without a version it matches every version' }),
  fingerprint: Fingerprint.optional(),
  commit: CommitSha.optional(),
  from: QueryTime.optional(),
  to: QueryTime.optional(),
  limit: QueryInt(1, 1000).optional().meta({
    description: 'Artifacts at most (fingerprint, commit); for a purl, `per_page` when that is absent',
  }),
  page: QueryInt(1, 1_000_000)
    .optional()
    .default(1)
    .meta({ description: 'For a purl: the page of matching (artifact, component) rows, from 1' }),
  per_page: QueryInt(1, 1000)
    .optional()
    .meta({ description: 'For a purl: matching (artifact, component) rows a page, 100 by default' }),
});

/** A stretch of time an artifact ran in one environment with the environment's compliance unchanged. */
export const ExposureInterval = z
  .object({
    from: EpochSeconds,
    /** Null while it still runs (and no `to` clips it). */
    to: EpochSeconds.nullable(),
    from_snapshot: z.number().int(),
    to_snapshot: z.number().int().nullable(),
    /** The environment's compliance over the interval; null when it has no policies. */
    compliant: z.boolean().nullable(),
  })
  .meta({ id: 'ExposureInterval' });

/** A matching component of an artifact's SBOM. */
export const ExposureComponent = z
  .object({
    purl: z.string(),
    type: z.string(),
    namespace: z.string().nullable(),
    name: z.string(),
    version: z.string().nullable(),
    attestation_id: z.string(),
    attestation_name: z.string(),
  })
  .meta({ id: 'ExposureComponent' });

/** An artifact of the answer, with where and when it ran. */
export const ExposureArtifact = z
  .object({
    fingerprint: z.string(),
    name: z.string(),
    flow: z.string(),
    trail: z.string(),
    commit: z.string().nullable(),
    /** Its matching components on this page. */
    components: z.array(ExposureComponent),
    /** All its matching components, on every page. */
    components_total: z.number().int(),
    /** It has matching components that are not on this page. */
    components_truncated: z.boolean(),
    environments: z.array(z.object({ environment_name: z.string(), intervals: z.array(ExposureInterval) })),
  })
  .meta({ id: 'ExposureArtifact' });

/** The exposure answer: the matching artifacts, newest first. */
export const ExposureResult = z
  .object({
    query: z.object({
      purl: z.string().nullable(),
      fingerprint: z.string().nullable(),
      commit: z.string().nullable(),
      from: EpochSeconds.nullable(),
      to: EpochSeconds.nullable(),
    }),
    artifacts: z.array(ExposureArtifact),
    /** More matched than this answer shows: later pages (purl), or more artifacts than `limit`. */
    truncated: z.boolean(),
    /** For a purl: the pages of matching (artifact, component) rows; null otherwise. */
    pagination: Pagination.nullable(),
  })
  .meta({ id: 'ExposureResult' });
export type ExposureResult = z.infer<typeof ExposureResult>;
