/**
 * Domain events: what happened to the evidence or the runtime, published inside the transaction
 * that made it happen. Subscribers run in that same transaction, so anything they write (an
 * outbox row, a mark for re-evaluation) commits or rolls back with the change itself.
 */
import type { Db } from '../storage/database.js';

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

export type DomainEventHandler = (db: Db, events: DomainEvent[]) => Promise<void>;

/** Publish/subscribe within a transaction. */
export class DomainEventBus {
  private readonly handlers: DomainEventHandler[] = [];

  /** Adds a handler; it runs for every publish, in the publisher's transaction. */
  subscribe(handler: DomainEventHandler): void {
    this.handlers.push(handler);
  }

  /** Runs every handler in order; a failing handler fails (and rolls back) the publisher. */
  async publish(db: Db, events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    for (const handler of this.handlers) await handler(db, events);
  }
}
