/**
 * The audit log: one entry per write through the API, naming who did it. An entry is written in
 * the write's own transaction when the use case runs one (`transact`), and otherwise right after
 * the write, before its answer is sent. Should that second insert fail (the database went away
 * between the two), the write stays acknowledged: the failure is logged with the request id and
 * counted in `verity_audit_write_failures_total`, which an alert watches.
 */
import type { z } from 'zod';
import { cappedCount, COUNT_CAP } from '../../../../shared/contract/common.js';
import type { AuditLog, AuditLogQuery } from '../../../../shared/contract/people.js';
import type { Db } from '../../storage/database.js';
import {
  auditLogRepository,
  type AuditEntryRow,
  type NewAuditEntry,
} from '../../storage/repositories/audit-log.js';
import { epochSeconds } from '../../time.js';
import type { OrgScope, ScopeAudit } from '../scope/org-scope.js';
import type { Principal } from './principal.js';

/** The one entry of a write request, written once: in its transaction or after it. */
export class PendingAuditEntry implements ScopeAudit {
  private written = false;
  private inFlight = false;

  constructor(private readonly entry: NewAuditEntry) {}

  /** Writes the entry in the write's transaction; `committed()` confirms it once that commits. */
  async writeIn(trx: Db): Promise<void> {
    if (this.written || this.inFlight) {
      return;
    }
    await auditLogRepository.insert(trx, [this.entry]);
    this.inFlight = true;
  }

  /** The transaction holding the entry committed. */
  committed(): void {
    if (this.inFlight) {
      this.written = true;
      this.inFlight = false;
    }
  }

  /** The transaction holding the entry rolled back: it is written again later. */
  rolledBack(): void {
    this.inFlight = false;
  }

  /** Writes the entry (with `write`, which shares statements between requests) if no transaction of the write held it. */
  async ensureWritten(write: (entry: NewAuditEntry) => Promise<void>): Promise<void> {
    if (this.written) {
      return;
    }
    await write(this.entry);
    this.written = true;
  }
}

/** The entry of a write by `principal` in an organization. */
export function auditEntryFor(
  principal: Principal,
  write: {
    orgId: string;
    at: Date;
    action: string;
    resource: string;
    requestId: string | null;
    ip: string | null;
  },
): NewAuditEntry {
  return {
    org_id: write.orgId,
    at: write.at,
    actor_kind: principal.kind,
    actor_name: principal.name,
    actor_email: principal.email ?? null,
    actor_subject: principal.subject ?? null,
    action: write.action,
    resource: write.resource,
    request_id: write.requestId,
    ip: write.ip,
  };
}

/** A page of the organization's audit log, newest first, with the link to the next page. */
export async function readAuditLog(
  scope: OrgScope,
  query: z.infer<typeof AuditLogQuery>,
): Promise<z.infer<typeof AuditLog>> {
  const filter = {
    ...(query.from ? { from: query.from } : {}),
    ...(query.to ? { to: query.to } : {}),
    ...(query.actor ? { actor: query.actor } : {}),
    ...(query.action ? { action: query.action } : {}),
  };
  const [rows, total] = await Promise.all([
    auditLogRepository.list(scope.db, scope.org.id, {
      ...filter,
      offset: (query.page - 1) * query.per_page,
      limit: query.per_page + 1,
    }),
    auditLogRepository.count(scope.db, scope.org.id, filter, COUNT_CAP),
  ]);
  const more = rows.length > query.per_page && query.page < 1000;
  return {
    entries: rows.slice(0, query.per_page).map(presentEntry),
    next: more ? nextPage(scope, query) : null,
    ...cappedCount(total),
  };
}

/** The link to the page after `query`'s, with the same filters. */
function nextPage(scope: OrgScope, query: z.infer<typeof AuditLogQuery>): string {
  const filters: [string, string | undefined][] = [
    ['from', query.from && String(epochSeconds(query.from))],
    ['to', query.to && String(epochSeconds(query.to))],
    ['actor', query.actor],
    ['action', query.action],
    ['page', String(query.page + 1)],
    ['per_page', String(query.per_page)],
  ];
  const params = new URLSearchParams(filters.filter((f): f is [string, string] => f[1] !== undefined));
  return `${scope.publicUrl}/api/v2/audit-log/${encodeURIComponent(scope.org.name)}?${params.toString()}`;
}

function presentEntry(r: AuditEntryRow): z.infer<typeof AuditLog>['entries'][number] {
  return {
    at: epochSeconds(r.at),
    actor: {
      kind: r.actor_kind,
      name: r.actor_name,
      email: r.actor_email,
      ...(r.actor_subject ? { subject: r.actor_subject } : {}),
    },
    action: r.action,
    resource: r.resource,
    request_id: r.request_id,
    ip: r.ip,
  };
}
