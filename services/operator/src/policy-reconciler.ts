/**
 * Policy -> Verity: create the policy, and add a version only when the content differs from the
 * latest version's (compared as documents, not as text). A description change alone updates the
 * policy without a version. Verity has no policy delete, so no finalizer: deleting the resource
 * leaves the policy and its history in Verity.
 */
import { VerityApiError } from '../../shared/client/index.js';
import type { PolicyResource } from './crds.js';
import { policyContent, sameContent } from './policy-content.js';
import { StalledError, type Applied, type KindHandler, type ReconcileContext } from './reconcile.js';

const notFoundAsUndefined = <T>(p: Promise<T>): Promise<T | undefined> =>
  p.catch((err: unknown) => {
    if (err instanceof VerityApiError && err.status === 404) {
      return undefined;
    }
    throw err;
  });

export const policyHandler: KindHandler<PolicyResource> = {
  kind: 'Policy',
  holdsFinalizer: false,
  async apply(policy: PolicyResource, { api }: ReconcileContext): Promise<Applied> {
    const spec = policy.spec;
    const name = spec.name ?? policy.metadata.name;
    let content;
    try {
      content = policyContent(spec.content);
    } catch (err) {
      throw new StalledError('InvalidSpec', `invalid spec: content is not YAML: ${(err as Error).message}`);
    }
    const payload = { name, description: spec.description, comment: spec.comment };
    let current = await notFoundAsUndefined(api.policies.get(name));
    const latest = (p: typeof current) =>
      p?.versions.reduce<(typeof p.versions)[number] | undefined>(
        (m, v) => (!m || v.version > m.version ? v : m),
        undefined,
      );
    let changed = false;
    const newest = latest(current);
    if (!current || !newest || !sameContent(newest.policy_yaml, content)) {
      await api.policies.put(payload, content.yaml);
      changed = true;
    } else if (current.description !== spec.description) {
      // Same document: send the stored text as it is, so Verity records no new version.
      await api.policies.put(payload, newest.policy_yaml);
      changed = true;
    }
    if (changed) {
      current = await api.policies.get(name);
    }
    const version = latest(current)?.version;
    return {
      facts: { policyVersion: version, contentHash: content.hash },
      message: `policy ${name} is at version ${version}`,
      changed,
    };
  },
};
