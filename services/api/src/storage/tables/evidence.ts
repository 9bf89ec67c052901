/**
 * Table types of the evidence area: flows, trails, artifacts, attestations, trail events,
 * evidence files, custom attestation types, controls and repos (migration 0100).
 * JSON columns are typed as the shapes Verity writes into them.
 */
import type { ColumnType, Generated } from 'kysely';

/** A jsonb column read as `T` and written as a JSON string or value. */
type Json<T> = ColumnType<T, T | string, T | string>;
type NullableJson<T> = ColumnType<T | null, T | string | null, T | string | null>;

export type ComplianceStateValue = 'COMPLIANT' | 'NON-COMPLIANT' | 'INCOMPLETE';

export interface FlowsTable {
  org_id: string;
  id: string;
  name: string;
  description: string;
  visibility: string;
  template_yaml: string | null;
  template: NullableJson<unknown>;
  legacy_template: NullableJson<string[]>;
  tags: Json<Record<string, string>>;
  archived: Generated<boolean>;
  created_by: string;
  created_at: Date;
  last_modified_at: Date;
}

export interface FlowAliasesTable {
  org_id: string;
  name: string;
  flow_id: string;
}

export interface TrailsTable {
  org_id: string;
  id: string;
  flow_id: string;
  name: string;
  description: string;
  template_yaml: string | null;
  template: NullableJson<unknown>;
  git_commit_info: NullableJson<Record<string, unknown>>;
  repo_info: NullableJson<Record<string, unknown>>;
  repo_id: string | null;
  origin_url: string | null;
  external_urls: NullableJson<Record<string, unknown>>;
  user_data: NullableJson<unknown>;
  created_by: string;
  created_at: Date;
  last_modified_at: Date;
  compliance: Json<unknown>;
  compliance_state: ComplianceStateValue;
  evaluated_at: Date;
}

export interface ArtifactsTable {
  org_id: string;
  id: string;
  flow_id: string;
  trail_id: string;
  seq: Generated<number>;
  fingerprint: string;
  filename: string;
  template_reference_name: string | null;
  description: string | null;
  git_commit: string | null;
  git_commit_info: NullableJson<Record<string, unknown>>;
  repo_info: NullableJson<Record<string, unknown>>;
  repo_id: string | null;
  build_url: string | null;
  commit_url: string | null;
  repo_url: string | null;
  commits_list: NullableJson<unknown[]>;
  external_urls: NullableJson<Record<string, unknown>>;
  annotations: NullableJson<Record<string, string>>;
  user_data: NullableJson<unknown>;
  legacy_template: NullableJson<string[]>;
  created_by: string;
  created_at: Date;
  last_modified_at: Date;
  state: ComplianceStateValue;
  compliance: Json<unknown>;
}

export interface AttestationsTable {
  org_id: string;
  id: string;
  flow_id: string;
  trail_id: string;
  seq: Generated<number>;
  name: string;
  type: string;
  kind: string;
  is_compliant: boolean;
  artifact_fingerprint: string | null;
  target_artifacts: NullableJson<string[]>;
  git_commit: string | null;
  payload: Json<Record<string, unknown>>;
  description: string;
  origin_url: string;
  user_data: NullableJson<unknown>;
  annotations: NullableJson<Record<string, string>>;
  external_urls: NullableJson<Record<string, unknown>>;
  git_commit_info: NullableJson<Record<string, unknown>>;
  repo_info: NullableJson<Record<string, unknown>>;
  repo_id: string | null;
  evidence_sha256: string | null;
  evidence_filename: string | null;
  evidence_size: number | null;
  evidence_content_type: string | null;
  created_by: string;
  created_at: Date;
}

export interface TrailEventsTable {
  org_id: string;
  trail_id: string;
  seq: Generated<number>;
  type: string;
  fingerprint: string | null;
  occurred_at: Date;
  data: Json<Record<string, unknown>>;
}

export interface EvidenceFilesTable {
  org_id: string;
  sha256: string;
  size: number;
  /** Null when the bytes are in the object store. */
  content: Buffer | null;
  created_at: Date;
}

export interface CustomAttestationTypesTable {
  org_id: string;
  id: string;
  name: string;
  description: string | null;
  archived: Generated<boolean>;
  created_by: string;
  created_at: Date;
  last_modified_at: Date;
}

export interface CustomAttestationTypeVersionsTable {
  org_id: string;
  type_id: string;
  version: number;
  description: string | null;
  comment: string | null;
  type_schema: NullableJson<Record<string, unknown>>;
  evaluator: NullableJson<{ content_type: string; rules?: string[] }>;
  summary: NullableJson<Array<{ name: string; expression: string }>>;
  created_by: string;
  created_at: Date;
}

export interface ControlEventRecord {
  event: 'created' | 'updated' | 'archived' | 'unarchived';
  version: number;
  created_at: number;
  created_by: string;
}

export interface ControlsTable {
  org_id: string;
  id: string;
  identifier: string;
  archived: Generated<boolean>;
  tags: Json<Record<string, string>>;
  events: Json<ControlEventRecord[]>;
  created_at: Date;
  last_modified_at: Date;
}

export interface ControlVersionsTable {
  org_id: string;
  control_id: string;
  version: number;
  name: string;
  description: string;
  links: Json<Record<string, string>>;
  created_by: string;
  created_at: Date;
}

export interface ReposTable {
  org_id: string;
  id: string;
  name: string;
  /** '' when the client named none, so (org, name, provider) stays unique. */
  provider: string;
  url: string;
  external_id: string | null;
  description: string | null;
  vcs_instance: string | null;
  namespace_path: NullableJson<string[]>;
  additional_info: NullableJson<Record<string, unknown>>;
  tags: Json<Record<string, string>>;
  created_at: Date;
  last_modified_at: Date;
}

/** The verification of an attestation's signed evidence (migration 0410). */
export interface AttestationSignaturesTable {
  org_id: string;
  attestation_id: string;
  /** The artifact the attestation names; null: none. */
  fingerprint: string | null;
  verified: boolean;
  /** 'sigstore-bundle' or 'dsse'. */
  kind: string;
  identity: string | null;
  issuer: string | null;
  reason: string | null;
  verified_at: Date;
}

export interface EvidenceTables {
  flows: FlowsTable;
  flow_aliases: FlowAliasesTable;
  trails: TrailsTable;
  artifacts: ArtifactsTable;
  attestations: AttestationsTable;
  attestation_signatures: AttestationSignaturesTable;
  trail_events: TrailEventsTable;
  evidence_files: EvidenceFilesTable;
  custom_attestation_types: CustomAttestationTypesTable;
  custom_attestation_type_versions: CustomAttestationTypeVersionsTable;
  controls: ControlsTable;
  control_versions: ControlVersionsTable;
  repos: ReposTable;
}
