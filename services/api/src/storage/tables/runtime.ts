/**
 * Table types of the runtime: environments, what runs in them, snapshots, policies, allowlists,
 * actions and the notification outbox (migration 0200_runtime).
 *
 * Snapshot storage grows with changes, never with (snapshots x pods):
 * - `runtime_states` holds one row per fingerprint per change: valid from snapshot `from_index`
 *   to `to_index` (exclusive; null while current). A snapshot N is the set of rows valid at N.
 *   The current states are also what runs now: each carries the count and instance details
 *   reported since it was written, where they moved without making a snapshot (`live_*`);
 *   `runtime_live`, which held them before (migration 0433), is no longer used and has no type;
 * - instance details and verdicts (provenance + policy decisions) are content-addressed in
 *   `runtime_details` and `runtime_verdicts` and shared by every state row that has them.
 */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { z } from 'zod';
import type { ENVIRONMENT_TYPE_VALUES } from '../../../../shared/contract/environments.js';
import type { SnapshotArtifactFlow } from '../../../../shared/contract/snapshots.js';
import type { PolicyDecision } from '../../domain/policy-evaluation.js';
import type { InstanceDetail } from '../../domain/snapshot-diff.js';
import type { NewState, StateChange } from '../../domain/snapshot-plan.js';

export type { InstanceDetail, PolicyDecision, StateChange };

/**
 * One flow record of a running fingerprint's frozen provenance, as snapshots show it (the
 * contract's `flows[]`), with the artifact record it was found in.
 */
export type ProvenanceEntry = z.infer<typeof SnapshotArtifactFlow> & {
  artifact_id: string;
  trail_name: string;
};

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T extends object | null> = JSONColumnType<T, string, string>;

export type EnvironmentType = (typeof ENVIRONMENT_TYPE_VALUES)[number];

export interface EnvironmentsTable {
  org_id: string;
  id: string;
  name: string;
  type: EnvironmentType;
  description: string;
  require_provenance: Generated<boolean>;
  archived: Generated<boolean>;
  tags: Json<Record<string, string>>;
  created_by: string;
  created_at: Timestamp;
  last_modified_at: Timestamp;
  last_reported_at: Timestamp | null;
  /** Time of the latest snapshot. */
  last_changed_at: Timestamp | null;
  /** Number of the latest snapshot; 0 before the first. */
  latest_snapshot: Generated<number>;
  /** Compliance of the latest snapshot: null when unknown (no policies). */
  compliant: boolean | null;
  /** sha256 of the last report's normalised content: an identical report is recognised at once. */
  last_report_hash: string | null;
  /** sha256 of the last report's bytes: the same bytes again skip parsing altogether. */
  last_report_raw_hash: string | null;
}

export interface EnvironmentMembersTable {
  org_id: string;
  logical_id: string;
  physical_id: string;
}

export interface EnvironmentPoliciesTable {
  org_id: string;
  environment_id: string;
  policy_id: string;
  attached_at: Timestamp;
}

export interface RuntimeDetailsTable {
  org_id: string;
  hash: string;
  detail: Json<InstanceDetail[]>;
}

export interface RuntimeVerdictsTable {
  org_id: string;
  hash: string;
  compliant: boolean | null;
  /** Frozen provenance: the flows and trails the fingerprint was found in. */
  provenance: Json<ProvenanceEntry[]>;
  /** Frozen policy decisions (policy_decisions of the snapshot artifact). */
  decisions: Json<PolicyDecision[]>;
  reasons: Json<string[]>;
  allowlisted: boolean;
}

/** A state of a fingerprint, valid from snapshot `from_index` to `to_index` (its fields: NewState). */
export interface RuntimeStatesTable extends NewState {
  org_id: string;
  environment_id: string;
  to_index: number | null;
  /** Set with to_index when the fingerprint stopped running at to_index. */
  exited: Generated<boolean>;
  /** Instances running when it exited (counts may move between snapshots without making one). */
  exit_count: number | null;
}

/**
 * A row of `runtime_states` as stored: a state, and on a current one what was reported since it
 * was written where that differs from it (null otherwise, and once the state is closed).
 */
export interface RuntimeStatesStored extends RuntimeStatesTable {
  live_count: number | null;
  live_detail_hash: string | null;
  live_detail: Json<InstanceDetail[] | null>;
}

export interface AppliedPolicyRef {
  id: string;
  name: string;
  version: number;
}

