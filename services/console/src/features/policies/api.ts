/** Query hooks of the policy pages: the policies, one policy, and a preview of a change. */
import { useMutation, useQuery } from '@tanstack/react-query';
import { apiUrl, getJson, sendJson, seg } from '../../lib/api-client';
import type {
  Environment,
  EnvironmentPage,
  Policy,
  PolicyPreview,
  PolicyPreviewInput,
} from '../../lib/contract';

/** Snapshots one preview may cover (the API's MAX_PREVIEW_SNAPSHOTS). */
export const MAX_PREVIEW_SNAPSHOTS = 1_000;
/** Environments offered as suggestions in the preview form (one page of the list). */
export const ENVIRONMENT_SUGGESTIONS = 50;

export function usePolicies(org: string) {
  return useQuery({
    queryKey: ['policies', org],
    queryFn: ({ signal }) => getJson<Policy[]>(apiUrl(`/policies/${seg(org)}`), signal),
  });
}

export function usePolicy(org: string, name: string) {
  return useQuery({
    queryKey: ['policy', org, name],
    queryFn: ({ signal }) => getJson<Policy>(apiUrl(`/policies/${seg(org)}/${seg(name)}`), signal),
  });
}

/** The first page of the organization's environments, as suggestions for the preview form. */
export function useEnvironmentNames(org: string) {
  return useQuery({
    queryKey: ['environment-names', org],
    queryFn: ({ signal }) =>
      getJson<EnvironmentPage>(
        apiUrl(`/environments/${seg(org)}`, { page: 1, per_page: ENVIRONMENT_SUGGESTIONS }),
        signal,
      ),
  });
}

/** What to preview: a change (attach a text, or detach a policy) over the latest or the last N snapshots. */
export interface PreviewRequest {
  env: string;
  /** The change in words ("Attaching build-provenance v2"). */
  label: string;
  change: { attach: { name: string; content: string } } | { detach: string };
  /** How many of the latest snapshots (1: the latest only). */
  last: number;
}

/** The body the preview is asked with, once the environment's latest snapshot is known. */
export function previewBody(request: PreviewRequest, latest: number): PolicyPreviewInput {
  const change =
    'attach' in request.change ? { attach: [request.change.attach] } : { detach: [request.change.detach] };
  return request.last > 1 && latest > 0
    ? { ...change, snapshots: { from: Math.max(1, latest - request.last + 1), to: latest } }
    : change;
}

/**
 * The preview of a change: the environment (for its latest snapshot), then the API's preview over
 * that range. Changes nothing, so it needs only `read`.
 */
export function usePreview(org: string) {
  return useMutation({
    mutationFn: async (request: PreviewRequest) => {
      const env = await getJson<Environment>(apiUrl(`/environments/${seg(org)}/${seg(request.env)}`));
      const body = previewBody(request, env.latest_snapshot_index ?? 0);
      const preview = await sendJson<PolicyPreview>(
        'POST',
        apiUrl(`/environments/${seg(org)}/${seg(request.env)}/policy-preview`),
        body,
      );
      return { request, body, preview };
    },
  });
}
