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
import { canonical } from './policy-content.js';
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
  if (err instanceof StalledError) {
    return { retry: false, reason: err.reason, message: err.message };
  }
  if (err instanceof RetryError) {
    return { retry: true, reason: err.reason, message: err.message };
  }
  if (err instanceof SecretMissingError) {
    return { retry: true, reason: 'SecretNotFound', message: err.message };
  }
  if (err instanceof VerityApiError) {
    const fields = Object.entries(err.fieldErrors ?? {});
    const detail =
      fields.length > 0 ? `${err.message} (${fields.map(([k, v]) => `${k}: ${v}`).join('; ')})` : '';
    const message = `Verity API: ${detail || err.message}`;
    const s = err.status;
    if (s === 0) {
      return { retry: true, reason: 'ApiUnreachable', message };
    }
    // A name the spec refers to that Verity does not know yet may arrive (another resource, a reporter).
    if ((s === 400 || s === 422) && fields.some(([, v]) => /^unknown /.test(v))) {
      return { retry: true, reason: 'DependencyNotReady', message };
    }
    if (s === 400 || s === 413 || s === 422) {
      return { retry: false, reason: 'Rejected', message };
    }
    if (s === 401) {
      return { retry: true, reason: 'Unauthorized', message };
    }
    if (s === 403) {
      return { retry: true, reason: 'Forbidden', message };
    }
    if (s === 404) {
      return { retry: true, reason: 'NotFound', message };
    }
    if (s === 409) {
      return { retry: true, reason: 'Conflict', message };
    }
    if (s === 429) {
      return { retry: true, reason: 'RateLimited', message };
    }
    if (s >= 500) {
      return { retry: true, reason: 'ApiError', message };
    }
    return { retry: false, reason: 'Rejected', message };
  }
  if (err instanceof z.ZodError) {
    return {
      retry: true,
      reason: 'UnexpectedResponse',
      message: `Verity API answered an unexpected shape: ${err.message}`,
    };
  }
  const code = kubeStatus(err);
  if (code !== undefined) {
    return {
      retry: true,
      reason: 'KubernetesError',
      message: `Kubernetes API: HTTP ${code} ${(err as Error).message ?? ''}`.trim(),
    };
  }
  return { retry: true, reason: 'InternalError', message: err instanceof Error ? err.message : String(err) };
}

