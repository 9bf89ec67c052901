/**
 * Kubernetes Events about the custom resources, recorded on the object itself (core/v1, what
 * `kubectl describe` lists under Events), as flux's controllers record theirs: Normal when a
 * reconcile succeeded, Warning when it failed. Recording is best effort: a failed write is
 * logged and never fails the reconcile.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION, type KindName } from './crds.js';
import type { Outcome, RawResource } from './reconcile.js';

type Log = Record<'warn', (obj: object, msg: string) => void>;

/** The object an Event is about. */
export interface InvolvedObject {
  kind: KindName;
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

/** The component name Events carry (`source.component`, `reportingComponent`). */
export const EVENT_COMPONENT = 'verity-operator';

export class EventRecorder {
  private readonly core: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly instance: string,
    private readonly log: Log,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Records one Event on `object`; never throws. */
  async record(
    object: InvolvedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const at = this.now();
    try {
      await this.core.createNamespacedEvent({
        namespace: object.namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: {
            // As client-go's recorder names them: the object's name and a unique suffix.
            name: `${object.name}.${at.getTime().toString(16)}${randomBytes(4).toString('hex')}`,
            namespace: object.namespace,
          },
          involvedObject: {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: object.kind,
            namespace: object.namespace,
            name: object.name,
            uid: object.uid,
            resourceVersion: object.resourceVersion,
          },
          type,
          reason,
          // The API server refuses messages over 1 KiB.
          message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
          action: 'Reconcile',
          source: { component: EVENT_COMPONENT },
          reportingComponent: EVENT_COMPONENT,
          reportingInstance: this.instance,
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1,
        },
      });
    } catch (err) {
      this.log.warn(
        {
          kind: object.kind,
          namespace: object.namespace,
          name: object.name,
          reason,
          err: (err as Error).message,
        },
        'could not record an event',
      );
    }
  }
}

/**
 * The Event of each reconcile: what it changed or what failed. A repeat of the last Event of the
 * same key (the same failure on every retry, a drift check that found nothing) is not recorded
 * again.
 */
export class OutcomeEvents {
  /** The last Event recorded per key. */
  private readonly last = new Map<string, string>();

  constructor(
    private readonly recorder: EventRecorder,
    private readonly counted: (type: 'Normal' | 'Warning') => void,
  ) {}

  /** Forget what was recorded: a new leader records afresh. */
  clear(): void {
    this.last.clear();
  }

  async record(key: string, kind: KindName, resource: RawResource, outcome: Outcome): Promise<void> {
    if (outcome.reason === 'Deleted') {
      this.last.delete(key);
      return;
    }
    const type = outcome.result === 'success' ? 'Normal' : 'Warning';
    const said = `${type}|${outcome.reason}|${outcome.message}`;
    if (!outcome.statusWritten && this.last.get(key) === said) {
      return;
    }
    this.last.set(key, said);
    this.counted(type);
    await this.recorder.record(
      {
        kind,
        namespace: resource.metadata.namespace ?? '',
        name: resource.metadata.name,
        uid: resource.metadata.uid,
        resourceVersion: resource.metadata.resourceVersion,
      },
      type,
      outcome.reason,
      outcome.message,
    );
  }
}
