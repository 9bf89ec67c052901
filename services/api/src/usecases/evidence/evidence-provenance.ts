/**
 * The provenance port over the evidence tables (usecases/scope/provenance.ts): where running
 * fingerprints came from, and runtime events written back onto the trails that produced them.
 * Both calls are batched: two queries for any number of fingerprints.
 */
import type { SlotStatus } from '../../domain/compliance.js';
import type { Db } from '../../storage/database.js';
import { attestationsRepository } from '../../storage/repositories/attestations.js';
import { attestationSignaturesRepository } from '../../storage/repositories/attestation-signatures.js';
import { artifactsRepository } from '../../storage/repositories/artifacts.js';
import { trailEventsRepository } from '../../storage/repositories/trail-events.js';
import type { ProvenanceAttestation, ProvenancePort, ProvenanceRecord } from '../scope/provenance.js';
import { artifactRowUrls } from './artifact-present.js';
import { pushTo } from '../../group-by.js';

/** Fingerprints per query: well under PostgreSQL's parameter limit. */
const CHUNK = 5_000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) {
    out.push(items.slice(i, i + CHUNK));
  }
  return out;
}

const reported = (slots: SlotStatus[], scope: 'trail' | 'artifact'): ProvenanceAttestation[] =>
  slots
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

type LatestRow = Awaited<ReturnType<typeof artifactsRepository.latestPerFlow>>[number];
type HolderRow = Awaited<ReturnType<typeof artifactsRepository.latestHoldersPerFlow>>[number];

/** A decision attestation's id, and the provenance entry that names its control. */
type Decisions = Map<string, ProvenanceAttestation>;

/** The provenance of one artifact row, and the decisions among its attestations. */
function provenanceOf(publicUrl: string, row: LatestRow): { record: ProvenanceRecord; decisions: Decisions } {
  const trailSlots = row.trail_slots ?? [];
  const artifactSlots = row.artifact_slots ?? [];
  const attestations = [...reported(trailSlots, 'trail'), ...reported(artifactSlots, 'artifact')];
  const decisions: Decisions = new Map();
  for (const s of [...trailSlots, ...artifactSlots]) {
    if (s.status !== 'COMPLETE' || s.attestation_type !== 'decision' || !s.attestation_id) {
      continue;
    }
    const a = attestations.find((x) => x.name === s.attestation_name && x.type === 'decision');
    if (a) {
      decisions.set(s.attestation_id, a);
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
    htmlUrl: artifactRowUrls({ publicUrl, org: { name: row.org_name } }, row).html_url,
    reportedAt: row.created_at,
    artifactCompliance: row.state,
    trailCompliance: row.trail_state,
    nonComplianceReasons: row.state === 'COMPLIANT' ? [] : nonComplianceReasons(trailSlots, artifactSlots),
    attestations,
  };
  return { record, decisions };
}

/** Decisions name their control: one more query, for those only. */
async function nameControls(db: Db, orgId: string, decisions: Decisions[]): Promise<void> {
  const ids = decisions.flatMap((d) => [...d.keys()]);
  for (const part of chunks(ids)) {
    for (const a of await attestationsRepository.findByIds(db, orgId, part)) {
      for (const d of decisions) {
        const target = d.get(a.id);
        if (target) {
          target.control = typeof a.payload.control === 'string' ? a.payload.control : null;
        }
      }
    }
  }
}

/**
 * The verified signatures of the fingerprints found (one more query, on a partial index that
 * holds verified signatures only), shared by every record of a fingerprint.
 */
async function attachSignatures(
  db: Db,
  orgId: string,
  result: Map<string, ProvenanceRecord[]>,
): Promise<void> {
  const bySha = new Map<string, NonNullable<ProvenanceRecord['signatures']>>();
  for (const part of chunks([...result.keys()])) {
    for (const s of await attestationSignaturesRepository.verifiedFor(db, orgId, part)) {
      if (s.fingerprint !== null) {
        pushTo(bySha, s.fingerprint, { kind: s.kind, identity: s.identity, issuer: s.issuer });
      }
    }
  }
  for (const [fingerprint, records] of result) {
    const signatures = bySha.get(fingerprint) ?? [];
    for (const record of records) {
      record.signatures = signatures;
    }
  }
}

/** Runtime events written onto the trail of every artifact (one per flow) that holds the fingerprint. */
async function recordRuntimeEvents(
  db: Db,
  orgId: string,
  events: Parameters<ProvenancePort['recordRuntimeEvents']>[2],
): Promise<void> {
  if (events.length === 0) {
    return;
  }
  const fingerprints = [...new Set(events.map((e) => e.fingerprint))];
  const holders = new Map<string, HolderRow[]>();
  for (const part of chunks(fingerprints)) {
    for (const row of await artifactsRepository.latestHoldersPerFlow(db, orgId, part)) {
      pushTo(holders, row.fingerprint, row);
    }
  }
  const rows = events.flatMap((e) =>
    (holders.get(e.fingerprint) ?? [])
      .filter((h) => e.artifactIds === undefined || e.artifactIds.includes(h.id))
      .map((h) => ({
        org_id: orgId,
        trail_id: h.trail_id,
        type: e.type,
        fingerprint: e.fingerprint,
        occurred_at: e.at,
        data: JSON.stringify({
          artifact_fingerprint: e.fingerprint,
          environment_name: e.environmentName,
          snapshot_index: e.snapshotIndex,
          replica_number: e.instanceCount,
          template_reference_name: h.template_reference_name,
        }),
      })),
  );
  for (const part of chunks(rows)) {
    await trailEventsRepository.insert(db, part);
  }
}

/** The port, building html_url from the public URL. */
export function evidenceProvenance(publicUrl: string): ProvenancePort {
  return {
    async find(db, orgId, fingerprints) {
      const result = new Map<string, ProvenanceRecord[]>();
      const decisions: Decisions[] = [];
      for (const part of chunks([...new Set(fingerprints)])) {
        for (const row of await artifactsRepository.latestPerFlow(db, orgId, part)) {
          const found = provenanceOf(publicUrl, row);
          decisions.push(found.decisions);
          pushTo(result, row.fingerprint, found.record);
        }
      }
      await nameControls(db, orgId, decisions);
      await attachSignatures(db, orgId, result);
      return result;
    },
    recordRuntimeEvents,
  };
}
