/**
 * `GET /environments/{org}/{env}/events` (semantics.md section 5): one event per start, exit and
 * change of a fingerprint, between two snapshots or times, optionally only for some repos.
 */
import type { z } from 'zod';
import type { EnvironmentEvent } from '../../../../shared/contract/environments.js';
import { BadRequestError } from '../../errors.js';
import { epochSeconds } from '../../time.js';
import { annotate, describeChange } from '../../domain/snapshot-diff.js';
import {
  intervalIndex,
  parseEventBound,
  parseInterval,
  subtractTime,
} from '../../domain/snapshot-expressions.js';
import { reposRepository } from '../../storage/repositories/repos.js';
import {
  snapshotsRepository,
  type EventRow,
  type EventsFilter,
} from '../../storage/repositories/snapshots.js';
import { getEnvironment } from './environments.js';
import type { OrgScope } from '../scope/org-scope.js';
import { isTrue } from './snapshots.js';

export interface EventsQuery {
  page: number;
  per_page: number;
  interval?: string | undefined;
  reverse?: string | undefined;
  repo_name?: string | string[] | undefined;
  start?: string | undefined;
  end?: string | undefined;
  start_ts?: number | undefined;
  end_ts?: number | undefined;
}

type Event = z.infer<typeof EnvironmentEvent>;

/**
 * The snapshots and times the query selects: `interval`, then `start`/`end` (a snapshot, or a
 * time ago), then `start_ts`/`end_ts`. Null when the range is empty.
 */
function eventBounds(query: EventsQuery, latest: number, now: Date): Omit<EventsFilter, 'repoIds'> | null {
  let lo = 1;
  let hi = latest;
  let fromMs: number | undefined;
  let toMs: number | undefined;
  const interval = parseInterval(query.interval);
  if (!interval.ok) {
    throw new BadRequestError(interval.reason, { 'query.interval': interval.reason });
  }
  if (interval.value) {
    lo = intervalIndex(interval.value.from, latest);
    hi = intervalIndex(interval.value.to, latest);
  }
  for (const [key, text] of [
    ['start', query.start],
    ['end', query.end],
  ] as const) {
    if (text === undefined || text === '') {
      continue;
    }
    const bound = parseEventBound(text);
    if (!bound.ok) {
      throw new BadRequestError(bound.reason, { [`query.${key}`]: bound.reason });
    }
    const b = bound.value;
    if (b.kind === 'ago') {
      const ms = subtractTime(now.getTime(), b.amount, b.unit);
      if (key === 'start') {
        fromMs = ms;
      } else {
        toMs = ms;
      }
    } else if (key === 'start') {
      lo = intervalIndex(b, latest);
    } else {
      hi = intervalIndex(b, latest);
    }
  }
  if (query.start_ts !== undefined) {
    fromMs = query.start_ts * 1000;
  }
  if (query.end_ts !== undefined) {
    toMs = query.end_ts * 1000;
  }
  lo = Math.max(1, lo);
  hi = Math.min(latest, hi);
  if (lo > hi) {
    return null;
  }
  return {
    from: lo,
    to: hi,
    fromTime: fromMs !== undefined ? new Date(fromMs) : undefined,
    toTime: toMs !== undefined ? new Date(toMs) : undefined,
  };
}

/** One event as the interface shows it. */
function presentEvent(envName: string, c: EventRow): Event {
  const view = c.kind === 'exit' ? annotate(c, c.event_index) : annotate(c, c.from_index);
  const flows = c.provenance;
  return {
    environment_name: envName,
    snapshot_index: c.event_index,
    artifact_name: c.name,
    sha256: c.fingerprint,
    description: describeChange(view.annotation.type, view.annotation.was, view.annotation.now),
    reported_at: epochSeconds(c.snapshot_created_at),
    pipeline: flows[0]?.flow_name ?? '',
    type: view.annotation.type,
    flows: flows.map((f) => ({ flow_name: f.flow_name, deployments: null })),
    artifact_compliance: c.compliant,
    snapshot_compliance: c.snapshot_compliant,
  };
}

/** `GET /environments/{org}/{env}/events`: one event per start, exit and change, newest first. */
export async function listEvents(
  scope: OrgScope,
  envName: string,
  query: EventsQuery,
): Promise<{ events: Event[]; total: number }> {
  const { db, org, now } = scope;
  const env = await getEnvironment(scope, envName);
  // `--repo` (repeatable): only artifacts reported from one of these repos, in any flow.
  const repoNames = [query.repo_name ?? []].flat().filter((n) => n !== '');
  let repoIds: string[] | undefined;
  if (repoNames.length > 0) {
    repoIds = (await Promise.all(repoNames.map((n) => reposRepository.findByName(db, org.id, n))))
      .flat()
      .map((r) => r.id);
    if (repoIds.length === 0) {
      return { events: [], total: 0 };
    }
  }
  if (env.latest_snapshot === 0) {
    return { events: [], total: 0 };
  }
  const bounds = eventBounds(query, env.latest_snapshot, now);
  if (!bounds) {
    return { events: [], total: 0 };
  }
  // Paged and filtered in SQL: a page reads its own snapshots, not the environment's history.
  const filter = { ...bounds, repoIds };
  const total = await snapshotsRepository.countEvents(db, org.id, env.id, filter);
  const start = (query.page - 1) * query.per_page;
  const end = Math.min(total, start + query.per_page);
  if (start >= end) {
    return { events: [], total };
  }
  // Oldest first with reverse=true, newest first otherwise: positions [a, b) oldest first.
  const oldestFirst = isTrue(query.reverse);
  const [a, b] = oldestFirst ? [start, end] : [total - end, total - start];
  const { rows, before } = await snapshotsRepository.eventsWindow(db, org.id, env.id, filter, a, b);
  const page = rows
    .sort(
      (x, y) =>
        x.event_index - y.event_index ||
        x.name.localeCompare(y.name) ||
        (x.fingerprint < y.fingerprint ? -1 : x.fingerprint > y.fingerprint ? 1 : 0),
    )
    .slice(a - before, b - before)
    .map((c) => presentEvent(env.name, c));
  if (!oldestFirst) {
    page.reverse();
  }
  return { events: page, total };
}
