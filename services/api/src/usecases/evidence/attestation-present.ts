/** The wire form of attestations. */
import type { Attestation } from '../../../../shared/contract/attestations.js';
import { epochSeconds } from '../../time.js';
import type { AttestationRowWithNames } from '../../storage/repositories/attestations.js';
import { evidenceDownloadUrl, trailHtmlUrl, type LinkBase } from '../scope/links.js';

/** Where an attestation row's evidence file is downloaded. */
export function attestationDownloadUrl(
  base: LinkBase,
  a: Pick<AttestationRowWithNames, 'flow_name' | 'trail_name' | 'id'>,
): string {
  return evidenceDownloadUrl(base, { flow: a.flow_name, trail: a.trail_name, id: a.id });
}

const PAYLOAD_FIELDS = [
  'junit_results',
  'snyk_results',
  'jira_results',
  'pull_requests',
  'git_provider',
  'sonar_results',
  'type_name',
  'attestation_data',
  'control',
  'control_version',
  'reason',
  'new_compliance_status',
  'original_attestation_type',
  'evaluation',
  'sbom_index',
] as const;

/** An attestation as every read shows it. */
export function presentAttestation(base: LinkBase, a: AttestationRowWithNames): Attestation {
  const payload: Record<string, unknown> = {};
  for (const f of PAYLOAD_FIELDS) {
    if (a.payload[f] !== undefined) {
      payload[f] = a.payload[f];
    }
  }
  return {
    attestation_id: a.id,
    attestation_name: a.name,
    attestation_type: a.type,
    is_compliant: a.is_compliant,
    flow_name: a.flow_name,
    trail_name: a.trail_name,
    artifact_fingerprint: a.artifact_fingerprint,
    target_artifacts: a.target_artifacts,
    created_at: epochSeconds(a.created_at),
    reported_by: a.created_by,
    description: a.description,
    origin_url: a.origin_url,
    html_url: trailHtmlUrl(base, a.flow_name, a.trail_name, a.id),
    has_audit_package: true,
    schema_version: 1,
    user_data: a.user_data ?? {},
    git_commit_info: (a.git_commit_info as Attestation['git_commit_info']) ?? null,
    repo_info: (a.repo_info as Attestation['repo_info']) ?? null,
    external_urls: a.external_urls,
    annotations: a.annotations,
    evidence_file:
      a.evidence_sha256 !== null
        ? {
            filename: a.evidence_filename ?? 'evidence',
            sha256: a.evidence_sha256,
            size: Number(a.evidence_size ?? 0),
            content_type: a.evidence_content_type ?? 'application/octet-stream',
            download_url: attestationDownloadUrl(base, a),
          }
        : null,
    ...payload,
    ...(a.signature_kind !== null && a.signature_kind !== undefined
      ? {
          signature: {
            verified: a.signature_verified === true,
            kind: a.signature_kind as NonNullable<Attestation['signature']>['kind'],
            identity: a.signature_identity,
            issuer: a.signature_issuer,
            reason: a.signature_reason,
          },
        }
      : {}),
  };
}
