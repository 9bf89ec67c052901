/** Query hooks and writes of the access pages: members, service accounts with keys and trusts, the audit log. */
import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { apiUrl, getJson, sendJson, seg } from '../../lib/api-client';
import type {
  ApiKeyCreated,
  ApiKeyInfo,
  AuditLog,
  DispositionList,
  LegalHold,
  Member,
  OidcTrust,
  RetentionSettings,
  ServiceAccount,
} from '../../lib/contract';
import { DISPOSITIONS_PER_PAGE, nextDispositionPage } from './removals';

export function useMembers(org: string) {
  return useQuery({
    queryKey: ['members', org],
    queryFn: ({ signal }) =>
      getJson<{ members: Member[] }>(apiUrl(`/organizations/${seg(org)}/members`), signal),
  });
}

export interface AuditFilters {
  actor: string;
  action: string;
  page: number;
  perPage: number;
}

export const AUDIT_PER_PAGE = 50;
/** The API's most entries per page. */
export const MAX_AUDIT_PER_PAGE = 100;

/** A page of the audit log, with the page and size it was asked for (a kept page shows its own). */
export function useAuditLog(org: string, filters: AuditFilters) {
  return useQuery({
    queryKey: ['audit-log', org, filters],
    queryFn: async ({ signal }) => ({
      ...(await getJson<AuditLog>(
        apiUrl(`/audit-log/${seg(org)}`, {
          actor: filters.actor,
          action: filters.action,
          page: filters.page,
          per_page: filters.perPage,
        }),
        signal,
      )),
      page: filters.page,
      perPage: filters.perPage,
    }),
    placeholderData: keepPreviousData,
  });
}

export function useRetention(org: string) {
  return useQuery({
    queryKey: ['retention', org],
    queryFn: ({ signal }) => getJson<RetentionSettings>(apiUrl(`/retention/${seg(org)}`), signal),
  });
}

export function useLegalHolds(org: string) {
  return useQuery({
    queryKey: ['legal-holds', org],
    queryFn: ({ signal }) => getJson<LegalHold[]>(apiUrl(`/legal-holds/${seg(org)}`), signal),
  });
}

/** What the retention job removed, newest first, a page at a time following the API's `next` link. */
export function useDispositions(org: string) {
  return useInfiniteQuery({
    queryKey: ['dispositions', org],
    queryFn: ({ pageParam, signal }) =>
      getJson<DispositionList>(
        apiUrl(`/retention/${seg(org)}/dispositions`, { page: pageParam, per_page: DISPOSITIONS_PER_PAGE }),
        signal,
      ),
    initialPageParam: 1,
    getNextPageParam: (last: DispositionList) => nextDispositionPage(last.next),
  });
}

export function useServiceAccounts(org: string) {
  return useQuery({
    queryKey: ['service-accounts', org],
    queryFn: ({ signal }) => getJson<ServiceAccount[]>(apiUrl(`/service-accounts/${seg(org)}`), signal),
  });
}

export function useKeys(org: string, account: string) {
  return useQuery({
    queryKey: ['service-account-keys', org, account],
    queryFn: ({ signal }) =>
      getJson<ApiKeyInfo[]>(apiUrl(`/service-accounts/${seg(org)}/${seg(account)}/api-keys`), signal),
  });
}

export function useTrusts(org: string, account: string) {
  return useQuery({
    queryKey: ['service-account-trusts', org, account],
    queryFn: ({ signal }) =>
      getJson<OidcTrust[]>(apiUrl(`/service-accounts/${seg(org)}/${seg(account)}/oidc-trusts`), signal),
  });
}

/** The writes of the service-accounts page; each refreshes what it changed. */
export function useAccountWrites(org: string) {
  const client = useQueryClient();
  const refresh = (account?: string) =>
    Promise.all([
      client.invalidateQueries({ queryKey: ['service-accounts', org] }),
      ...(account
        ? [
            client.invalidateQueries({ queryKey: ['service-account-keys', org, account] }),
            client.invalidateQueries({ queryKey: ['service-account-trusts', org, account] }),
          ]
        : []),
    ]);
  const base = (account: string) => `/service-accounts/${seg(org)}/${seg(account)}`;
  return {
    createAccount: useMutation({
      mutationFn: (input: { name: string; privilege: string; description: string }) =>
        sendJson<ServiceAccount>('POST', apiUrl(`/service-accounts/${seg(org)}`), input),
      onSuccess: () => refresh(),
    }),
    createKey: useMutation({
      mutationFn: (input: { account: string; description: string; expiresAt: number | null }) =>
        sendJson<ApiKeyCreated>('POST', apiUrl(`${base(input.account)}/api-keys`), {
          description: input.description,
          ...(input.expiresAt ? { expires_at: input.expiresAt } : {}),
        }),
      onSuccess: (_d, input) => refresh(input.account),
    }),
    rotateKey: useMutation({
      mutationFn: (input: { account: string; id: string }) =>
        sendJson<ApiKeyCreated>(
          'POST',
          apiUrl(`${base(input.account)}/api-keys/${seg(input.id)}/rotate`),
          {},
        ),
      onSuccess: (_d, input) => refresh(input.account),
    }),
    revokeKey: useMutation({
      mutationFn: (input: { account: string; id: string }) =>
        sendJson<unknown>('DELETE', apiUrl(`${base(input.account)}/api-keys/${seg(input.id)}`)),
      onSuccess: (_d, input) => refresh(input.account),
    }),
    removeTrust: useMutation({
      mutationFn: (input: { account: string; trust: string }) =>
        sendJson<unknown>('DELETE', apiUrl(`${base(input.account)}/oidc-trusts/${seg(input.trust)}`)),
      onSuccess: (_d, input) => refresh(input.account),
    }),
  };
}
