/**
 * Environment -> Verity: create or update the environment (name defaults to metadata.name, type
 * to K8S), keep its attached policies equal to `spec.policies` (attach and detach), and its tags
 * equal to `spec.tags`, when those fields are given; status carries the latest snapshot, its
 * compliance and the policies attached. Verity's interface has no environment delete (spec
 * endpoints 1-19; archive is a separate choice), so Environment holds no finalizer: deleting the
 * resource leaves the environment and its snapshots, which are evidence, in Verity.
 */
import { VerityApiError } from '../../shared/client/index.js';
import type { EnvironmentResource } from './crds.js';
import { RetryError, type Applied, type KindHandler, type ReconcileContext } from './reconcile.js';

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set(a).size === new Set([...a, ...b]).size;

/** The Verity names of the policies an Environment lists: a Policy resource's `spec.name`, or the name itself. */
export function resolvePolicyNames(
  env: EnvironmentResource,
  ctx: Pick<ReconcileContext, 'policy'>,
): string[] {
  const namespace = env.metadata.namespace ?? '';
  return (env.spec.policies ?? []).map((p) => {
    const resource = ctx.policy(namespace, p);
    if (!resource) {
      return p;
    }
    if (!resource.inVerity) {
      throw new RetryError('DependencyNotReady', `Policy ${namespace}/${p} is not in Verity yet`);
    }
    return resource.name;
  });
}

/** What tags to set and remove so the environment's tags equal `wanted`. */
export function tagChange(
  current: Record<string, string>,
  wanted: Record<string, string>,
): { set: Record<string, string>; remove: string[] } {
  return {
    set: Object.fromEntries(Object.entries(wanted).filter(([k, v]) => current[k] !== v)),
    remove: Object.keys(current).filter((k) => !Object.hasOwn(wanted, k)),
  };
}

export const environmentHandler: KindHandler<EnvironmentResource> = {
  kind: 'Environment',
  holdsFinalizer: false,
  async apply(env: EnvironmentResource, ctx: ReconcileContext): Promise<Applied> {
    const { api } = ctx;
    const spec = env.spec;
    const name = spec.name ?? env.metadata.name;
    const policies = spec.policies ? resolvePolicyNames(env, ctx) : undefined;
    const body = {
      name,
      type: spec.type,
      description: spec.description,
      ...(spec.type === 'logical' && spec.includedEnvironments
        ? { included_environments: spec.includedEnvironments }
        : {}),
    };
    let current = await api.environments.get(name).catch((err: unknown) => {
      if (err instanceof VerityApiError && err.status === 404) {
        return undefined;
      }
      throw err;
    });
    let changed = false;
    if (!current) {
      await api.environments.put({ ...body, ...(policies ? { policies } : {}) });
      changed = true;
    } else {
      if (
        current.type !== spec.type ||
        current.description !== spec.description ||
        current.archived ||
        (body.included_environments &&
          !sameSet(current.included_environments ?? [], body.included_environments))
      ) {
        await api.environments.put(body);
        changed = true;
      }
      if (policies) {
        const attach = policies.filter((p) => !current!.policies.includes(p));
        const detach = current.policies.filter((p) => !policies.includes(p));
        if (attach.length > 0) {
          await api.environments.attach(name, attach);
        }
        if (detach.length > 0) {
          await api.environments.detach(name, detach);
        }
        changed ||= attach.length + detach.length > 0;
      }
    }
    if (spec.tags) {
      const change = tagChange(current?.tags ?? {}, spec.tags);
      if (Object.keys(change.set).length + change.remove.length > 0) {
        await api.environments.tags(name, change.set, change.remove);
        changed = true;
      }
    }
    if (changed || !current) {
      current = await api.environments.get(name);
    }
    return {
      facts: {
        lastSnapshot: current.latest_snapshot_index ?? undefined,
        compliant: current.state ?? undefined,
        lastReportedAt:
          current.last_reported_at !== null
            ? new Date(current.last_reported_at * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
            : undefined,
        policies: current.policies,
      },
      message: `environment ${name} matches the spec`,
      changed,
    };
  },
};
