/**
 * Snapshots (reference/cli-requests.md 3.6, responses/live_cyber_dojo_aws_prod.json): one
 * snapshot, the list, and env-diff. The CLI type-asserts several fields, so they are always
 * present with their types.
 */
import { z } from 'zod';
import { EpochSeconds } from './common.js';

/** `{type, was, now}`: how the artifact changed in this snapshot. */
export const SnapshotAnnotation = z
  .object({ type: z.string(), was: z.number().int(), now: z.number().int() })
  .meta({ id: 'SnapshotAnnotation' });

/** One flow and trail a running fingerprint was reported in. */
export const SnapshotArtifactFlow = z
  .looseObject({
    flow_name: z.string(),
    trail_name: z.string().nullable(),
    template_reference_name: z.string().nullable(),
    git_commit: z.string(),
    commit_url: z.string(),
    html_url: z.string(),
    flow_html_url: z.string(),
    artifact_compliance_in_flow: z.boolean().nullable(),
  })
  .meta({ id: 'SnapshotArtifactFlow' });

/** One fingerprint in a snapshot. */
export const SnapshotArtifact = z
  .looseObject({
    name: z.string(),
    fingerprint: z.string(),
    compliant: z.boolean().nullable(),
    deployments: z.array(z.number()),
    policy_decisions: z.array(z.looseObject({})),
    reasons_for_incompliance: z.array(z.string()),
    creationTimestamp: z.array(z.number()),
    pods: z.record(z.string(), z.looseObject({})).nullable(),
    annotation: SnapshotAnnotation,
    flow_name: z.string(),
    git_commit: z.string(),
    commit_url: z.string(),
    html_url: z.string().nullable(),
    flows: z.array(SnapshotArtifactFlow),
    allowlisted: z.boolean(),
  })
  .meta({ id: 'SnapshotArtifact' });

/** `GET /snapshots/{org}/{env}/{expression}`. */
export const Snapshot = z
  .object({
    /** Index of the record's latest entry in the organization's transparency log; null until sequenced. */
    log_index: z.number().int().nullable().optional(),
    index: z.number().int(),
    is_latest: z.boolean(),
    next_snapshot_timestamp: EpochSeconds.nullable(),
    artifact_compliance_count: z.record(z.string(), z.number().int()),
    timestamp: EpochSeconds,
    type: z.string(),
    /** Compliance as a boolean (clients assert it): false when unknown; see compliance_state. */
    compliant: z.boolean(),
    /** COMPLIANT, NON-COMPLIANT or UNKNOWN (no policies attached). */
    compliance_state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'UNKNOWN']),
    html_url: z.string(),
    user_name: z.string().nullable(),
    summary: z.object({ started: z.number().int(), changed: z.number().int(), exited: z.number().int() }),
    artifacts: z.array(SnapshotArtifact),
    applied_policies: z.array(z.looseObject({})),
  })
  .meta({ id: 'Snapshot' });

/** One item of `GET /snapshots/{org}/{env}`; `to` is 0 for the current snapshot. */
export const SnapshotListItem = z
  .object({
    index: z.number().int(),
    from: EpochSeconds,
    to: EpochSeconds,
    duration: z.number(),
    compliant: z.boolean(),
    /** As on the snapshot itself, so a timeline needs no request per snapshot. */
    compliance_state: z.enum(['COMPLIANT', 'NON-COMPLIANT', 'UNKNOWN']),
    summary: z.object({ started: z.number().int(), changed: z.number().int(), exited: z.number().int() }),
  })
  .meta({ id: 'SnapshotListItem' });

/** Query of the snapshot list. */
export const SnapshotListQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(15),
  interval: z.string().max(100).optional(),
  reverse: z.enum(['true', 'false', 'True', 'False']).optional(),
});

/** One fingerprint in an env-diff. */
export const DiffArtifact = z
  .object({
    fingerprint: z.string(),
    name: z.string(),
    flow: z.string(),
    commit_url: z.string(),
    most_recent_timestamp: z.number().int(),
    instance_count: z.number().int(),
    s1_instance_count: z.number().int(),
    s2_instance_count: z.number().int(),
    pods: z.array(z.string()),
  })
  .meta({ id: 'DiffArtifact' });

const DiffItem = z.object({ snapshot_id: z.string().nullable(), artifacts: z.array(DiffArtifact) });

/** `GET /env-diff/{org}`: only in S1, only in S2, in both with another count, in both unchanged. */
export const EnvironmentDiff = z
  .object({ snappish1: DiffItem, snappish2: DiffItem, changed: DiffItem, 'not-changed': DiffItem })
  .meta({ id: 'EnvironmentDiff' });
