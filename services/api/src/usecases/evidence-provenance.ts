/**
 * The provenance port over the evidence tables (usecases/provenance.ts): where running
 * fingerprints came from, and runtime events written back onto the trails that produced them.
 * Both calls are batched: two queries for any number of fingerprints.
 */
import type { ArtifactStatusRecord, SlotStatus } from '../domain/compliance.js';
import { attestationsRepository } from '../storage/repositories/attestations.js';
import { artifactsRepository } from '../storage/repositories/artifacts.js';
import { trailEventsRepository } from '../storage/repositories/trail-events.js';
import type { ProvenanceAttestation, ProvenancePort, ProvenanceRecord } from './provenance.js';
import { artifactUrls } from './artifacts.js';

/** Fingerprints per query: well under PostgreSQL's parameter limit. */
const CHUNK = 5_000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

const reported = (slots: SlotStatus[] | undefined, scope: 'trail' | 'artifact'): ProvenanceAttestation[] =>
  (slots ?? [])
    .filter((s) => s.status === 'COMPLETE')
    .map((s) => ({
      name: s.attestation_name,
      type: s.attestation_type ?? 'unknown',
      isCompliant: s.is_compliant,
      scope,
    }));

/** The failing and missing slots behind an artifact's state, trail-level ones first. */
function nonComplianceReasons(trailSlots: SlotStatus[], artifactSlots: SlotStatus[]): string[] {
  const lines = (slots: SlotStatus[], prefix: string) =>
    slots.flatMap((s) =>
      s.status === 'MISSING'
        ? [`${prefix}attestation '${s.attestation_name}' is missing`]
        : s.is_compliant === false
          ? [`${prefix}attestation '${s.attestation_name}' is non-compliant`]
          : [],
    );
  return [...lines(trailSlots, 'trail '), ...lines(artifactSlots, '')];
}

/** The port, building html_url from the public URL. */
export function evidenceProvenance(publicUrl: string): ProvenancePort {
  return {
    async find(db, orgId, fingerprints) {
      const result = new Map<string, ProvenanceRecord[]>();
      const unique = [...new Set(fingerprints)];
      const decisionIds: string[] = [];
      const pending: Array<{ record: ProvenanceRecord; ids: Map<string, ProvenanceAttestation> }> = [];
      for (const part of chunks(unique)) {
        for (const row of await artifactsRepository.latestPerFlow(db, orgId, part)) {
          const artifact = row.compliance as Partial<ArtifactStatusRecord>;
          const trail = row.trail_compliance as { attestations_statuses?: SlotStatus[] };
          const slots = [
            ...(trail.attestations_statuses ?? []).map((s) => ({ s, scope: 'trail' as const })),
            ...(artifact.attestations_statuses ?? []).map((s) => ({ s, scope: 'artifact' as const })),
          ];
          const attestations = [
            ...reported(trail.attestations_statuses, 'trail'),
            ...reported(artifact.attestations_statuses, 'artifact'),
          ];
          const ids = new Map<string, ProvenanceAttestation>();
          for (const { s } of slots) {
            if (s.status !== 'COMPLETE' || s.attestation_type !== 'decision' || !s.attestation_id) continue;
            const a = attestations.find((x) => x.name === s.attestation_name && x.type === 'decision');
            if (a) {
              ids.set(s.attestation_id, a);
              decisionIds.push(s.attestation_id);
            }
          }
          const record: ProvenanceRecord = {
            fingerprint: row.fingerprint,
            flowName: row.flow_name,
            flowTags: row.flow_tags,
            trailName: row.trail_name,
            artifactId: row.id,
            artifactName: row.filename,
            templateReferenceName: row.template_reference_name,
            gitCommit: row.git_commit,
            gitCommitInfo: row.git_commit_info ?? null,
            commitUrl: row.commit_url,
            buildUrl: row.build_url,
            htmlUrl: artifactUrls({ publicUrl, orgName: row.org_name }, row).html_url,
            reportedAt: row.created_at,
            artifactCompliance: row.state,
            trailCompliance: row.trail_state,
            nonComplianceReasons:
              row.state === 'COMPLIANT'
                ? []
                : nonComplianceReasons(
                    trail.attestations_statuses ?? [],
                    artifact.attestations_statuses ?? [],
                  ),
            attestations,
          };
          pending.push({ record, ids });
          const list = result.get(row.fingerprint);
          if (list) list.push(record);
          else result.set(row.fingerprint, [record]);
        }
      }
      // Decisions name their control: one more query, for those only.
      if (decisionIds.length > 0) {
        for (const part of chunks(decisionIds)) {
          for (const a of await attestationsRepository.findByIds(db, orgId, part)) {
            for (const p of pending) {
              const target = p.ids.get(a.id);
              if (target) target.control = typeof a.payload.control === 'string' ? a.payload.control : null;
            }
          }
        }
      }
      return result;
    },

    async recordRuntimeEvents(db, orgId, events) {
      if (events.length === 0) return;
      const fingerprints = [...new Set(events.map((e) => e.fingerprint))];
      const holders = new Map<
        string,
        Array<{ artifactId: string; trailId: string; templateReferenceName: string | null }>
      >();
      for (const part of chunks(fingerprints)) {
        for (const row of await artifactsRepository.latestPerFlow(db, orgId, part)) {
          const list = holders.get(row.fingerprint) ?? [];
          list.push({
            artifactId: row.id,
            trailId: row.trail_id,
            templateReferenceName: row.template_reference_name,
          });
          holders.set(row.fingerprint, list);
        }
      }
      const rows = events.flatMap((e) =>
        (holders.get(e.fingerprint) ?? [])
          .filter((h) => e.artifactIds === undefined || e.artifactIds.includes(h.artifactId))
          .map((h) => ({
            org_id: orgId,
            trail_id: h.trailId,
            type: e.type,
            fingerprint: e.fingerprint,
            occurred_at: e.at,
            data: JSON.stringify({
              artifact_fingerprint: e.fingerprint,
              environment_name: e.environmentName,
              snapshot_index: e.snapshotIndex,
              replica_number: e.instanceCount,
              template_reference_name: h.templateReferenceName,
            }),
          })),
      );
      for (const part of chunks(rows)) await trailEventsRepository.insert(db, part);
    },
  };
}
