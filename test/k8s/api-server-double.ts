/**
 * A Kubernetes API server double: a generic in-memory object store keyed by
 * group/version/resource/namespace/name with cluster-wide resourceVersions, served over real HTTP
 * the way the API server serves it: list (labelSelector, limit/continue), get, create, replace,
 * delete, and `?watch=true` streams (replay from a resourceVersion, bookmarks when
 * `allowWatchBookmarks=true`, 410 Gone for a compacted resourceVersion, timeoutSeconds).
 * Tests change objects directly, drop watch connections, expire history and inject failures.
 * Pods, Leases and Events are served from the start; others are registered with
 * {@link ApiServerDouble.register}.
 *
 * Types registered with `statusSubresource` behave as custom resources with a status
 * subresource do: `metadata.generation` starts at 1 and grows only when `spec` changes, a write
 * of the main resource keeps `status` and a write of `/status` changes nothing else, PATCH takes
 * merge patches and JSON patches, a write that changes nothing is a no-op (no new
 * resourceVersion, no event), and DELETE of an object with finalizers only marks it deleting
 * until an update removes the last finalizer.
 */
export * from './api-server-double/resources.js';
export { ObjectStore } from './api-server-double/store.js';
export { ApiServerDouble, type ApiServerDoubleOptions } from './api-server-double/server.js';
