/**
 * The four DORA keys (`GET /dora/{org}`), per bucket and for the whole range, computed in the
 * database over the deployments and compliance stretches recorded as snapshots were written:
 *  - deployment frequency: deployments that started in the stretch (rollbacks included), and
 *    their number per day;
 *  - lead time for changes: p50 and p90 of the deployments' change lead time, from the oldest
 *    commit a deployment brought to its start (rollbacks bring no change and are left out);
 *  - change failure rate: the share of deployments that, within the failure window, were rolled
 *    back or after which the environment became non-compliant because of the deployed artifact;
 *  - time to restore: p50 and p90 of the time from an environment becoming non-compliant to
 *    becoming compliant again, for restores in the stretch (environment-wide: `repo` leaves it as is).
 * Each figure links to the deployments it counts.
 */
import type { z } from 'zod';
import type { DoraAnswer, DoraFigures } from '../../../../shared/contract/insight.js';
import { BadRequestError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import {
  deliveryReads,
  type Bucket,
  type DeploymentAggregate,
  type RestoreAggregate,
} from '../../storage/repositories/delivery-reads.js';
import { apiUrl } from '../scope/links.js';
import type { OrgScope } from '../scope/org-scope.js';
import { checkRange, deploymentsQuery, environmentIdOf } from './deployments.js';

const DAY = 86_400_000;
/** Buckets one answer holds at most: a bit more than a year of days. */
export const MAX_BUCKETS = 400;
/** The range when `from` is not given. */
export const DEFAULT_RANGE_DAYS = 30;

export interface DoraRequest {
  environment?: string | undefined;
  repo?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  bucket: Bucket;
  failureWindow: number;
}

/** The start of the UTC day or ISO week (Monday) holding `t`. */
export function bucketStart(t: Date, bucket: Bucket): Date {
  const day = Math.floor(t.getTime() / DAY) * DAY;
  if (bucket === 'day') {
    return new Date(day);
  }
  // 1970-01-01 was a Thursday: days since the epoch + 3, modulo 7, count from Monday.
  const sinceMonday = (Math.floor(day / DAY) + 3) % 7;
  return new Date(day - sinceMonday * DAY);
}

/** The buckets of a range, each clipped to it. */
export function bucketsOf(
  from: Date,
  to: Date,
  bucket: Bucket,
): Array<{ start: Date; from: Date; to: Date }> {
  const step = bucket === 'day' ? DAY : 7 * DAY;
  const out: Array<{ start: Date; from: Date; to: Date }> = [];
  for (let s = bucketStart(from, bucket).getTime(); s < to.getTime(); s += step) {
    if (out.length === MAX_BUCKETS) {
      throw new BadRequestError(`The range holds more than ${MAX_BUCKETS} buckets of a ${bucket}`, {
        'query.from': `at most ${MAX_BUCKETS} ${bucket}s before \`to\`${bucket === 'day' ? ' (use bucket=week)' : ''}`,
      });
    }
    out.push({
      start: new Date(s),
      from: new Date(Math.max(s, from.getTime())),
      to: new Date(Math.min(s + step, to.getTime())),
    });
  }
  return out;
}

const round = (n: number | null): number | null => (n === null ? null : Math.round(n * 1000) / 1000);

function figures(
  scope: OrgScope,
  req: DoraRequest,
  range: { from: Date; to: Date },
  d: DeploymentAggregate | undefined,
  r: RestoreAggregate | undefined,
): z.infer<typeof DoraFigures> {
  const deployments = d?.deployments ?? 0;
  const failures = d?.failures ?? 0;
  const days = (range.to.getTime() - range.from.getTime()) / DAY;
  const link = (failedWithin?: number) =>
    apiUrl(
      scope,
      'deployments',
      deploymentsQuery({
        environment: req.environment,
        repo: req.repo,
        from: range.from,
        to: range.to,
        failedWithin,
      }),
    );
  return {
    from: epochSeconds(range.from),
    to: epochSeconds(range.to),
    deployment_frequency: {
      deployments,
      per_day: days > 0 ? round(deployments / days)! : 0,
      deployments_url: link(),
    },
    lead_time_for_changes: {
      p50: round(d?.lead_p50 ?? null),
      p90: round(d?.lead_p90 ?? null),
      deployments: d?.with_lead_time ?? 0,
      deployments_url: link(),
    },
    change_failure_rate: {
      rate: deployments > 0 ? round(failures / deployments) : null,
      failures,
      deployments,
      failures_url: link(req.failureWindow),
    },
    time_to_restore: {
      p50: round(r?.restore_p50 ?? null),
      p90: round(r?.restore_p90 ?? null),
      restores: r?.restores ?? 0,
      snapshots_url: req.environment === undefined ? null : apiUrl(scope, 'snapshots', req.environment),
    },
  };
}

/** `GET /dora/{org}`. */
export async function doraFigures(scope: OrgScope, req: DoraRequest): Promise<z.infer<typeof DoraAnswer>> {
  checkRange(req.from, req.to);
  const to = req.to ?? scope.now;
  const from = req.from ?? new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY);
  const buckets = bucketsOf(from, to, req.bucket);
  const environmentId = await environmentIdOf(scope, req.environment);
  const [deployed, restored] = await Promise.all([
    deliveryReads.aggregate(
      scope.db,
      scope.org.id,
      { environmentId, repo: req.repo, from, to },
      req.bucket,
      req.failureWindow,
    ),
    deliveryReads.restores(scope.db, scope.org.id, { environmentId, from, to }, req.bucket),
  ]);
  const key = (b: Date | null) => (b === null ? 'total' : String(b.getTime()));
  const d = new Map(deployed.map((x) => [key(x.bucket), x]));
  const r = new Map(restored.map((x) => [key(x.bucket), x]));
  return {
    query: {
      environment: req.environment ?? null,
      repo: req.repo ?? null,
      from: epochSeconds(from),
      to: epochSeconds(to),
      bucket: req.bucket,
      failure_window: req.failureWindow,
    },
    total: figures(scope, req, { from, to }, d.get('total'), r.get('total')),
    buckets: buckets.map((b) =>
      figures(scope, req, b, d.get(String(b.start.getTime())), r.get(String(b.start.getTime()))),
    ),
  };
}
