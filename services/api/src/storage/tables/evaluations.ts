/** Table types of server-side policy evaluations and organization feature switches (migration 0388). */
import type { ColumnType, Generated } from 'kysely';

type Json<T> = ColumnType<T, T | string, T | string>;
type NullableJson<T> = ColumnType<T | null, T | string | null, T | string | null>;

/** pending, then running under a lease, then completed or failed. */
export type EvaluationStatus = 'pending' | 'running' | 'completed' | 'failed';

/** What was asked: the trails, the bundle, the params and where a decision goes, as sent. */
export interface EvaluationRequest {
  trails: Array<{ flow: string; trail: string }>;
  files: Record<string, string>;
  params: Record<string, unknown>;
  decision: {
    control: string;
    name: string;
    flow: string;
    trail: string;
    fingerprint?: string | undefined;
  } | null;
}

export interface EvaluationsTable {
  org_id: string;
  id: string;
  status: EvaluationStatus;
  request: Json<EvaluationRequest>;
  /** SHA-256 (hex) of the bundle's canonical text. */
  policy_digest: string;
  /** Who asked, as `created_by` fields show it; the decision is written in their name. */
  requested_by: string;
  requested_at: Date;
  /** While running: when the claim lapses and another worker may take the row. */
  claimed_until: Date | null;
  attempts: Generated<number>;
  finished_at: Date | null;
  result: NullableJson<{ allow: boolean; violations: string[] }>;
  error: NullableJson<{ kind: string; message: string }>;
  /** SHA-256 (hex) of the canonical input the policy saw. */
  input_digest: string | null;
  decision_attestation_id: string | null;
}

export interface OrgFeaturesTable {
  org_id: string;
  feature: string;
  enabled: boolean;
  updated_at: Date;
}

export interface EvaluationTables {
  evaluations: EvaluationsTable;
  org_features: OrgFeaturesTable;
}
