/**
 * Wire building blocks shared by every resource: name patterns, timestamps, the error body.
 * Patterns are the ones of the v2 interface (spec/api-v2.md, reference/openapi-catalog.md).
 */
import { z } from 'zod';

/** Flow, trail and environment names: start with a letter or digit, then letters, digits, `.`, `_`, `~`, `-`. */
export const NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._~-]*$/;
/** Organization names as they appear in the `{org}` path segment. */
export const ORG_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
/** A full artifact fingerprint: 64 lowercase hex characters (sha256). */
export const FINGERPRINT_PATTERN = /^[a-f0-9]{64}$/;
/** A fingerprint in a path: a prefix of 5 to 64 lowercase hex characters. */
export const FINGERPRINT_PREFIX_PATTERN = /^[a-f0-9]{5,64}$/;
/** A full git commit sha1. */
export const COMMIT_SHA_PATTERN = /^[a-f0-9]{40}$/;
/** Server-issued ids: 32 characters in 8-4-4-4-8 lowercase hex groups. */
export const ID_PATTERN = /^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{8}$/;

/** A resource name following {@link NAME_PATTERN}. */
export const ResourceName = z
  .string()
  .max(255)
  .regex(NAME_PATTERN, `must match pattern '${NAME_PATTERN.source}'`);
/** The `{org}` path segment. */
export const OrgName = z
  .string()
  .max(128)
  .regex(ORG_NAME_PATTERN, `must match pattern '${ORG_NAME_PATTERN.source}'`);
/** A 64-hex fingerprint. */
export const Fingerprint = z.string().regex(FINGERPRINT_PATTERN, 'must be 64 lowercase hex characters');
/** A 40-hex commit sha. */
export const CommitSha = z.string().regex(COMMIT_SHA_PATTERN, 'must be 40 lowercase hex characters');
/** Seconds since the epoch; fractional allowed. */
export const EpochSeconds = z.number();

/** The earliest time a request may carry: 0001-01-01T00:00:00Z, in seconds since the epoch. */
export const MIN_TIME_SECONDS = -62_135_596_800;
/** The latest time a request may carry: 9999-12-31T23:59:59Z, in seconds since the epoch. */
export const MAX_TIME_SECONDS = 253_402_300_799;
/** Why a time was refused. */
export const TIME_RANGE_MESSAGE = 'must be a time from 0001-01-01 to 9999-12-31';

/**
 * Whether a date lies in the range requests may carry: every such time is a valid Date, an ISO
 * 8601 date-time with a four-digit year and a PostgreSQL timestamp.
 */
export function inTimeRange(date: Date): boolean {
  const ms = date.getTime();
  return ms >= MIN_TIME_SECONDS * 1000 && ms <= MAX_TIME_SECONDS * 1000;
}

/** A time a request carries as seconds since the epoch (fractional allowed), within the range. */
export const TimeSeconds = z
  .number()
  .min(MIN_TIME_SECONDS, TIME_RANGE_MESSAGE)
  .max(MAX_TIME_SECONDS, TIME_RANGE_MESSAGE);
/** A time in seconds that cannot precede 1970 (a pod's or a task's creation), within the range. */
export const CreationSeconds = z.number().int().min(0).max(MAX_TIME_SECONDS, TIME_RANGE_MESSAGE);

/** The error body of every failed request (spec: Errors). */
export const ErrorBody = z
  .object({
    message: z.string(),
    errors: z.record(z.string(), z.string()).nullable().optional(),
  })
  .meta({ id: 'ErrorBody', description: 'Every error: a message, and per-field reasons for invalid input.' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Success bodies that the interface declares as a JSON string (e.g. "OK"). */
export const OkString = z.string().meta({ description: 'A JSON string, e.g. "OK".' });

/** Every status an API route may answer with an error body. */
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 429] as const;

/** Error responses for a route schema: the same ErrorBody for every error status. */
export const errorResponses = Object.fromEntries(
  ERROR_STATUSES.map((status) => [status, ErrorBody]),
) as Record<(typeof ERROR_STATUSES)[number], typeof ErrorBody>;

/** Path parameters of routes scoped to an organization. */
export const OrgParams = z.strictObject({ org: OrgName });

/** Page-number pagination as the interface names it. */
export const Pagination = z
  .object({
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
    page_count: z.number().int(),
  })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof Pagination>;

/**
 * Counts of lists that may grow without bound (deployments, the audit log, disposition records)
 * stop here: counting every row of a huge table on each page would cost more than the page.
 */
export const COUNT_CAP = 10_000;

/** How many rows match a list's filters, counted up to COUNT_CAP. */
export const CappedCount = {
  total_count: z
    .number()
    .int()
    .meta({
      description: `How many match the filters over every page, counted up to ${COUNT_CAP}`,
    }),
  total_count_capped: z.boolean().meta({
    description: `True when more than ${COUNT_CAP} match: \`total_count\` is then ${COUNT_CAP}`,
  }),
};

/** The CappedCount fields of a count made up to COUNT_CAP + 1. */
export function cappedCount(counted: number): { total_count: number; total_count_capped: boolean } {
  return { total_count: Math.min(counted, COUNT_CAP), total_count_capped: counted > COUNT_CAP };
}

/** A query-string integer (query values arrive as strings). */
export const QueryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A query-string boolean: accepts true/false (any case) and 1/0. */
export const QueryBool = z
  .enum(['true', 'false', 'True', 'False', 'TRUE', 'FALSE', '1', '0'])
  .transform((v) => v.toLowerCase() === 'true' || v === '1');
