/**
 * Which organization, with which key, a namespace's resources are reconciled into: a namespace of
 * `namespaces` into its own organization with its own key; one of `watchNamespaces` (or any
 * namespace, cluster-wide) into the default organization with the default key; any other
 * namespace into none, so its resources are ignored.
 */
import { createOperatorApi, type OperatorApi } from './api-client.js';
import { tokenReader, type OperatorConfig, type TokenSource } from './config.js';

/** The organization of a namespace and the client holding that namespace's key. */
export interface Tenant {
  org: string;
  api: OperatorApi;
}

export class Tenants {
  private readonly byNamespace = new Map<string, Tenant>();
  private readonly everywhere: Tenant | undefined;

  constructor(config: OperatorConfig) {
    const tenant = (org: string, token: TokenSource): Tenant => ({
      org,
      api: createOperatorApi({ baseUrl: config.apiUrl, org, token: tokenReader(token) }),
    });
    const main = tenant(config.org, config.token);
    for (const namespace of config.watchNamespaces) {
      this.byNamespace.set(namespace, main);
    }
    for (const n of config.namespaces ?? []) {
      this.byNamespace.set(n.namespace, tenant(n.org, n.token));
    }
    this.everywhere = config.clusterWide ? main : undefined;
  }

  /** The namespaces the informers watch: every one, or those that map to an organization. */
  get watched(): string[] | 'all' {
    return this.everywhere ? 'all' : [...this.byNamespace.keys()];
  }

  /** The organization a resource in `namespace` belongs to; undefined: it is ignored. */
  of(namespace: string): Tenant | undefined {
    return this.byNamespace.get(namespace) ?? this.everywhere;
  }
}
