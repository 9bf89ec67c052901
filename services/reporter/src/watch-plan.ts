/**
 * Which pod watches serve which environments. Environments share watches: one per label
 * selector, cluster-wide when any environment of that selector needs more than literal
 * namespaces (expressions, exclusions or everything), else one per literal namespace, which
 * works with namespace-scoped RBAC. Each environment then filters the cached pods by namespace.
 * Pure.
 */
import type { EnvironmentConfig } from './config.js';
import { compileNamespaceFilter, type NamespaceFilter } from './namespace-filter.js';

/** One list+watch of pods. */
export interface WatchScope {
  key: string;
  /** undefined: all namespaces (`/api/v1/pods`). */
  namespace: string | undefined;
  labelSelector: string | undefined;
}

/** An environment with its compiled namespace filter and the watches that hold its pods. */
export interface PlannedEnvironment {
  env: EnvironmentConfig;
  filter: NamespaceFilter;
  scopes: string[];
}

/** The watches to run and, per environment, the ones to read. */
export function planWatches(environments: EnvironmentConfig[]): {
  scopes: WatchScope[];
  environments: PlannedEnvironment[];
} {
  const scopes = new Map<string, WatchScope>();
  const add = (namespace: string | undefined, labelSelector: string | undefined) => {
    const key = `${namespace ?? '*'}|${labelSelector ?? ''}`;
    if (!scopes.has(key)) {
      scopes.set(key, { key, namespace, labelSelector });
    }
    return key;
  };
  const compiled = environments.map((env) => ({ env, filter: compileNamespaceFilter(env) }));
  const clusterWide = new Set(
    compiled.filter((c) => c.filter.literalNamespaces === undefined).map((c) => c.env.labelSelector ?? ''),
  );
  const planned = compiled.map(({ env, filter }) => ({
    env,
    filter,
    scopes: clusterWide.has(env.labelSelector ?? '')
      ? [add(undefined, env.labelSelector)]
      : filter.literalNamespaces!.map((ns) => add(ns, env.labelSelector)),
  }));
  return { scopes: [...scopes.values()], environments: planned };
}
