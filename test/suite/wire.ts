/**
 * What the API sends, as test files read it: the contract's response schemas (z.output), plus
 * small shapes for the parts the contract leaves open (policy decisions on a snapshot's artifact).
 */
import type { z } from 'zod';
import type * as contract from '../../services/shared/contract/index.js';

export type Environment = z.output<typeof contract.Environment>;
export type EnvironmentEvent = z.output<typeof contract.EnvironmentEvent>;
export type Snapshot = z.output<typeof contract.Snapshot>;
export type SnapshotArtifact = z.output<typeof contract.SnapshotArtifact>;
export type SnapshotListItem = z.output<typeof contract.SnapshotListItem>;
export type DiffArtifact = z.output<typeof contract.DiffArtifact>;
export type ArtifactRecord = z.output<typeof contract.ArtifactRecord>;
export type HistoryEntry = z.output<typeof contract.HistoryEntry>;
export type Flow = z.output<typeof contract.Flow>;
export type TrailEvent = z.output<typeof contract.TrailEvent>;
export type TrailListItem = z.output<typeof contract.TrailListItem>;
export type AttestationStatus = z.output<typeof contract.AttestationStatus>;
export type Attestation = z.output<typeof contract.Attestation>;
export type AttestationType = z.output<typeof contract.AttestationType>;
export type AttestationTypeVersion = z.output<typeof contract.AttestationTypeVersion>;
export type SearchArtifact = z.output<typeof contract.SearchArtifact>;
export type ExposureArtifact = z.output<typeof contract.ExposureArtifact>;
export type ExposureComponent = z.output<typeof contract.ExposureComponent>;
export type ExposureEnvironment = ExposureArtifact['environments'][number];

/** Where a rule's answer came from. */
export interface RuleResolution {
  type: string;
  context: { flow_name: string; trail_name?: string; artifact_status?: string | null };
}

/** One rule of a policy, as judged for one artifact. */
export interface RuleEvaluation {
  rule: { type: string };
  satisfied: boolean;
  resolutions: RuleResolution[];
}

/** One policy's decision on one artifact (a snapshot's `policy_decisions`, an assert's evaluations). */
export interface PolicyDecision {
  policy_name: string;
  policy_version: number;
  status: string;
  rule_evaluations: RuleEvaluation[];
}

export type AssertFlow = z.output<typeof contract.AssertFlow>;
