/** What every evidence use case needs: the database (or transaction), the org, time and the caller. */
import type { Db } from '../storage/database.js';
import type { DomainEventBus } from './domain-events.js';

export interface EvidenceContext {
  db: Db;
  orgId: string;
  orgName: string;
  /** Base of html_url/api_url fields. */
  publicUrl: string;
  now: Date;
  /** Who is acting, as `created_by` fields show it. */
  actor: string;
  events: DomainEventBus;
}

/** The same context bound to a transaction. */
export function inTransaction(ctx: EvidenceContext, trx: Db): EvidenceContext {
  return { ...ctx, db: trx };
}

/** URL-escapes one path segment. */
export const seg = (s: string): string => encodeURIComponent(s);
