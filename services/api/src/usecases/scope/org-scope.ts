/**
 * The one organization scope every use case runs in: the database (or a transaction), the
 * organization, the clock, the caller, where links point, the event bus and the app's services.
 * Every use case takes it first; none takes a `Db` and an organization apart.
 */
import type { Db } from '../../storage/database.js';
import type { DomainEventBus } from './domain-events.js';
import type { PhaseClock } from './report-phases.js';
import type { Services } from './services.js';

/** An organization as use cases name it: its id for storage, its name for links and messages. */
export interface OrgRef {
  id: string;
  name: string;
}

/** The organization a request is scoped to (the `{org}` path segment), with its settings. */
export interface RequestOrg extends OrgRef {
  experimentalFeaturesEnabled: boolean;
}

export interface OrgScope {
  db: Db;
  org: OrgRef;
  /** Base of html_url/api_url fields. */
  publicUrl: string;
  now: Date;
  /** Who is acting, as `created_by` fields show it. */
  actor: string;
  events: DomainEventBus;
  services: Services;
  /** A write request's audit entry: `transact` writes it in the write's transaction. */
  audit?: ScopeAudit;
  /** An environment report's clock: where its time goes (report-phases.ts). */
  phases?: PhaseClock;
}

/** The audit entry of a write, written once (usecases/access/audit-log.ts). */
export interface ScopeAudit {
  /** Writes the entry in the write's transaction, unless already written. */
  writeIn(trx: Db): Promise<void>;
  committed(): void;
  rolledBack(): void;
}

/** The same scope bound to a transaction. */
export function inTransaction(scope: OrgScope, trx: Db): OrgScope {
  return { ...scope, db: trx };
}

/** What an org scope carries that is the app's, not the request's. */
export type AppScope = Pick<OrgScope, 'db' | 'publicUrl' | 'events' | 'services'>;

/** The scope of one organization for a caller at a time (requests and background workers alike). */
export function scopeFor(app: AppScope, org: OrgRef, now: Date, actor: string): OrgScope {
  return {
    db: app.db,
    publicUrl: app.publicUrl,
    events: app.events,
    services: app.services,
    org,
    now,
    actor,
  };
}

/** Runs `work` in one transaction, with the scope bound to it. */
export async function transact<T>(scope: OrgScope, work: (scope: OrgScope) => Promise<T>): Promise<T> {
  const { audit } = scope;
  if (!audit) {
    return scope.db.transaction().execute((trx) => work(inTransaction(scope, trx)));
  }
  try {
    const result = await scope.db.transaction().execute(async (trx) => {
      const done = await work(inTransaction(scope, trx));
      await audit.writeIn(trx);
      return done;
    });
    audit.committed();
    return result;
  } catch (err) {
    audit.rolledBack();
    throw err;
  }
}
