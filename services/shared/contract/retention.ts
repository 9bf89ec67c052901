/**
 * Retention classes, legal holds and disposition records (README "Retention", "Legal holds"):
 * how long an organization keeps each kind of record, by default and per flow or environment;
 * holds that keep what they cover whatever the classes say; and what the retention job removed.
 */
import { z } from 'zod';
import {
  CappedCount,
  EpochSeconds,
  ResourceName,
  TIME_RANGE_MESSAGE,
  TimeSeconds,
  inTimeRange,
} from './common.js';

/** The kinds of record a retention class sets a period for. */
export const RETENTION_PERIODS = [
  'trails_days',
  'evidence_files_days',
  'snapshots_days',
  'audit_log_days',
] as const;
export type RetentionPeriodName = (typeof RETENTION_PERIODS)[number];

/** Flows or environments one retention document names at most. */
export const MAX_RETENTION_OVERRIDES = 1000;
/** Legal holds an organization holds at most. */
export const MAX_LEGAL_HOLDS = 100;
/** Flows or environments one hold names at most. */
export const MAX_HOLD_NAMES = 1000;
/** The last page of disposition records the list answers. */
export const MAX_DISPOSITION_PAGE = 1000;
/** Longest period a class may set: a hundred years. */
export const MAX_RETENTION_DAYS = 36_500;

const Days = z
  .number()
  .int('must be a whole number of days')
  .min(1, 'must be at least 1 day')
  .max(MAX_RETENTION_DAYS, `must be at most ${MAX_RETENTION_DAYS} days`);

/** Days each kind of record is kept; a kind left out is kept forever (or as the default says). */
export const RetentionPeriods = z
  .strictObject({
    trails_days: Days.optional(),
    evidence_files_days: Days.optional(),
    snapshots_days: Days.optional(),
    audit_log_days: Days.optional(),
  })
  .meta({ id: 'RetentionPeriods' });

const Overrides = (what: string) =>
  z.record(ResourceName, RetentionPeriods).refine((r) => Object.keys(r).length <= MAX_RETENTION_OVERRIDES, {
    message: `names at most ${MAX_RETENTION_OVERRIDES} ${what}`,
  });

/** `PUT /retention/{org}`: the organization's classes, replacing what was set. */
export const RetentionPut = z
  .strictObject({
    default: RetentionPeriods.default({}),
    flows: Overrides('flows').default({}),
    environments: Overrides('environments').default({}),
  })
  .meta({ id: 'RetentionPut' });

/** The organization's classes as stored, with the server's minimum and the names no flow or environment has. */
export const RetentionSettings = z
  .object({
    default: RetentionPeriods,
    flows: z.record(z.string(), RetentionPeriods),
    environments: z.record(z.string(), RetentionPeriods),
    operator_minimum: z.object({
      trails_days: z.number(),
      evidence_files_days: z.number(),
      snapshots_days: z.number(),
      audit_log_days: z.number(),
    }),
    unknown_flows: z.array(z.string()),
    unknown_environments: z.array(z.string()),
    updated_at: EpochSeconds.nullable(),
    updated_by: z.string().nullable(),
  })
  .meta({ id: 'RetentionSettings' });

/** A time as seconds since the epoch or an ISO 8601 date-time. */
const HoldTime = z
  .union([
    TimeSeconds.transform((s) => new Date(s * 1000)),
    z.iso.datetime({ offset: true }).transform((s) => new Date(s)),
  ])
  .refine(inTimeRange, TIME_RANGE_MESSAGE);

/** `POST /legal-holds/{org}`. */
export const LegalHoldPost = z
  .strictObject({
    name: ResourceName,
    reason: z.string().trim().min(1, 'must say why').max(2000),
    scope: z
      .strictObject({
        flows: z.array(ResourceName).max(MAX_HOLD_NAMES).default([]),
        environments: z.array(ResourceName).max(MAX_HOLD_NAMES).default([]),
        from: HoldTime.optional(),
        to: HoldTime.optional(),
      })
      .refine((s) => !s.from || !s.to || s.from <= s.to, {
        message: 'from must not be after to',
        path: ['to'],
      })
      .default({ flows: [], environments: [] }),
  })
  .meta({ id: 'LegalHoldPost' });

/** A legal hold and what it covers. */
export const LegalHold = z
  .object({
    name: z.string(),
    reason: z.string(),
    scope: z.object({
      flows: z.array(z.string()),
      environments: z.array(z.string()),
      from: EpochSeconds.nullable(),
      to: EpochSeconds.nullable(),
    }),
    covers: z.string().meta({ description: 'What the hold keeps, in words' }),
    created_by: z.string(),
    created_at: EpochSeconds,
  })
  .meta({ id: 'LegalHold' });

export const LegalHoldList = z.array(LegalHold);

/** One removal by the retention job. */
export const Disposition = z
  .object({
    id: z.string(),
    kind: z.enum(['trails', 'evidence_files', 'snapshots', 'audit_log']),
    count: z.number(),
    items: z.array(z.unknown()),
    digests: z.array(z.string()),
    rule: z.object({
      period: z.enum(RETENTION_PERIODS),
      days: z.number(),
      scope: z.enum(['default', 'flow', 'environment']),
      name: z.string().nullable(),
    }),
    as_of: EpochSeconds,
    removed_at: EpochSeconds,
    run_by: z.string(),
  })
  .meta({ id: 'Disposition' });

export const DispositionList = z.object({
  dispositions: z.array(Disposition),
  next: z.string().nullable().meta({ description: 'The next page, or null on the last' }),
  ...CappedCount,
});
