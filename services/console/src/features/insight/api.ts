/**
 * Query hooks of the delivery pages. Each page makes one request per list or chart: the home page
 * one for its environments (at most HOME_ENVIRONMENTS, with how many there are).
 */
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { apiUrl, getJson, seg } from '../../lib/api-client';
import type {
  DeploymentPage,
  DoraAnswer,
  EnvironmentsNowPage,
  RepoDelivery,
  RepoPage,
} from '../../lib/contract';

/** The home page shows this many environments (by name, the API's largest page), and links to the rest. */
export const HOME_ENVIRONMENTS = 50;
/** The home page lists this many repositories (by name), and says when there are more. */
export const HOME_REPOS = 50;
/** Deployments on one page of the deployments list, unless the address asks for 1 to 500 (`?per_page=`). */
export const DEPLOYMENTS_PER_PAGE = 50;
export const MAX_DEPLOYMENTS_PER_PAGE = 500;

/** The first HOME_ENVIRONMENTS environments by name: what runs in each now, and its deployments since `since`. */
export function useEnvironmentsNow(org: string, since: number) {
  return useQuery({
    queryKey: ['environments-now', org, since],
    queryFn: ({ signal }) =>
      getJson<EnvironmentsNowPage>(
        apiUrl(`/environments-now/${seg(org)}`, { since, page: 1, per_page: HOME_ENVIRONMENTS }),
        signal,
      ),
  });
}

/** The four keys over `from`..now, per week, for one environment or all of them. */
export function useDora(org: string, environment: string, from: number) {
  return useQuery({
    queryKey: ['dora', org, environment, from],
    queryFn: ({ signal }) =>
      getJson<DoraAnswer>(apiUrl(`/dora/${seg(org)}`, { environment, from, bucket: 'week' }), signal),
    placeholderData: keepPreviousData,
  });
}

/** The repositories by name, HOME_REPOS a page; the home page loads the next page on demand. */
export function useHomeRepos(org: string) {
  return useInfiniteQuery({
    queryKey: ['insight-repos', org],
    queryFn: ({ pageParam, signal }) =>
      getJson<RepoPage>(apiUrl(`/repos/${seg(org)}`, { page: pageParam, per_page: HOME_REPOS }), signal),
    initialPageParam: 1,
    getNextPageParam: (last: RepoPage) => (last.page < last.total_pages ? last.page + 1 : undefined),
  });
}

export interface DeploymentFilter {
  environment: string;
  flow: string;
  repo: string;
  /** As the API reads them: ISO date-times or epoch seconds; '' when absent. */
  from: string;
  to: string;
  /** The opaque start of the page, from the previous page's `next` link; '' for the newest. */
  page: string;
  perPage: number;
}

export function useDeployments(org: string, f: DeploymentFilter, enabled: boolean) {
  return useQuery({
    queryKey: ['deployments', org, f],
    queryFn: ({ signal }) =>
      getJson<DeploymentPage>(
        apiUrl(`/deployments/${seg(org)}`, {
          environment: f.environment,
          flow: f.flow,
          repo: f.repo,
          from: f.from,
          to: f.to,
          page: f.page,
          per_page: f.perPage,
        }),
        signal,
      ),
    enabled,
    placeholderData: keepPreviousData,
    retry: false,
  });
}

/** A repository's delivery since `from`, per week. The name is one escaped segment. */
export function useRepoDelivery(org: string, repo: string, from: number) {
  return useQuery({
    queryKey: ['repo-delivery', org, repo, from],
    queryFn: ({ signal }) =>
      getJson<RepoDelivery>(
        apiUrl(`/repos/${seg(org)}/${seg(repo)}/delivery`, { from, bucket: 'week' }),
        signal,
      ),
  });
}

/** The `page` value of the API's `next` link, or null on the last page. */
export function nextPage(next: string | null): string | null {
  if (!next) {
    return null;
  }
  try {
    return new URL(next, window.location.origin).searchParams.get('page');
  } catch {
    return null;
  }
}
