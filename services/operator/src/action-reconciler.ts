/**
 * Action -> Verity: upsert by name (the server numbers it; status keeps the number), with webhook
 * URLs read from Secrets in the resource's namespace, updated only when Verity's copy differs.
 * Verity holds the action's state, so the resource carries a finalizer: deleting it deletes the
 * action in Verity first.
 */
import type { Action, ActionTarget as ApiTarget } from '../../shared/contract/actions.js';
import { VerityApiError } from '../../shared/client/index.js';
import type { ActionWrite } from './api-client.js';
import type { ActionResource, ActionTarget } from './crds.js';
import type { Applied, KindHandler, RawResource, ReconcileContext } from './reconcile.js';

/** The target as Verity takes it, its webhook URL read from the Secret when referenced. */
async function resolveTarget(t: ActionTarget, namespace: string, ctx: ReconcileContext): Promise<ApiTarget> {
  switch (t.type) {
    case 'SLACK':
      return {
        type: 'SLACK',
        webhook: await ctx.kube.secretValue(namespace, t.webhookSecretRef.name, t.webhookSecretRef.key),
      };
    case 'WEBHOOK':
      return {
        type: 'WEBHOOK',
        webhook:
          t.webhook ??
          (await ctx.kube.secretValue(namespace, t.webhookSecretRef!.name, t.webhookSecretRef!.key)),
        payload_version: t.payloadVersion,
      };
    case 'EMAIL':
      return { type: 'EMAIL', emails: t.emails };
  }
}

const targetKey = (t: {
  type: string;
  webhook?: string | undefined;
  payload_version?: string | undefined;
  emails?: string[] | undefined;
}) =>
  JSON.stringify([
    t.type,
    t.webhook ?? null,
    t.type === 'WEBHOOK' ? (t.payload_version ?? '1.0') : null,
    t.emails ? [...t.emails].sort() : null,
  ]);
const sorted = (a: readonly string[] | null | undefined) => JSON.stringify([...(a ?? [])].sort());

/** Whether Verity's action already says what `wanted` says. */
export function actionMatches(current: Action, wanted: ActionWrite): boolean {
  return (
    current.type === wanted.type &&
    sorted(current.environments) === sorted(wanted.environments) &&
    sorted(current.flows) === sorted(wanted.flows) &&
    sorted(current.triggers) === sorted(wanted.triggers) &&
    sorted(current.targets.map(targetKey)) === sorted(wanted.targets.map(targetKey))
  );
}

/** The body of the action's PUT. */
export async function desiredAction(action: ActionResource, ctx: ReconcileContext): Promise<ActionWrite> {
  const spec = action.spec;
  const namespace = action.metadata.namespace ?? '';
  const targets = await Promise.all(spec.targets.map((t) => resolveTarget(t, namespace, ctx)));
  const name = spec.name ?? action.metadata.name;
  return spec.type === 'env'
    ? { name, type: 'env', environments: spec.environments ?? [], triggers: spec.triggers, targets }
    : { name, type: 'flow', flows: spec.flows ?? [], triggers: spec.triggers, targets };
}

const ignoreNotFound = (err: unknown) => {
  if (!(err instanceof VerityApiError && err.status === 404)) {
    throw err;
  }
};

export const actionHandler: KindHandler<ActionResource> = {
  kind: 'Action',
  holdsFinalizer: true,
  async apply(action: ActionResource, ctx: ReconcileContext): Promise<Applied> {
    const wanted = await desiredAction(action, ctx);
    let all = await ctx.api.actions.list();
    let current = all.find((a) => a.name === wanted.name);
    let changed = false;
    if (!current || !actionMatches(current, wanted)) {
      await ctx.api.actions.put(wanted);
      changed = true;
      all = await ctx.api.actions.list();
      current = all.find((a) => a.name === wanted.name);
      if (!current) {
        throw new Error(`action ${wanted.name} is not listed after it was written`);
      }
    }
    // A renamed action: the one this resource made under its old name goes.
    const before = action.status?.actionNumber;
    const old =
      before !== undefined && before !== current.number ? all.find((a) => a.number === before) : undefined;
    if (old && old.name !== wanted.name) {
      await ctx.api.actions.delete(old.number).catch(ignoreNotFound);
      changed = true;
    }
    return {
      facts: { actionNumber: current.number },
      message: `action ${wanted.name} is number ${current.number}`,
      changed,
    };
  },
  async cleanup(raw: RawResource, ctx: ReconcileContext): Promise<void> {
    const name = typeof raw.spec?.name === 'string' ? raw.spec.name : raw.metadata.name;
    const number = raw.status?.actionNumber;
    const all = await ctx.api.actions.list();
    const target =
      all.find((a) => a.number === number && a.name === name) ?? all.find((a) => a.name === name);
    if (target) {
      await ctx.api.actions.delete(target.number).catch(ignoreNotFound);
    }
  },
};
