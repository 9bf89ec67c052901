/**
 * The one organization scope every use case runs in: the database (or a transaction), the
 * organization, the clock, the caller and where links point.
 */
import type { Db } from '../../storage/database.js';
import type { DomainEventBus } from './domain-events.js';

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
}

/** The same scope bound to a transaction. */
export function inTransaction(scope: OrgScope, trx: Db): OrgScope {
  return { ...scope, db: trx };
}
