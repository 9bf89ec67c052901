/**
 * What the operator writes to and reads from Kubernetes besides its informers: status through
 * the status subresource, its finalizer on the main resource, and Secret values.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { GROUP, KINDS, VERSION, type KindName } from './crds.js';

export const FINALIZER = 'verity.dev/finalizer';

/** A failed Kubernetes request's HTTP status (client-node 1.x puts it in `code`), if any. */
export function kubeStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  const code = typeof e?.code === 'number' ? e.code : e?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** A Secret or one of its keys that is not there (yet). */
export class SecretMissingError extends Error {
  override name = 'SecretMissingError';
}

/** The label by which a Secret lets the operator read it for Actions. */
export const SECRET_OPT_IN_LABEL = 'verity.dev/allow-operator-read';

/** A Secret that did not opt in (no label, not listed): to the operator it is not there. */
export class SecretNotAllowedError extends SecretMissingError {
  override name = 'SecretNotAllowedError';
}

export interface ObjectRef {
  kind: KindName;
  namespace: string;
  name: string;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The Kubernetes writes of the operator. */
export class Kube {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;

  /**
   * `secretNames`: Secrets that may be read without the opt-in label (the chart's
   * operator.secretNames, which also limits the operator's RBAC to them).
   */
  constructor(
    kubeConfig: KubeConfig,
    private readonly secretNames: readonly string[] = [],
  ) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  private target(ref: ObjectRef) {
    return {
      group: GROUP,
      version: VERSION,
      plural: KINDS[ref.kind].plural,
      namespace: ref.namespace,
      name: ref.name,
    };
  }

  /** Replaces `.status` through the status subresource (a JSON patch: `add` sets or replaces). */
  async writeStatus(ref: ObjectRef, status: Record<string, unknown>): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus({
      ...this.target(ref),
      body: [{ op: 'add', path: '/status', value: status }],
    });
  }

  /**
   * Sets the finalizers (a merge patch with the resourceVersion read, so a concurrent change of
   * the list is a 409 and the reconcile retries rather than dropping someone's finalizer).
   */
  async setFinalizers(
    ref: ObjectRef,
    finalizers: string[],
    resourceVersion: string | undefined,
  ): Promise<void> {
    await this.custom.patchNamespacedCustomObject(
      {
        ...this.target(ref),
        body: { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion } },
      },
      mergePatch,
    );
  }

  /**
   * The text under `key` of a Secret in `namespace`; {@link SecretMissingError} when either is
   * missing. Only Secrets that opt in are used: labelled `verity.dev/allow-operator-read: "true"`
   * or named in `secretNames`; any other is refused, so writing an Action cannot copy an
   * unrelated Secret into Verity.
   */
  async secretValue(namespace: string, name: string, key: string): Promise<string> {
    let secret;
    try {
      secret = await this.core.readNamespacedSecret({ namespace, name });
    } catch (err) {
      if (kubeStatus(err) === 404) {
        throw new SecretMissingError(`Secret ${namespace}/${name} not found`, { cause: err });
      }
      throw err;
    }
    if (secret.metadata?.labels?.[SECRET_OPT_IN_LABEL] !== 'true' && !this.secretNames.includes(name)) {
      throw new SecretNotAllowedError(
        `Secret ${namespace}/${name} is not open to the operator: label it ${SECRET_OPT_IN_LABEL}: "true" or list it in the chart's operator.secretNames`,
      );
    }
    const encoded = secret.data?.[key];
    if (encoded === undefined) {
      throw new SecretMissingError(`Secret ${namespace}/${name} has no key '${key}'`);
    }
    return Buffer.from(encoded, 'base64').toString('utf8').trim();
  }
}
