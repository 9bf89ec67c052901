/** The resource types the double serves: the core kinds it starts with and the operator's own. */
/** A resource type the double serves. */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural, as in the URL. */
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Custom-resource semantics: generation, a `/status` subresource, no-op writes. */
  statusSubresource?: boolean;
}

export const PODS: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  namespaced: true,
};

export const SECRETS: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  namespaced: true,
};

/** coordination.k8s.io Leases: what replicas elect a leader with (PUT with a stale resourceVersion is 409). */
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  namespaced: true,
};

/** core/v1 Events, as `kubectl describe` lists them for an object. */
export const EVENTS: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  namespaced: true,
};

const verityKind = (kind: string, resource: string): ResourceType => ({
  group: 'verity.dev',
  version: 'v1alpha1',
  resource,
  kind,
  namespaced: true,
  statusSubresource: true,
});
/** The operator's custom resources, as crds/ declares them. */
export const ENVIRONMENTS = verityKind('Environment', 'environments');
export const POLICIES = verityKind('Policy', 'policies');
export const ACTIONS = verityKind('Action', 'actions');
export const VERITY_KINDS = [ENVIRONMENTS, POLICIES, ACTIONS] as const;

/** The key of a type in the store: group/version/resource. */
export const typeKey = (t: ResourceType) => `${t.group}/${t.version}/${t.resource}`;
