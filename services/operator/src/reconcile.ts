/**
 * The reconcile skeleton every kind shares, after flux's controllers: finalizer first (for kinds
 * whose deletion must clean up in Verity), then suspend, then the spec (an invalid one stalls:
 * terminal, no requeue), then the kind's work; retryable failures (network, 5xx, 429, a missing
 * Secret or dependency) requeue with backoff; success records the server's facts and requeues
 * after the interval to repair drift. Status goes through the status subresource, and only when
 * it changed: a status write is a watch event, and writing on every pass would feed itself.
 */
import { z } from 'zod';
import { VerityApiError } from '../../shared/client/index.js';
import { readyConditions, retryingConditions, setCondition, stalledConditions } from './conditions.js';
import { KINDS, type Condition, type KindName } from './crds.js';
import { FINALIZER, kubeStatus, SecretMissingError, type Kube, type ObjectRef } from './kube.js';
import type { OperatorApi } from './api-client.js';

/** A failure no retry can fix until the spec changes. */
export class StalledError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A failure worth retrying with backoff. */
export class RetryError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a kind's work found: the status fields it owns, the Ready message, whether it wrote to Verity. */
export interface Applied {
  facts: Record<string, unknown>;
  message: string;
  changed: boolean;
}

/** A resource as the informer holds it. */
export interface RawResource {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
    uid?: string;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A Policy resource as an Environment in its namespace sees it. */
export interface PolicyRef {
  /** The policy's name in Verity. */
  name: string;
  /** Whether it has reached Verity at least once. */
  inVerity: boolean;
}

export interface ReconcileContext {
  api: OperatorApi;
  kube: Kube;
  now: () => Date;
  /** The Policy resource `name` in `namespace`, if there is one. */
  policy(namespace: string, name: string): PolicyRef | undefined;
}

/** One kind's part of the skeleton. */
export interface KindHandler<R> {
  kind: KindName;
  /** Holds {@link FINALIZER} and runs `cleanup` before the resource may go. */
  holdsFinalizer: boolean;
  apply(resource: R, ctx: ReconcileContext): Promise<Applied>;
  cleanup?(resource: RawResource, ctx: ReconcileContext): Promise<void>;
}

export type ReconcileResult = 'success' | 'error' | 'stalled';

export interface Outcome {
  result: ReconcileResult;
  /** The Ready reason written (or that would have been). */
  reason: string;
  message: string;
  /** interval: look again later for drift; backoff: retry; none: wait for a change. */
  requeue: 'interval' | 'backoff' | 'none';
  /** Whether a status write went out. */
  statusWritten: boolean;
}

/** A failure's class, Ready reason and message. */
export function classify(err: unknown): { retry: boolean; reason: string; message: string } {
  if (err instanceof StalledError) return { retry: false, reason: err.reason, message: err.message };
  if (err instanceof RetryError) return { retry: true, reason: err.reason, message: err.message };
  if (err instanceof SecretMissingError)
    return { retry: true, reason: 'SecretNotFound', message: err.message };
  if (err instanceof VerityApiError) {
    const fields = Object.entries(err.fieldErrors ?? {});
    const detail =
      fields.length > 0 ? `${err.message} (${fields.map(([k, v]) => `${k}: ${v}`).join('; ')})` : '';
    const message = `Verity API: ${detail || err.message}`;
    const s = err.status;
    if (s === 0) return { retry: true, reason: 'ApiUnreachable', message };
    // A name the spec refers to that Verity does not know yet may arrive (another resource, a reporter).
    if ((s === 400 || s === 422) && fields.some(([, v]) => /^unknown /.test(v)))
      return { retry: true, reason: 'DependencyNotReady', message };
    if (s === 400 || s === 413 || s === 422) return { retry: false, reason: 'Rejected', message };
    if (s === 401) return { retry: true, reason: 'Unauthorized', message };
    if (s === 403) return { retry: true, reason: 'Forbidden', message };
    if (s === 404) return { retry: true, reason: 'NotFound', message };
    if (s === 409) return { retry: true, reason: 'Conflict', message };
    if (s === 429) return { retry: true, reason: 'RateLimited', message };
    if (s >= 500) return { retry: true, reason: 'ApiError', message };
    return { retry: false, reason: 'Rejected', message };
  }
  if (err instanceof z.ZodError)
    return {
      retry: true,
      reason: 'UnexpectedResponse',
      message: `Verity API answered an unexpected shape: ${err.message}`,
    };
  const code = kubeStatus(err);
  if (code !== undefined)
    return {
      retry: true,
      reason: 'KubernetesError',
      message: `Kubernetes API: HTTP ${code} ${(err as Error).message ?? ''}`.trim(),
    };
  return { retry: true, reason: 'InternalError', message: err instanceof Error ? err.message : String(err) };
}

/** `spec.targets.0.webhook: message; ...` */
export function specProblems(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'resource'}: ${i.message}`)
    .join('; ');
}

/** A copy with keys sorted and undefined dropped, to compare statuses. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

/** Whether two statuses say the same. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a ?? {})) === JSON.stringify(canonical(b ?? {}));
}

const refOf = (kind: KindName, raw: RawResource): ObjectRef => ({
  kind,
  namespace: raw.metadata.namespace ?? '',
  name: raw.metadata.name,
});

/**
 * Set to any new value (a timestamp, by convention) to have the operator reconcile the resource at
 * once, as flux's `reconcile.fluxcd.io/requestedAt`; the value handled lands in
 * `status.lastHandledReconcileAt`.
 */
export const RECONCILE_REQUEST_ANNOTATION = 'verity.dev/reconcile-requested-at';

/** Runs the skeleton for one resource read from the cache. */
export async function reconcileResource<R>(
  handler: KindHandler<R>,
  raw: RawResource,
  ctx: ReconcileContext,
): Promise<Outcome> {
  const ref = refOf(handler.kind, raw);
  const generation = raw.metadata.generation;
  const previous = raw.status ?? {};
  const conditions = previous.conditions as Condition[] | undefined;
  const now = ctx.now();
  let statusWritten = false;
  const requested = raw.metadata.annotations?.[RECONCILE_REQUEST_ANNOTATION];
  const write = async (status: Record<string, unknown>) => {
    // Whatever the outcome, the request was handled.
    const handled = requested === undefined ? status : { ...status, lastHandledReconcileAt: requested };
    const next = canonical(handled) as Record<string, unknown>;
    if (sameStatus(next, previous)) return;
    await ctx.kube.writeStatus(ref, next);
    statusWritten = true;
  };
  const finalizers = raw.metadata.finalizers ?? [];

  // Deletion: clean up in Verity, then let the resource go.
  if (raw.metadata.deletionTimestamp) {
    if (!handler.holdsFinalizer || !finalizers.includes(FINALIZER))
      return { result: 'success', reason: 'Deleted', message: 'deleted', requeue: 'none', statusWritten };
    try {
      await handler.cleanup?.(raw, ctx);
      await ctx.kube.setFinalizers(
        ref,
        finalizers.filter((f) => f !== FINALIZER),
        raw.metadata.resourceVersion,
      );
      return {
        result: 'success',
        reason: 'Deleted',
        message: 'removed from Verity',
        requeue: 'none',
        statusWritten,
      };
    } catch (err) {
      const c = classify(err);
      await write({
        ...previous,
        conditions: retryingConditions(conditions, generation, c.reason, `deleting: ${c.message}`, now),
      }).catch(() => undefined);
      return { result: 'error', reason: c.reason, message: c.message, requeue: 'backoff', statusWritten };
    }
  }

  try {
    const parsed = KINDS[handler.kind].schema.safeParse(raw);
    if (!parsed.success) throw new StalledError('InvalidSpec', `invalid spec: ${specProblems(parsed.error)}`);
    const resource = parsed.data as R & { spec: { suspend: boolean } };

    if (handler.holdsFinalizer && !finalizers.includes(FINALIZER))
      await ctx.kube.setFinalizers(ref, [...finalizers, FINALIZER], raw.metadata.resourceVersion);

    if (resource.spec.suspend) {
      const message = 'reconciliation is suspended; Verity keeps what it has';
      let next = setCondition(
        conditions?.filter((c) => c.type === 'Ready'),
        { type: 'Ready', status: 'Unknown', reason: 'Suspended', message },
        generation,
        now,
      );
      next = next.filter((c) => c.type === 'Ready');
      await write({ ...previous, observedGeneration: generation, conditions: next });
      return { result: 'success', reason: 'Suspended', message, requeue: 'none', statusWritten };
    }

    const applied = await handler.apply(resource, ctx);
    const ready = readyConditions(conditions, generation, applied.message, now);
    const base = {
      ...previous,
      ...applied.facts,
      observedGeneration: generation,
      conditions: ready,
      ...(requested === undefined ? {} : { lastHandledReconcileAt: requested }),
    };
    // lastReconciledAt moves when the operator changed Verity or the status, not on every look.
    const unchanged = sameStatus({ ...base, lastReconciledAt: previous.lastReconciledAt }, previous);
    await write(
      applied.changed || !unchanged
        ? { ...base, lastReconciledAt: now.toISOString().replace(/\.\d{3}Z$/, 'Z') }
        : base,
    );
    return {
      result: 'success',
      reason: 'Succeeded',
      message: applied.message,
      requeue: 'interval',
      statusWritten,
    };
  } catch (err) {
    const c = classify(err);
    try {
      if (c.retry)
        await write({
          ...previous,
          conditions: retryingConditions(conditions, generation, c.reason, c.message, now),
        });
      else
        await write({
          ...previous,
          observedGeneration: generation,
          conditions: stalledConditions(conditions, generation, c.reason, c.message, now),
        });
    } catch (statusErr) {
      // The status could not be written (the Kubernetes API is away): retry the whole reconcile.
      const s = classify(statusErr);
      return { result: 'error', reason: s.reason, message: s.message, requeue: 'backoff', statusWritten };
    }
    return c.retry
      ? { result: 'error', reason: c.reason, message: c.message, requeue: 'backoff', statusWritten }
      : { result: 'stalled', reason: c.reason, message: c.message, requeue: 'none', statusWritten };
  }
}