/** `spec.targets.0.webhook: message; ...` */
export function specProblems(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'resource'}: ${i.message}`)
    .join('; ');
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

/** One reconcile of one resource: what it read, and the status writes it made. */
class Run {
  readonly ref: ObjectRef;
  readonly generation: number | undefined;
  readonly previous: Record<string, unknown>;
  readonly conditions: Condition[] | undefined;
  readonly finalizers: string[];
  readonly now: Date;
  /** The value of {@link RECONCILE_REQUEST_ANNOTATION}, if set. */
  readonly requested: string | undefined;
  statusWritten = false;

  constructor(
    kind: KindName,
    readonly raw: RawResource,
    readonly ctx: ReconcileContext,
  ) {
    this.ref = refOf(kind, raw);
    this.generation = raw.metadata.generation;
    this.previous = raw.status ?? {};
    this.conditions = this.previous.conditions as Condition[] | undefined;
    this.finalizers = raw.metadata.finalizers ?? [];
    this.now = ctx.now();
    this.requested = raw.metadata.annotations?.[RECONCILE_REQUEST_ANNOTATION];
  }

  /** Writes the status through the status subresource, only when it changed. */
  async write(status: Record<string, unknown>): Promise<void> {
    // Whatever the outcome, the request was handled.
    const handled =
      this.requested === undefined ? status : { ...status, lastHandledReconcileAt: this.requested };
    const next = canonical(handled) as Record<string, unknown>;
    if (sameStatus(next, this.previous)) {
      return;
    }
    await this.ctx.kube.writeStatus(this.ref, next);
    this.statusWritten = true;
  }

  outcome(result: ReconcileResult, reason: string, message: string, requeue: Outcome['requeue']): Outcome {
    return { result, reason, message, requeue, statusWritten: this.statusWritten };
  }
}

/** Step 1, deletion: clean up in Verity, then remove the finalizer so the resource may go. */
async function finalize<R>(handler: KindHandler<R>, run: Run): Promise<Outcome> {
  const { raw, ctx, ref, finalizers } = run;
  if (!handler.holdsFinalizer || !finalizers.includes(FINALIZER)) {
    return run.outcome('success', 'Deleted', 'deleted', 'none');
  }
  try {
    await handler.cleanup?.(raw, ctx);
    await ctx.kube.setFinalizers(
      ref,
      finalizers.filter((f) => f !== FINALIZER),
      raw.metadata.resourceVersion,
    );
    return run.outcome('success', 'Deleted', 'removed from Verity', 'none');
  } catch (err) {
    const c = classify(err);
    await run
      .write({
        ...run.previous,
        conditions: retryingConditions(
          run.conditions,
          run.generation,
          c.reason,
          `deleting: ${c.message}`,
          run.now,
        ),
      })
      .catch(() => undefined);
    return run.outcome('error', c.reason, c.message, 'backoff');
  }
}

/** Step 2, the spec checked with the kind's schema: an invalid spec is terminal. */
function parseSpec<R>(handler: KindHandler<R>, raw: RawResource): R & { spec: { suspend: boolean } } {
  const parsed = KINDS[handler.kind].schema.safeParse(raw);
  if (!parsed.success) {
    throw new StalledError('InvalidSpec', `invalid spec: ${specProblems(parsed.error)}`);
  }
  return parsed.data as R & { spec: { suspend: boolean } };
}

/** Step 4, `spec.suspend`: only a Ready=Unknown condition; Verity keeps what it has. */
async function suspend(run: Run): Promise<Outcome> {
  const message = 'reconciliation is suspended; Verity keeps what it has';
  const next = setCondition(
    run.conditions?.filter((c) => c.type === 'Ready'),
    { type: 'Ready', status: 'Unknown', reason: 'Suspended', message },
    run.generation,
    run.now,
  ).filter((c) => c.type === 'Ready');
  await run.write({ ...run.previous, observedGeneration: run.generation, conditions: next });
  return run.outcome('success', 'Suspended', message, 'none');
}

/** Step 5, the kind's work; success is Ready=True, the server's facts and a requeue after the interval. */
async function applySpec<R>(handler: KindHandler<R>, resource: R, run: Run): Promise<Outcome> {
  const { previous, generation, now, requested } = run;
  const applied = await handler.apply(resource, run.ctx);
  const base = {
    ...previous,
    ...applied.facts,
    observedGeneration: generation,
    conditions: readyConditions(run.conditions, generation, applied.message, now),
    ...(requested === undefined ? {} : { lastHandledReconcileAt: requested }),
  };
  // lastReconciledAt moves when the operator changed Verity or the status, not on every look.
  const unchanged = sameStatus({ ...base, lastReconciledAt: previous.lastReconciledAt }, previous);
  await run.write(
    applied.changed || !unchanged
      ? { ...base, lastReconciledAt: now.toISOString().replace(/\.\d{3}Z$/, 'Z') }
      : base,
  );
  return run.outcome('success', 'Succeeded', applied.message, 'interval');
}

/** A failed step: Reconciling and a backoff when it may pass, Stalled and no requeue when not. */
async function failed(run: Run, err: unknown): Promise<Outcome> {
  const { previous, conditions, generation, now } = run;
  const c = classify(err);
  try {
    await run.write(
      c.retry
        ? { ...previous, conditions: retryingConditions(conditions, generation, c.reason, c.message, now) }
        : {
            ...previous,
            observedGeneration: generation,
            conditions: stalledConditions(conditions, generation, c.reason, c.message, now),
          },
    );
  } catch (statusErr) {
    // The status could not be written (the Kubernetes API is away): retry the whole reconcile.
    const s = classify(statusErr);
    return run.outcome('error', s.reason, s.message, 'backoff');
  }
  return c.retry
    ? run.outcome('error', c.reason, c.message, 'backoff')
    : run.outcome('stalled', c.reason, c.message, 'none');
}

/**
 * Runs the skeleton for one resource read from the cache (the steps of services/operator/README.md;
 * step 6, status written only when it changed, is {@link Run.write}).
 */
export async function reconcileResource<R>(
  handler: KindHandler<R>,
  raw: RawResource,
  ctx: ReconcileContext,
): Promise<Outcome> {
  const run = new Run(handler.kind, raw, ctx);
  if (raw.metadata.deletionTimestamp) {
    return finalize(handler, run);
  }
  try {
    const resource = parseSpec(handler, raw);
    // Step 3: the finalizer, where the kind holds one.
    if (handler.holdsFinalizer && !run.finalizers.includes(FINALIZER)) {
      await ctx.kube.setFinalizers(run.ref, [...run.finalizers, FINALIZER], raw.metadata.resourceVersion);
    }
    if (resource.spec.suspend) {
      return await suspend(run);
    }
    return await applySpec(handler, resource, run);
  } catch (err) {
    return failed(run, err);
  }
}
