/**
 * Domain events: what happened to the evidence or the runtime, published inside the transaction
 * that made it happen. Subscribers run in that same transaction, so anything they write (an
 * outbox row, a mark for re-evaluation) commits or rolls back with the change itself.
 *
 * After a commit, the use case that committed announces what its writes mean for the rest of
 * the process (`committed`): a snapshot made, notifications or re-evaluation marks written, a
 * report received. Metrics and worker wake-ups listen there, and only there.
 */
import type { PhaseSeconds } from './report-phases.js';
import type { Db } from '../../storage/database.js';

/** Everything a subscriber may react to. Names are past tense: the change has been made. */
export type DomainEvent =
  | { type: 'trail.started'; orgId: string; flowName: string; trailName: string; at: Date }
  | {
      type: 'artifact.reported';
      orgId: string;
      flowName: string;
      trailName: string;
      fingerprint: string;
      artifactName: string;
      artifactId: string;
      gitCommit: string | null;
      commitUrl: string | null;
      buildUrl: string | null;
      /** The artifact's state in its trail after this report. */
      state: 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';
      at: Date;
    }
  | {
      type: 'attestation.reported';
      orgId: string;
      flowName: string;
      trailName: string;
      attestationId: string;
      attestationName: string;
      attestationType: string;
      isCompliant: boolean | null;
      /** Set when the attestation is bound to an artifact. */
      fingerprint: string | null;
      at: Date;
    }
  | {
      /** The stored compliance of these fingerprints changed (in some flow and trail). */
      type: 'artifact.compliance-changed';
      orgId: string;
      fingerprints: string[];
      at: Date;
    };

/** What a committed change means for the process: counted, and the workers woken. */
export type CommitEffect =
  | { type: 'snapshot.created'; cause: string }
  | { type: 'notifications.enqueued'; count: number }
  | { type: 'reevaluation.marked'; count: number }
  | {
      /** A key-expiry warning was written (to the outbox, unless nobody was there to warn). */
      type: 'key-expiry.warned';
      thresholdDays: number;
      recipients: 'configured' | 'admins' | 'none';
    }
  | {
      type: 'report.received';
      result: 'snapshot' | 'unchanged' | 'rejected' | 'error';
      /** Seconds in each step of the report, when it got past the same-bytes check. */
      phases?: PhaseSeconds;
    }
  | { type: 'evaluation.requested' }
  | { type: 'deployment.recorded'; org: string; environment: string; leadTime: number | null }
  /** A snapshot's deployments are to be recorded after its transaction (delivery-deferred.ts). */
  | { type: 'deployments.deferred' };

export type CommitListener = (effects: readonly CommitEffect[]) => void;

export type DomainEventHandler = (db: Db, events: DomainEvent[]) => Promise<void>;

/**
 * Tells, without the database, that a handler has nothing to do for these events (it would
 * write nothing): the bus then skips it. Answers false whenever it cannot know for sure.
 */
export type DomainEventIdleCheck = (events: DomainEvent[]) => boolean;

/** Publish/subscribe within a transaction. */
export class DomainEventBus {
  private readonly handlers: Array<{ handle: DomainEventHandler; idle?: DomainEventIdleCheck }> = [];
  private readonly commitListeners: CommitListener[] = [];

  /** Adds a listener for what committed changes mean (metrics, worker wake-ups). */
  onCommitted(listener: CommitListener): void {
    this.commitListeners.push(listener);
  }

  /** Announces, after its commit, what a change wrote; listeners run at once and must not throw. */
  committed(effects: readonly CommitEffect[]): void {
    if (effects.length === 0) {
      return;
    }
    for (const listener of this.commitListeners) {
      listener(effects);
    }
  }

  /** Adds a handler; it runs for every publish, in the publisher's transaction, unless `idle` says it has nothing to do. */
  subscribe(handler: DomainEventHandler, idle?: DomainEventIdleCheck): void {
    this.handlers.push(idle ? { handle: handler, idle } : { handle: handler });
  }

  /** True when publishing these events would run no handler (nothing would be written). */
  idle(events: DomainEvent[]): boolean {
    return events.length === 0 || this.handlers.every((h) => h.idle?.(events) === true);
  }

  /** Runs every handler in order; a failing handler fails (and rolls back) the publisher. */
  async publish(db: Db, events: DomainEvent[]): Promise<void> {
    if (events.length === 0) {
      return;
    }
    for (const h of this.handlers) {
      if (h.idle?.(events) === true) {
        continue;
      }
      await h.handle(db, events);
    }
  }
}
