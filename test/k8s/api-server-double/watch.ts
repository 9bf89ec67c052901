/** What a watch sees: its scope (type, namespace, label selector) and the store events in it. */
import type { LabelRequirement } from '../../../services/reporter/src/label-selector.js';
import type { EventType, K8sObject, StoreEvent } from './store.js';

export function matchesLabels(
  requirements: LabelRequirement[],
  labels: Record<string, string> = {},
): boolean {
  return requirements.every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    const v = labels[key];
    switch (operator) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
      case 'in':
        return has && values.includes(v!);
      case '!=':
      case 'notin':
        return !has || !values.includes(v!);
      case '>':
        return has && Number(v) > Number(values[0]);
      case '<':
        return has && Number(v) < Number(values[0]);
    }
  });
}

export interface WatchScope {
  typeKey: string;
  namespace: string | undefined;
  selector: LabelRequirement[];
}

export const inScope = (scope: WatchScope, obj: K8sObject | undefined) =>
  obj !== undefined &&
  (scope.namespace === undefined || obj.metadata.namespace === scope.namespace) &&
  matchesLabels(scope.selector, obj.metadata.labels);

/** What a watcher of `scope` sees of a store event (a label change can turn MODIFIED into ADDED or DELETED). */
export function translate(
  scope: WatchScope,
  e: StoreEvent,
): { type: EventType; object: K8sObject } | undefined {
  if (e.typeKey !== scope.typeKey) {
    return undefined;
  }
  const now = inScope(scope, e.object);
  if (e.type !== 'MODIFIED') {
    return now ? { type: e.type, object: e.object } : undefined;
  }
  const before = inScope(scope, e.previous);
  if (now) {
    return { type: before ? 'MODIFIED' : 'ADDED', object: e.object };
  }
  return before ? { type: 'DELETED', object: e.object } : undefined;
}
