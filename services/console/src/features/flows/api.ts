/** Query hooks of the flow, trail and artifact pages: one request per list or page. */
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { apiUrl, getJson, seg } from '../../lib/api-client';
import type {
  ArtifactHistoryPage,
  ArtifactRecord,
  AttestationCursorPage,
  Flow,
  FlowPage,
  Trail,
  TrailPage,
} from '../../lib/contract';

export const FLOWS_PER_PAGE = 25;
export const TRAILS_PER_PAGE = 25;

export type FlowSort = 'name' | 'latest_activity';

export function useFlows(org: string, page: number, sort: FlowSort, direction: 'asc' | 'desc', name: string) {
  return useQuery({
    queryKey: ['flows', org, page, sort, direction, name],
    queryFn: ({ signal }) =>
      getJson<FlowPage>(
        apiUrl(`/flows/${seg(org)}`, {
          page,
          per_page: FLOWS_PER_PAGE,
          sort,
          sort_direction: direction,
          search_by_name: name,
        }),
        signal,
      ),
    placeholderData: keepPreviousData,
  });
}

export function useFlow(org: string, flow: string) {
  return useQuery({
    queryKey: ['flow', org, flow],
    queryFn: ({ signal }) => getJson<Flow>(apiUrl(`/flows/${seg(org)}/${seg(flow)}`), signal),
  });
}

/** A page of a flow's trails, newest first. */
export function useTrails(org: string, flow: string, page: number) {
  return useQuery({
    queryKey: ['trails', org, flow, page],
    queryFn: ({ signal }) =>
      getJson<TrailPage>(
        apiUrl(`/trails/${seg(org)}/${seg(flow)}`, { page, per_page: TRAILS_PER_PAGE }),
        signal,
      ),
    placeholderData: keepPreviousData,
  });
}

export function useTrail(org: string, flow: string, trail: string) {
  return useQuery({
    queryKey: ['trail', org, flow, trail],
    queryFn: ({ signal }) => getJson<Trail>(apiUrl(`/trails/${seg(org)}/${seg(flow)}/${seg(trail)}`), signal),
  });
}

/** Attestations per page of a trail's evidence (the API's most). */
export const ATTESTATIONS_PER_PAGE = 100;
/** Pages of evidence read without asking; past them, the trail page offers "Load more". */
export const ATTESTATION_PAGES_AUTO = 5;

/** The cursor of the next page, from the `_links.next.href` the API answers. */
function nextCursor(page: AttestationCursorPage): string | undefined {
  const next = page._links.next as { href?: unknown } | undefined;
  if (typeof next?.href !== 'string') {
    return undefined;
  }
  try {
    return new URL(next.href, window.location.origin).searchParams.get('after') ?? undefined;
  } catch {
    return undefined;
  }
}

/** The attestations of one trail, a page of 100 at a time, following the API's cursor. */
export function useTrailAttestations(org: string, flow: string, trail: string) {
  return useInfiniteQuery({
    queryKey: ['trail-attestations', org, flow, trail],
    queryFn: ({ pageParam, signal }) =>
      getJson<AttestationCursorPage>(
        apiUrl(`/attestations/${seg(org)}`, {
          flow,
          trail,
          per_page: ATTESTATIONS_PER_PAGE,
          after: pageParam,
        }),
        signal,
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: nextCursor,
  });
}

/** An artifact by fingerprint, as the record its html_url names when it carries an artifact_id. */
export function useArtifact(org: string, flow: string, fingerprint: string, artifactId: string | null) {
  return useQuery({
    queryKey: ['artifact', org, flow, fingerprint, artifactId],
    queryFn: ({ signal }) =>
      getJson<ArtifactRecord>(
        apiUrl(`/artifacts/${seg(org)}/${seg(flow)}/fingerprint/${seg(fingerprint)}`, {
          artifact_id: artifactId,
        }),
        signal,
      ),
  });
}

/** History lines per page of an artifact's history (oldest first). */
export const HISTORY_PER_PAGE = 100;

/** An artifact's whole history in the trail of its record, oldest first, a page at a time. */
export function useArtifactHistory(org: string, flow: string, fingerprint: string, trail: string | null) {
  return useInfiniteQuery({
    queryKey: ['artifact-history', org, flow, fingerprint, trail],
    queryFn: ({ pageParam, signal }) =>
      getJson<ArtifactHistoryPage>(
        apiUrl(`/artifacts/${seg(org)}/${seg(flow)}/fingerprint/${seg(fingerprint)}/history`, {
          trail,
          page: pageParam,
          per_page: HISTORY_PER_PAGE,
        }),
        signal,
      ),
    initialPageParam: 1,
    getNextPageParam: (last: ArtifactHistoryPage) =>
      last.pagination.page < last.pagination.page_count ? last.pagination.page + 1 : undefined,
  });
}
