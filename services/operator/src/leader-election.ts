/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection package
 * does it: every retry period a candidate reads the Lease; a free or expired one it takes (a
 * replace with the resourceVersion read, so two candidates never both win), its own it renews.
 * A Lease counts as expired when its holder's record has not changed for `leaseDuration` by this
 * candidate's own clock (clock skew between nodes does not matter). A leader that cannot renew
 * for `renewDeadline` gives up before the others may take over; on a clean stop it releases
 * the Lease so a standby takes over at once.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { kubeStatus } from './kube.js';

type Log = Record<'info' | 'warn' | 'error' | 'debug', (obj: object, msg: string) => void>;

/** Where the Lease lives, who this candidate is, and the timings. */
export interface LeaderElectionConfig {
  leaseName: string;
  leaseNamespace: string;
  /** This candidate's identity in the Lease (the pod name). */
  identity: string;
  /** How long a Lease holds without renewal before another candidate may take it. */
  leaseDurationMs: number;
  /** How long a leader keeps trying to renew before it gives up leading. */
  renewDeadlineMs: number;
  /** Time between tries, for the leader and the candidates. */
  retryPeriodMs: number;
}

export interface LeaderCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
  onNewLeader?(identity: string): void;
}

const asDate = (v: unknown): Date | undefined =>
  v === undefined || v === null ? undefined : new Date(v as string);

/** One candidate. `start` runs the election loop until `stop`. */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The holder and renew time last read, and when (our clock) they last changed. */
  private observed: { holder: string; renew: string; at: number } | undefined;
  private lastRenewed = 0;
  private knownLeader: string | undefined;

  constructor(
    kubeConfig: KubeConfig,
    private readonly config: LeaderElectionConfig,
    private readonly callbacks: LeaderCallbacks,
    private readonly log: Log,
    private readonly clock: () => number = Date.now,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops trying; a leader releases the Lease so another candidate takes over without waiting. */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.leading) {
      this.leading = false;
      if (options.release !== false) {
        await this.release();
      }
      this.callbacks.onStoppedLeading();
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) {
      return;
    }
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule(this.config.retryPeriodMs);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    let acquired: boolean;
    try {
      acquired = await this.tryAcquireOrRenew();
    } catch (err) {
      this.log.warn(
        { lease: this.config.leaseName, err: (err as Error).message },
        'leader election: lease not reachable',
      );
      acquired = false;
      if (!this.leading) {
        return;
      }
      // A leader keeps leading while the API is away, until the renew deadline passes.
      if (this.clock() - this.lastRenewed < this.config.renewDeadlineMs) {
        return;
      }
    }
    if (this.stopped) {
      return;
    }
    if (acquired) {
      this.lastRenewed = this.clock();
      if (!this.leading) {
        this.leading = true;
        this.log.info({ lease: this.config.leaseName, identity: this.config.identity }, 'became the leader');
        this.callbacks.onStartedLeading();
      }
    } else if (this.leading && this.clock() - this.lastRenewed >= this.config.renewDeadlineMs) {
      this.leading = false;
      this.log.warn({ lease: this.config.leaseName, identity: this.config.identity }, 'lost the lease');
      this.callbacks.onStoppedLeading();
    }
  }

  private spec(previous?: V1Lease['spec'], transition = false): NonNullable<V1Lease['spec']> {
    const now = new Date(this.clock());
    return {
      holderIdentity: this.config.identity,
      leaseDurationSeconds: Math.ceil(this.config.leaseDurationMs / 1000),
      acquireTime: transition || !previous?.acquireTime ? now : previous.acquireTime,
      renewTime: now,
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (transition && previous ? 1 : 0),
    };
  }

  /** True when this candidate holds the Lease after the attempt. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { leaseName: name, leaseNamespace: namespace, identity } = this.config;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (kubeStatus(err) !== 404) {
        throw err;
      }
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: this.spec(),
          },
        });
        return true;
      } catch (createErr) {
        if (kubeStatus(createErr) === 409) {
          return false;
        } // another candidate created it first
        throw createErr;
      }
    }
    const holder = lease.spec?.holderIdentity ?? '';
    const renew = String(asDate(lease.spec?.renewTime)?.getTime() ?? '');
    if (!this.observed || this.observed.holder !== holder || this.observed.renew !== renew) {
      this.observed = { holder, renew, at: this.clock() };
    }
    if (holder !== '' && holder !== this.knownLeader) {
      this.knownLeader = holder;
      if (holder !== identity) {
        this.log.info({ lease: name, leader: holder }, 'new leader observed');
      }
      this.callbacks.onNewLeader?.(holder);
    }
    const durationMs =
      (lease.spec?.leaseDurationSeconds ?? Math.ceil(this.config.leaseDurationMs / 1000)) * 1000;
    const held = holder !== '' && holder !== identity && this.clock() - this.observed.at < durationMs;
    if (held) {
      return false;
    }
    try {
      await this.api.replaceNamespacedLease({
        name,
        namespace,
        body: { ...lease, spec: this.spec(lease.spec, holder !== identity) },
      });
      return true;
    } catch (err) {
      if (kubeStatus(err) === 409) {
        return false;
      } // someone else wrote first
      throw err;
    }
  }

  private async release(): Promise<void> {
    const { leaseName: name, leaseNamespace: namespace, identity } = this.config;
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) {
        return;
      }
      await this.api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: new Date(this.clock()),
          },
        },
      });
      this.log.info({ lease: name, identity }, 'released the lease');
    } catch (err) {
      this.log.warn(
        { lease: name, err: (err as Error).message },
        'could not release the lease; it expires by itself',
      );
    }
  }
}