export interface RuntimeSnapshotsTable {
  org_id: string;
  environment_id: string;
  index: number;
  created_at: Timestamp;
  compliant: boolean | null;
  started: number;
  changed: number;
  exited: number;
  artifact_count: number;
  /** What made it: report, policies, reevaluation, allowlist. */
  cause: string;
  applied_policies: Json<AppliedPolicyRef[]>;
  reported_by: string | null;
  /** When the next snapshot was taken, once retention removed that one (migration 0395). */
  superseded_at: Generated<Date | null>;
}

export interface ReevaluationMarksTable {
  org_id: string;
  id: string;
  environment_id: string;
  marked_at: Timestamp;
  reason: string;
}

export interface PoliciesTable {
  org_id: string;
  id: string;
  name: string;
  description: string;
  type: string;
  created_by: string;
  created_at: Timestamp;
  last_modified_at: Timestamp;
  archived: Generated<boolean>;
  latest_version: number;
}

export interface PolicyVersionsTable {
  org_id: string;
  policy_id: string;
  version: number;
  policy_yaml: string;
  content_hash: string;
  /** The parsed policy (domain/policy.ts ParsedPolicy). */
  parsed: Json<object>;
  comment: string;
  created_by: string;
  created_at: Timestamp;
}

export interface PolicyEventsTable {
  org_id: string;
  id: string;
  policy_id: string;
  type: 'creation' | 'metadata_update' | 'new_version' | 'renaming' | 'archiving';
  at: Timestamp;
  user_name: string;
  data: Json<Record<string, unknown>>;
}

export interface AllowlistEntriesTable {
  org_id: string;
  id: string;
  environment_id: string;
  fingerprint: string;
  artifact_name: string;
  description: string;
  created_by: string;
  created_at: Timestamp;
}

export interface ActionsTable {
  org_id: string;
  id: string;
  number: number;
  name: string;
  type: 'env' | 'flow';
  environments: Json<string[]>;
  flows: Json<string[]>;
  triggers: Json<string[]>;
  created_by: string;
  created_at: Timestamp;
  last_modified_at: Timestamp;
}

export interface ActionTargetsTable {
  org_id: string;
  action_id: string;
  /** Stable identity: kept while the target stays the same across updates of the action. */
  id: string;
  position: number;
  type: 'SLACK' | 'WEBHOOK' | 'EMAIL';
  webhook: string | null;
  payload_version: string | null;
  emails: Json<string[]> | null;
  last_success_at: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_error: string | null;
  /** The target's own webhook signing secret (write-only on the interface). */
  secret: string | null;
}

export interface OutboxTable {
  org_id: string;
  id: string;
  action_id: string;
  target_position: number;
  /** The target (`action_targets.id`) the row is for; null on rows written before targets had one. */
  target_id: string | null;
  /**
   * Where the target lives (migration 0386): an action's targets, a notification config's
   * (`action_id` then holds the notification type, `target_id` the config target), or the
   * derived recipients in `target` itself.
   */
  source: Generated<'action' | 'notification_config' | 'notification_default'>;
  /** The target as it was when the event happened. */
  target: Json<{ type: 'SLACK' | 'WEBHOOK' | 'EMAIL'; webhook?: string | null; emails?: string[] | null }>;
  trigger: string;
  payload: Json<Record<string, unknown>>;
  created_at: Timestamp;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  /** A worker holds the row until then; a worker that dies lets it go when the lease ends. */
  lease_until: Timestamp | null;
  delivered_at: Timestamp | null;
  /** Set when the row gave up after its last attempt. */
  failed_at: Timestamp | null;
  last_error: string | null;
}

/** An organization's webhook signing key, and the previous one while its grace period lasts. */
export interface WebhookSigningKeysTable {
  org_id: string;
  key: string;
  created_at: Timestamp;
  previous_key: string | null;
  rotated_at: Timestamp | null;
}

export interface RuntimeTables {
  environments: EnvironmentsTable;
  environment_members: EnvironmentMembersTable;
  environment_policies: EnvironmentPoliciesTable;
  runtime_details: RuntimeDetailsTable;
  runtime_verdicts: RuntimeVerdictsTable;
  runtime_states: RuntimeStatesStored;
  runtime_snapshots: RuntimeSnapshotsTable;
  reevaluation_marks: ReevaluationMarksTable;
  policies: PoliciesTable;
  policy_versions: PolicyVersionsTable;
  policy_events: PolicyEventsTable;
  allowlist_entries: AllowlistEntriesTable;
  actions: ActionsTable;
  action_targets: ActionTargetsTable;
  outbox: OutboxTable;
  webhook_signing_keys: WebhookSigningKeysTable;
}
