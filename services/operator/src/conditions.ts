/**
 * Status conditions as flux controllers keep them: Ready, Reconciling and Stalled, each a
 * metav1.Condition whose lastTransitionTime moves only when its status changes.
 */
import type { Condition } from './crds.js';

export type ConditionStatus = Condition['status'];

export interface ConditionInput {
  type: 'Ready' | 'Reconciling' | 'Stalled';
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Returns the conditions with one set (or replaced), keeping the transition time when the status holds. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number | undefined,
  now: Date,
): Condition[] {
  const existing = (conditions ?? []).find((c) => c.type === input.type);
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message.slice(0, 32_768),
    lastTransitionTime:
      existing && existing.status === input.status
        ? existing.lastTransitionTime
        : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  return [...(conditions ?? []).filter((c) => c.type !== input.type), next].sort((a, b) =>
    a.type.localeCompare(b.type),
  );
}

/** Returns the conditions without one type. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionInput['type'],
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The conditions of a resource that matches its spec in Verity. */
export function readyConditions(
  conditions: readonly Condition[] | undefined,
  generation: number | undefined,
  message: string,
  now: Date,
): Condition[] {
  let next = removeCondition(removeCondition(conditions, 'Reconciling'), 'Stalled');
  next = setCondition(next, { type: 'Ready', status: 'True', reason: 'Succeeded', message }, generation, now);
  return next;
}

/** Ready=False with the failure, and `flag` set in place of `other` (Reconciling or Stalled). */
function notReady(
  conditions: readonly Condition[] | undefined,
  failure: { generation: number | undefined; reason: string; message: string; now: Date },
  flag: ConditionInput,
  other: ConditionInput['type'],
): Condition[] {
  const { generation, reason, message, now } = failure;
  const next = setCondition(
    removeCondition(conditions, other),
    { type: 'Ready', status: 'False', reason, message },
    generation,
    now,
  );
  return setCondition(next, flag, generation, now);
}

/** The conditions after a retryable failure: not ready, still reconciling. */
export const retryingConditions = (
  conditions: readonly Condition[] | undefined,
  generation: number | undefined,
  reason: string,
  message: string,
  now: Date,
): Condition[] =>
  notReady(
    conditions,
    { generation, reason, message, now },
    { type: 'Reconciling', status: 'True', reason: 'ProgressingWithRetry', message },
    'Stalled',
  );

/** The conditions after a terminal failure (an invalid spec): stalled until the spec changes. */
export const stalledConditions: typeof retryingConditions = (conditions, generation, reason, message, now) =>
  notReady(
    conditions,
    { generation, reason, message, now },
    { type: 'Stalled', status: 'True', reason, message },
    'Reconciling',
  );
