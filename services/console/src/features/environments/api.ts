/** Query hooks of the environment pages: one request per list or page, never one per row. */
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { apiUrl, getJson, getJsonCounted, seg } from '../../lib/api-client';
import type {
  Environment,
  EnvironmentDiff,
  EnvironmentEvent,
  EnvironmentPage,
  Snapshot,
  SnapshotListItem,
} from '../../lib/contract';

export const ENVIRONMENTS_PER_PAGE = 25;
export const TIMELINE_PER_PAGE = 100;
/** Snapshots per window of events. */
export const EVENT_WINDOW = 20;
/** Events of one window per page (the API's page limit). */
export const EVENTS_PER_WINDOW = 100;

export interface EnvironmentFilter {
  page: number;
  name: string;
  type: string;
  tag: string;
}

export function useEnvironments(org: string, f: EnvironmentFilter) {
  return useQuery({
    queryKey: ['environments', org, f],
    queryFn: ({ signal }) =>
      getJson<EnvironmentPage>(
        apiUrl(`/environments/${seg(org)}`, {
          page: f.page,
          per_page: ENVIRONMENTS_PER_PAGE,
          name: f.name,
          type: f.type,
          tag: f.tag,
        }),
        signal,
      ),
    placeholderData: keepPreviousData,
  });
}

export function useEnvironment(org: string, env: string) {
  return useQuery({
    queryKey: ['environment', org, env],
    queryFn: ({ signal }) => getJson<Environment>(apiUrl(`/environments/${seg(org)}/${seg(env)}`), signal),
  });
}

/** One page of snapshots, newest first. */
export function useSnapshotList(org: string, env: string, page: number, enabled = true) {
  return useQuery({
    queryKey: ['snapshot-list', org, env, page],
    queryFn: ({ signal }) =>
      getJson<SnapshotListItem[]>(
        apiUrl(`/snapshots/${seg(org)}/${seg(env)}`, { page, per_page: TIMELINE_PER_PAGE }),
        signal,
      ),
    enabled,
    placeholderData: keepPreviousData,
  });
}

/** The snapshots around snapshot n (up to 50 either side), newest first, in one request. */
export function useSnapshotsAround(org: string, env: string, index: number, latest: boolean) {
  const from = Math.max(1, index - 50);
  return useQuery({
    queryKey: ['snapshots-around', org, env, index],
    queryFn: ({ signal }) =>
      getJson<SnapshotListItem[]>(
        apiUrl(`/snapshots/${seg(org)}/${seg(env)}`, {
          interval: `${from}..${latest ? index : Math.min(index + 49, from + 99)}`,
          per_page: TIMELINE_PER_PAGE,
        }),
        signal,
      ),
  });
}

/** The timeline reads at most this many pages of TIMELINE_PER_PAGE snapshots. */
export const TIMELINE_MAX_PAGES = 10;

/**
 * The snapshots of a time window ending now, newest first: pages of the list until one reaches
 * back past `since` (null: the whole history), at most TIMELINE_MAX_PAGES of them.
 */
export function useSnapshotWindow(org: string, env: string, zoom: string, since: number | null) {
  return useInfiniteQuery({
    queryKey: ['snapshot-window', org, env, zoom],
    queryFn: ({ pageParam, signal }) =>
      getJson<SnapshotListItem[]>(
        apiUrl(`/snapshots/${seg(org)}/${seg(env)}`, { page: pageParam, per_page: TIMELINE_PER_PAGE }),
        signal,
      ),
    initialPageParam: 1,
    getNextPageParam: (last, all, lastPage) => {
      const oldest = last[last.length - 1];
      const full = last.length === TIMELINE_PER_PAGE && all.length < TIMELINE_MAX_PAGES;
      return full && oldest && (since === null || oldest.from > since) ? lastPage + 1 : undefined;
    },
  });
}

/** The diff of two snapshots of an environment (`GET /env-diff`). */
export function useSnapshotDiff(org: string, env: string, from: number, to: number, enabled: boolean) {
  return useQuery({
    queryKey: ['env-diff', org, env, from, to],
    queryFn: ({ signal }) =>
      getJson<EnvironmentDiff>(
        apiUrl(`/env-diff/${seg(org)}`, { snappish1: `${env}#${from}`, snappish2: `${env}#${to}` }),
        signal,
      ),
    enabled,
  });
}

/** Snapshot n (or an expression such as -1 for the latest). */
export function useSnapshot(org: string, env: string, expression: string | number, enabled = true) {
  return useQuery({
    queryKey: ['snapshot', org, env, String(expression)],
    queryFn: ({ signal }) =>
      getJson<Snapshot>(apiUrl(`/snapshots/${seg(org)}/${seg(env)}/${seg(expression)}`), signal),
    enabled,
  });
}

/**
 * The events of a window of EVENT_WINDOW snapshots, newest window first (window 1 ends at the
 * latest), EVENTS_PER_WINDOW at a time, with how many the window holds. Windows bound what the
 * API reads and counts, however long the history.
 */
export function useEnvironmentEvents(org: string, env: string, win: number) {
  const newest = (win - 1) * EVENT_WINDOW;
  const oldest = newest + EVENT_WINDOW - 1;
  return useInfiniteQuery({
    queryKey: ['environment-events', org, env, win],
    queryFn: async ({ pageParam, signal }) => ({
      page: pageParam,
      ...(await getJsonCounted<EnvironmentEvent[]>(
        apiUrl(`/environments/${seg(org)}/${seg(env)}/events`, {
          interval: `~${oldest}..~${newest}`,
          page: pageParam,
          per_page: EVENTS_PER_WINDOW,
        }),
        signal,
      )),
    }),
    initialPageParam: 1,
    // more while fewer were read than the window holds (counted, not assumed: a page may be short)
    getNextPageParam: (
      last: { page: number; total: number | null; data: unknown[] },
      all: Array<{ data: unknown[] }>,
    ) =>
      last.total !== null && last.data.length > 0 && all.reduce((n, p) => n + p.data.length, 0) < last.total
        ? last.page + 1
        : undefined,
  });
}
