/**
 * Delivery insight: deployments (a new fingerprint starting to run in an environment), the four
 * DORA keys computed from them and from the environments' compliance history, and a repository's
 * delivery. Times are epoch seconds; durations are seconds.
 */
import { z } from 'zod';
import { CappedCount, COUNT_CAP, EpochSeconds, QueryInt } from './common.js';
import { Environment } from './environments.js';
import { QueryTime } from './exposure.js';

const Name = z.string().min(1).max(512);

/** `GET /deployments/{org}`. */
export const DeploymentsQuery = z.strictObject({
  environment: Name.optional().meta({ description: 'Only deployments to this environment' }),
  flow: Name.optional().meta({ description: 'Only deployments of artifacts of this flow' }),
  repo: Name.optional().meta({ description: 'Only deployments of artifacts built from this repository' }),
  from: QueryTime.optional().meta({ description: 'Started at or after (epoch seconds or ISO 8601)' }),
  to: QueryTime.optional().meta({ description: 'Started before (epoch seconds or ISO 8601)' }),
  failed_within: QueryInt(1, 31_536_000).optional().meta({
    description:
      'Only deployments that failed within this many seconds of starting: rolled back, or the environment became non-compliant because of the deployed artifact (what the DORA change failure rate counts)',
  }),
  page: z
    .string()
    .max(200)
    .optional()
    .meta({ description: 'Where the page starts: the value the previous page gave in its `next` link' }),
  per_page: QueryInt(1, 500).optional().default(50),
});

/** A commit a deployment brought. */
export const DeployedCommit = z
  .object({
    sha1: z.string(),
    timestamp: EpochSeconds.nullable(),
    author: z.string().nullable(),
    message: z.string().nullable().meta({ description: 'The first line of the message' }),
  })
  .meta({ id: 'DeployedCommit' });

/** One deployment. */
export const Deployment = z
  .object({
    environment: z.string(),
    snapshot_index: z.number().int(),
    started_at: EpochSeconds,
    artifact: z.object({
      name: z.string(),
      fingerprint: z.string(),
      flow: z.string().nullable(),
      trail: z.string().nullable(),
      git_commit: z.string().nullable(),
      html_url: z.string().nullable(),
    }),
    replaced: z.array(
      z.object({ name: z.string(), fingerprint: z.string(), git_commit: z.string().nullable() }),
    ),
    rollback: z.boolean(),
    commit_lead_time: z.number().nullable(),
    build_lead_time: z.number().nullable(),
    change_lead_time: z.number().nullable(),
    commits: z.array(DeployedCommit),
    compliant: z.boolean().nullable(),
  })
  .meta({ id: 'Deployment' });

/** A page of deployments, newest first. */
export const DeploymentPage = z
  .object({
    deployments: z.array(Deployment),
    next: z.string().nullable(),
    ...CappedCount,
    offset: z
      .number()
      .int()
      .nullable()
      .meta({
        description: `How many deployments come before this page (newer ones), or null when more than ${COUNT_CAP} do`,
      }),
  })
  .meta({ id: 'DeploymentPage' });

export const DORA_BUCKETS = ['day', 'week'] as const;

/** `GET /dora/{org}`. */
export const DoraQuery = z.strictObject({
  environment: Name.optional(),
  repo: Name.optional(),
  from: QueryTime.optional().meta({ description: 'Start of the range; 30 days before `to` by default' }),
  to: QueryTime.optional().meta({ description: 'End of the range (exclusive); now by default' }),
  bucket: z.enum(DORA_BUCKETS).optional().default('week'),
  failure_window: QueryInt(60, 2_592_000).optional().default(86_400).meta({
    description: 'Seconds after a deployment within which a rollback or non-compliance counts as its failure',
  }),
});

const Percentiles = z.object({ p50: z.number().nullable(), p90: z.number().nullable() });

