/**
 * The wire types the console reads, inferred from the API's zod contract. Type-only imports:
 * nothing of the contract (or zod) reaches the bundle.
 */
import type { z } from 'zod';
import type * as C from '../../../shared/contract/index.js';

export type Environment = z.infer<typeof C.Environment>;
export type EnvironmentPage = z.infer<typeof C.EnvironmentPage>;
export type EnvironmentEvent = z.infer<typeof C.EnvironmentEvent>;
export type Snapshot = z.infer<typeof C.Snapshot>;
export type SnapshotArtifact = z.infer<typeof C.SnapshotArtifact>;
export type SnapshotListItem = z.infer<typeof C.SnapshotListItem>;
export type EnvironmentDiff = z.infer<typeof C.EnvironmentDiff>;
export type Policy = z.infer<typeof C.Policy>;
export type Flow = z.infer<typeof C.Flow>;
export type FlowPage = z.infer<typeof C.FlowPage>;
export type Trail = z.infer<typeof C.Trail>;
export type TrailPage = z.infer<typeof C.TrailPage>;
export type TrailListItem = z.infer<typeof C.TrailListItem>;
export type AttestationStatus = z.infer<typeof C.AttestationStatus>;
export type ArtifactStatus = z.infer<typeof C.ArtifactStatus>;
export type Attestation = z.infer<typeof C.Attestation>;
export type AttestationCursorPage = z.infer<typeof C.AttestationCursorPage>;
export type ArtifactRecord = z.infer<typeof C.ArtifactRecord>;
export type SearchResult = z.infer<typeof C.SearchResult>;
export type NameSearchResult = z.infer<typeof C.NameSearchResult>;
export type Organization = z.infer<typeof C.Organization>;
export type DefaultOrg = z.infer<typeof C.DefaultOrg>;
export type ErrorBody = z.infer<typeof C.ErrorBody>;
export type JUnitResult = z.infer<typeof C.JUnitResult>;
export type ScanResults = z.infer<typeof C.ScanResults>;
export type TicketItem = z.infer<typeof C.TicketItem>;
export type PullRequest = z.infer<typeof C.PullRequest>;
export type QualityResults = z.infer<typeof C.QualityResults>;
export type Action = z.infer<typeof C.Action>;
export type ExposureResult = z.infer<typeof C.ExposureResult>;
export type ExposureArtifact = z.infer<typeof C.ExposureArtifact>;
export type ExposureInterval = z.infer<typeof C.ExposureInterval>;
export type Me = z.infer<typeof C.Me>;
export type Member = z.infer<typeof C.Member>;
export type AuditLog = z.infer<typeof C.AuditLog>;
export type AuditEntry = z.infer<typeof C.AuditEntry>;
export type ServiceAccount = z.infer<typeof C.ServiceAccount>;
export type ApiKeyInfo = z.infer<typeof C.ApiKeyInfo>;
export type ApiKeyCreated = z.infer<typeof C.ApiKeyCreated>;
export type OidcTrust = z.infer<typeof C.OidcTrust>;
export type PolicyPreview = z.infer<typeof C.PolicyPreview>;
export type PolicyPreviewInput = z.input<typeof C.PolicyPreviewInput>;
export type Deployment = z.infer<typeof C.Deployment>;
export type DeploymentPage = z.infer<typeof C.DeploymentPage>;
export type DoraAnswer = z.infer<typeof C.DoraAnswer>;
export type DoraFigures = z.infer<typeof C.DoraFigures>;
export type RepoDelivery = z.infer<typeof C.RepoDelivery>;
export type EnvironmentNow = z.infer<typeof C.EnvironmentNow>;
export type EnvironmentsNowPage = z.infer<typeof C.EnvironmentsNowPage>;
export type RepoPage = z.infer<typeof C.RepoPage>;
