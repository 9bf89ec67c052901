/**
 * Table types of delivery insight (migration 0387_deployments): deployments, the stretches an
 * environment spent non-compliant, and the lead times of artifact records per environment.
 */
import type { ColumnType, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

/** An artifact a deployment replaced. */
export interface ReplacedArtifact {
  name: string;
  fingerprint: string;
  git_commit: string | null;
}

/** A commit a deployment brought. */
export interface DeployedCommit {
  sha1: string;
  /** Seconds since the epoch (the commit's author time); null when CI sent none. */
  timestamp: number | null;
  author: string | null;
  /** The first line of the message, at most 200 characters. */
  message: string | null;
}

export interface DeploymentsTable {
  org_id: string;
  id: string;
  environment_id: string;
  snapshot_index: number;
  started_at: Timestamp;
  fingerprint: string;
  artifact_name: string;
  artifact_id: string | null;
  flow_name: string | null;
  trail_name: string | null;
  git_commit: string | null;
  html_url: string | null;
  repo_name: string | null;
  replaced: Json<ReplacedArtifact[]>;
  rollback: boolean;
  commit_lead_time: number | null;
  build_lead_time: number | null;
  change_lead_time: number | null;
  commits: Json<DeployedCommit[]>;
  compliant: boolean | null;
  rolled_back_at: Timestamp | null;
  broke_compliance_at: Timestamp | null;
}

export interface ComplianceIncidentsTable {
  org_id: string;
  environment_id: string;
  started_index: number;
  started_at: Timestamp;
  restored_index: number | null;
  restored_at: Timestamp | null;
}

export interface ArtifactLeadTimesTable {
  org_id: string;
  artifact_id: string;
  environment_id: string;
  snapshot_index: number;
  first_ran_at: Timestamp;
  commit_lead_time: number | null;
  build_lead_time: number;
}

/** One row once the deployments of the history before they were recorded are (migration 0425). */
export interface DeploymentsBackfillTable {
  id: number;
  finished_at: Timestamp;
}

/** A snapshot whose deployments are still to be recorded (migration 0432). */
export interface DeploymentsDeferredTable {
  org_id: string;
  environment_id: string;
  snapshot_index: number;
  compliant_before: boolean | null;
  created_at: Timestamp;
}

export interface InsightTables {
  deployments: DeploymentsTable;
  compliance_incidents: ComplianceIncidentsTable;
  artifact_lead_times: ArtifactLeadTimesTable;
  deployments_backfill: DeploymentsBackfillTable;
  deployments_deferred: DeploymentsDeferredTable;
}
