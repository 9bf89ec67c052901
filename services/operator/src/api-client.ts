/**
 * The Verity endpoints the operator calls, typed, over the shared client (Bearer key, JSON,
 * timeouts, errors carrying the HTTP status and the server's message as {@link VerityApiError}).
 */
import { z } from 'zod';
import { Action, type ActionTarget } from '../../shared/contract/actions.js';
import { Environment } from '../../shared/contract/environments.js';
import { Policy } from '../../shared/contract/policies.js';
import { apiPath, createClient, type ClientOptions } from '../../shared/client/index.js';

/** Body of `PUT /environments/{org}` as the operator sends it. */
export interface EnvironmentWrite {
  name: string;
  type: string;
  description: string;
  included_environments?: string[];
  policies?: string[];
}

/** Body of `PUT /actions/{org}/environments` or `/flows`. */
export interface ActionWrite {
  name: string;
  type: 'env' | 'flow';
  environments?: string[];
  flows?: string[];
  triggers: string[];
  targets: ActionTarget[];
}

/** Creates the operator's client for one server, organization and key. */
export function createOperatorApi(options: ClientOptions) {
  const client = createClient({ userAgent: 'verity-operator', ...options });
  const { request } = client;
  const org = options.org;
  return {
    environments: {
      get: (name: string) => request('GET', apiPath('environments', org, name), { schema: Environment }),
      put: (body: EnvironmentWrite) => request('PUT', apiPath('environments', org), { body }),
      attach: (name: string, policies: string[]) =>
        request('POST', apiPath('environments', org, name, 'policies'), { body: { policy_names: policies } }),
      detach: (name: string, policies: string[]) =>
        request('DELETE', apiPath('environments', org, name, 'policies'), {
          body: { policy_names: policies },
        }),
      tags: (name: string, set: Record<string, string>, remove: string[]) =>
        request('PATCH', apiPath('tags', org, 'environment', name), {
          body: { set_tags: set, remove_tags: remove },
        }),
    },
    policies: {
      get: (name: string) => request('GET', apiPath('policies', org, name), { schema: Policy }),
      /** `PUT /policies/{org}` (multipart): a new version only when the YAML differs from the latest. */
      put: (payload: { name: string; description: string; comment: string }, yaml: string) => {
        const form = new FormData();
        form.append('payload', JSON.stringify({ ...payload, type: 'env' }));
        form.append('policy_file', new Blob([yaml], { type: 'application/x-yaml' }), 'policy.yaml');
        return request('PUT', apiPath('policies', org), { body: form });
      },
    },
    actions: {
      list: () => request('GET', apiPath('actions', org), { schema: z.array(Action) }),
      put: (body: ActionWrite) =>
        request('PUT', apiPath('actions', org, body.type === 'env' ? 'environments' : 'flows'), { body }),
      delete: (number: number) => request('DELETE', apiPath('actions', org, number)),
    },
  };
}

export type OperatorApi = ReturnType<typeof createOperatorApi>;