/** The four keys over one stretch of time. */
export const DoraFigures = z
  .object({
    from: EpochSeconds,
    to: EpochSeconds,
    deployment_frequency: z.object({
      deployments: z.number().int(),
      per_day: z.number(),
      deployments_url: z.string(),
    }),
    lead_time_for_changes: Percentiles.extend({ deployments: z.number().int(), deployments_url: z.string() }),
    change_failure_rate: z.object({
      rate: z.number().nullable(),
      failures: z.number().int(),
      deployments: z.number().int(),
      failures_url: z.string(),
    }),
    time_to_restore: Percentiles.extend({
      restores: z.number().int(),
      snapshots_url: z.string().nullable().meta({
        description: 'With an environment: its snapshots, whose compliance the restores are read from',
      }),
    }),
  })
  .meta({ id: 'DoraFigures' });

/** `GET /dora/{org}`: per bucket and for the whole range. */
export const DoraAnswer = z
  .object({
    query: z.object({
      environment: z.string().nullable(),
      repo: z.string().nullable(),
      from: EpochSeconds,
      to: EpochSeconds,
      bucket: z.enum(DORA_BUCKETS),
      failure_window: z.number().int(),
    }),
    total: DoraFigures,
    buckets: z.array(DoraFigures),
  })
  .meta({ id: 'DoraAnswer' });

/** `GET /repos/{org}/{repo}/delivery`. */
export const RepoDeliveryQuery = z.strictObject({
  from: QueryTime.optional().meta({ description: 'Start of the range; 30 days before `to` by default' }),
  to: QueryTime.optional().meta({ description: 'End of the range (exclusive); now by default' }),
  bucket: z.enum(DORA_BUCKETS).optional().default('week'),
});

/** Running artifacts a repository's delivery lists at most, over all its environments. */
export const MAX_RUNNING = 1000;

/** A repository's delivery: what the reference app's Build, Release and Run tabs show. */
export const RepoDelivery = z
  .object({
    repo: z.string(),
    from: EpochSeconds,
    to: EpochSeconds,
    builds: z.array(z.object({ from: EpochSeconds, builds: z.number().int() })),
    environments: z.array(
      z.object({
        environment: z.string(),
        deployments: z.number().int(),
        lead_time_for_changes: Percentiles,
        deployments_url: z.string(),
        running_count: z
          .number()
          .int()
          .meta({
            description: `How many artifacts of this repository run there now; \`running\` lists at most ${MAX_RUNNING} over all environments`,
          }),
        running: z.array(
          z.object({
            name: z.string(),
            fingerprint: z.string(),
            flow: z.string(),
            trail: z.string(),
            git_commit: z.string().nullable(),
            commit_timestamp: EpochSeconds.nullable(),
            html_url: z.string(),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'RepoDelivery' });

/** Running artifacts named per environment in `GET /environments-now/{org}`; the rest are counted. */
export const NAMED_RUNNING = 5;

/** `GET /environments-now/{org}`. */
export const EnvironmentsNowQuery = z.strictObject({
  since: QueryTime.optional().meta({
    description: 'Count the deployments that started at or after this time; 7 days ago by default',
  }),
  page: QueryInt(1, 100_000).optional().default(1),
  per_page: QueryInt(1, 50).optional().default(20),
});

/** One environment now: the environment, what runs in it, and its deployments since the asked time. */
export const EnvironmentNow = z
  .object({
    environment: Environment,
    running: z
      .array(
        z.object({
          name: z.string(),
          fingerprint: z.string(),
          compliant: z.boolean().nullable(),
          html_url: z.string().nullable(),
        }),
      )
      .meta({ description: `The first ${NAMED_RUNNING} artifacts running now, by name` }),
    running_count: z.number().int().meta({ description: 'How many artifacts run now' }),
    deployments: z.number().int().meta({ description: 'Deployments that started since `since`' }),
    deployments_url: z.string(),
  })
  .meta({ id: 'EnvironmentNow' });

/** A page of the organization's environments by name, each with what runs now and its recent deployments. */
export const EnvironmentsNowPage = z
  .object({
    since: EpochSeconds,
    page: z.number().int(),
    per_page: z.number().int(),
    total_count: z.number().int(),
    environments: z.array(EnvironmentNow),
    next: z.string().nullable(),
  })
  .meta({ id: 'EnvironmentsNowPage' });
