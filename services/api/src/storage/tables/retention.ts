/**
 * Table types of retention (migration 0395_retention): an organization's retention classes, its
 * legal holds, and the disposition record of every removal the retention job made.
 */
import type { ColumnType, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

/** Days each kind of record is kept; an absent kind is kept forever. */
export interface RetentionPeriods {
  trails_days?: number;
  evidence_files_days?: number;
  snapshots_days?: number;
  audit_log_days?: number;
}

/** The document `PUT /retention/{org}` stores. */
export interface RetentionDocument {
  default: RetentionPeriods;
  flows: Record<string, RetentionPeriods>;
  environments: Record<string, RetentionPeriods>;
}

export interface RetentionSettingsTable {
  org_id: string;
  settings: Json<RetentionDocument>;
  updated_by: string;
  updated_at: Timestamp;
}

export interface LegalHoldsTable {
  org_id: string;
  name: string;
  reason: string;
  /** Flow names the hold covers; with `environments` empty too: the whole organization. */
  flows: Json<string[]>;
  environments: Json<string[]>;
  from_at: Timestamp | null;
  to_at: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
}

/** What a removal followed: the kind of period, its days, and where it was set. */
export interface DispositionRule {
  period: keyof RetentionPeriods;
  days: number;
  /** `default`, `flow` or `environment`; `operator` when the server's minimum decided. */
  scope: 'default' | 'flow' | 'environment';
  name: string | null;
}

export interface DispositionsTable {
  org_id: string;
  id: string;
  /** trails, evidence_files, snapshots or audit_log. */
  kind: 'trails' | 'evidence_files' | 'snapshots' | 'audit_log';
  count: number;
  /** What went: trail ids and names, snapshot numbers, audit entry ids. */
  items: Json<unknown[]>;
  /** The sha256 of each evidence file removed. */
  digests: Json<string[]>;
  rule: Json<DispositionRule>;
  as_of: Timestamp;
  removed_at: Timestamp;
  /** Who ran the job: `retention` (the background job) or `admin-cli`. */
  run_by: string;
}

export interface RetentionTables {
  retention_settings: RetentionSettingsTable;
  legal_holds: LegalHoldsTable;
  dispositions: DispositionsTable;
}
