/**
 * Recording attestations of every kind, and overrides (semantics.md section 4): decide the
 * attestation's own compliance by its type, bind it to the trail or an artifact, store it and
 * its evidence file, re-evaluate the trail and publish what happened, all in one transaction.
 */
import { BadRequestError, NotFoundError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Db } from '../../storage/database.js';
import type { FlowRow } from '../../storage/repositories/flows.js';
import { componentsRepository } from '../../storage/repositories/components.js';
import { attestationSignaturesRepository } from '../../storage/repositories/attestation-signatures.js';
import type { SignatureResult } from '../../workers/signature-verifier.js';
import { toJson } from '../../storage/repositories/json.js';
import type { TrailRow } from '../../storage/repositories/trails.js';
import {
  trailStore,
  type EvaluationInputs,
  type StoredAttestation,
} from '../../storage/trail-store/index.js';
import type { AttestationBatcher, PlannedAttestation } from '../../storage/batching/attestation-batcher.js';
import { decide, type AttestationData, type AttestationInput, type Decided } from './attestation-verdict.js';
import type { DomainEvent } from '../scope/domain-events.js';
import { evaluateInputs, type EvaluationWrites } from '../../domain/trail-evaluation.js';
import { contentTypeFor } from './evidence-store.js';
import type { EvidenceBlob, EvidenceStore } from '../scope/services.js';
import { ensureFlow } from './flows.js';
import { inTransaction, type OrgScope } from '../scope/org-scope.js';
import { captureRepo, knownRepo } from './repos.js';
import { mayBeSbomFile, readSbom, sbomSourceOf } from './sbom-evidence.js';
import { ensureTrail } from './trails.js';

export type { AttestationInput } from './attestation-verdict.js';

/** An uploaded evidence file: its bytes (in memory or a temporary file) and their first bytes. */
export interface EvidenceUpload {
  filename: string;
  blob: EvidenceBlob;
  sha256: string;
  mimetype: string | undefined;
  /** The first bytes (a few KiB): whether the file may be an SBOM is told from them. */
  head: Buffer;
}

/** How many times an attestation is tried without a lock before it takes the trail's lock. */
const UNLOCKED_ATTEMPTS = 2;

/** What one attestation records, decided before any trail is read. */
interface Recording {
  id: string;
  input: AttestationInput;
  decided: Decided;
  targets: string[] | null;
  repoId: string | null;
  evidence?: EvidenceUpload | null;
  /** The verification of the evidence file when it is signed evidence. */
  signature?: SignatureResult | null;
}

interface Where {
  flowName: string;
  trailName: string;
}

/**
 * Records one attestation (or override) on a trail; creates the flow and trail when missing;
 * returns the new attestation's id. The common case (flow and trail exist, no SBOM, the repo
 * stored as named, no artifact changes state, no subscriber has anything to do) takes two statements
 * (and one more to store an evidence file),
 * shared with the attestations that arrive alongside (attestation-batcher.ts): one read, then one
 * write that succeeds only if nothing else was written to the trail meanwhile.
 * Everything else, and an attestation that keeps meeting concurrent writes, runs in a transaction
 * holding the trail's lock. Both store their rows with the same write (`trailStore.insertAttestationBatch`):
 * the attestation, its trail event, the trail's evaluation and facts, its artifacts' states and the
 * re-evaluation marks of the environments where a fingerprint whose compliance changed runs.
 */
export async function recordAttestation(
  scope: OrgScope,
  where: Where,
  input: AttestationInput,
  evidence: EvidenceUpload | null,
): Promise<string> {
  const { services } = scope;
  const data: AttestationData = input.data;
  const targets = data.target_artifacts && data.target_artifacts.length > 0 ? data.target_artifacts : null;
  if (targets && !data.artifact_fingerprint && !data.git_commit_info) {
    throw new BadRequestError(
      `Attestation '${data.attestation_name}' for artifact '${targets.join(',')}' requires at least one of: artifact_fingerprint or git_commit_info.`,
      { 'data_json.git_commit_info': 'required when target_artifacts is given without artifact_fingerprint' },
    );
  }
  checkSbomFile(input, evidence);
  const decided = await decide(scope, input, services);
  // Signed evidence (a Sigstore bundle, a DSSE envelope) is verified before anything is stored,
  // in a worker thread, and its verification stored with the attestation.
  // Only a file that may be a bundle, an envelope or an SBOM (a JSON object, a gzip archive) is
  // read into memory; any other file stays where the upload put it.
  const inMemory =
    evidence && mayBeSbomFile(evidence.head)
      ? { filename: evidence.filename, data: await evidence.blob.read() }
      : null;
  const signature =
    inMemory && services.signatures
      ? await services.signatures.verify(scope.org.id, inMemory, data.artifact_fingerprint ?? null)
      : null;
  const recording: Recording = { id: newId(), input, decided, targets, repoId: null, signature };
  // An SBOM (CycloneDX, SPDX) is indexed in the attestation's own transaction, under the trail's
  // lock like every attestation with evidence, so an acknowledged attestation is already exposed.
  const sbomSource = sbomSourceOf(
    input.kind === 'custom' ? input.data.attestation_data : undefined,
    inMemory,
  );
  // A repo stored as this attestation names it needs no write: the attestation can go with the batch.
  // A signed attestation stores its verification beside it: under the lock too.
  const batchable = !sbomSource && !signature && !scope.db.isTransaction;
  const repoId =
    batchable && data.repo_info
      ? await knownRepo(scope.db, services.catalog, scope.org.id, data.repo_info)
      : undefined;
  let fileStored = false;
  if (evidence && !scope.db.isTransaction) {
    // The file first, on its own, before any trail is locked (an object store may take a while):
    // the store is content-addressed, so storing it again (a retry) changes nothing, and a file
    // whose attestation then fails is collected later (`collectOrphanedEvidence`), but not
    // within the hour. A store that cannot take it is a 503, and nothing is recorded.
    await putEvidence(scope, services.store, evidence);
    fileStored = true;
  }
  if (batchable && (!data.repo_info || repoId !== undefined)) {
    const batched = { ...recording, evidence, repoId: repoId ?? null };
    if (await recordUnlocked(scope, where, batched, services.batcher)) {
      return recording.id;
    }
  }
  // Read before the lock is taken: parsing a large document holds nobody up.
  const sbom = sbomSource ? await readSbom(sbomSource, services.sbomLimits) : undefined;
  const recorded = sbom ? { ...decided, payload: { ...decided.payload, sbom_index: sbom.index } } : decided;
  // Held back meanwhile, the batcher's attestations to this trail do not meet this write.
  const marks = await services.batcher.exclusive({ orgId: scope.org.id, ...where }, () =>
    scope.db.transaction().execute(async (trx: Db) => {
      const locked = { ...recording, decided: recorded, evidence, repoId: repoId ?? null };
      const store = fileStored ? null : services.store;
      return recordLocked(inTransaction(scope, trx), where, locked, store, sbom?.components);
    }),
  );
  if (marks > 0) {
    scope.events.committed([{ type: 'reevaluation.marked', count: marks }]);
  }
  if (data.repo_info && repoId === undefined) {
    // The repo may have been written: what this replica remembers of it is stale now, before
    // the change notification comes back.
    services.catalog.bump(scope.org.id);
  }
  return recording.id;
}

/**
 * Tries to store the attestation through the batcher, without the trail's lock; false when it
 * must take the lock (a subscriber has work, or writes keep meeting).
 */
async function recordUnlocked(
  scope: OrgScope,
  where: Where,
  recording: Recording,
  batcher: AttestationBatcher,
): Promise<boolean> {
  const plan = (read: Parameters<Parameters<AttestationBatcher['submit']>[0]['plan']>[0]) => {
    const planned = planAttestation(scope, read.flow, read.trail, read.inputs, recording);
    // Publishing must have nothing to do (`idle`): the batch write publishes nothing.
    if (!scope.events.idle(planned.events)) {
      return undefined;
    }
    const { artifacts, changedFingerprints } = planned.writes;
    return { ...planned.rows, artifactStates: artifacts, changedFingerprints };
  };
  for (let attempt = 0; attempt < UNLOCKED_ATTEMPTS; attempt++) {
    const outcome = await batcher.submit({ orgId: scope.org.id, ...where, plan });
    if (outcome === 'stored') {
      return true;
    }
    if (outcome !== 'conflict') {
      return false;
    }
  }
  return false;
}

/**
 * Stores the attestation under the trail's lock (`scope` is in a transaction), and its file in
 * `store` (null: stored already); returns how many re-evaluation marks it made.
 */
async function recordLocked(
  scope: OrgScope,
  where: Where,
  recording: Recording,
  store: EvidenceStore | null,
  components: Parameters<typeof componentsRepository.insert>[2] | undefined,
): Promise<number> {
  const { db: trx, org } = scope;
  const { evidence, input } = recording;
  const found = await trailStore.lockWithFlow(trx, org.id, where.flowName, where.trailName);
  const flow = found?.flow ?? (await ensureFlow(scope, where.flowName));
  const trail = found?.trail ?? (await ensureTrail(scope, flow, where.trailName));
  // Read after the lock: every earlier write to the trail has committed.
  const inputs = await trailStore.evaluationInputs(trx, org.id, trail.id);
  // Checked (404) before anything is written.
  attestationTarget(scope, flow, trail, inputs, input.data, recording.targets);
  if (evidence && store) {
    await putEvidence(scope, store, evidence);
  }
  // A repo known to hold this repo_info needs neither a read nor a write.
  const repoId = recording.repoId ?? (await captureRepo(trx, org.id, input.data.repo_info, scope.now));
  const planned = planAttestation(scope, flow, trail, inputs, { ...recording, repoId });
  const { row, event, trail: evaluated, facts } = planned.rows;
  const { artifacts, changedFingerprints } = planned.writes;
  // The batcher's write, on the lock instead of row versions.
  const stored = await trailStore.insertAttestationBatch(trx, [
    {
      orgId: org.id,
      trailId: trail.id,
      ifUnchanged: null,
      trail: evaluated,
      facts,
      attestations: [{ row, event }],
      artifacts: artifacts.map((a) => ({ ...a, version: null })),
      marks: { fingerprints: signedFingerprints(changedFingerprints, recording), at: scope.now },
    },
  ]);
  if (recording.signature) {
    const { verified, kind, identity, issuer, reason } = recording.signature;
    await attestationSignaturesRepository.put(trx, {
      org_id: org.id,
      attestation_id: recording.id,
      fingerprint: input.data.artifact_fingerprint ?? null,
      verified,
      kind,
      identity,
      issuer,
      reason,
      verified_at: scope.now,
    });
  }
  if (components) {
    const at = { orgId: org.id, attestationId: recording.id, trailId: trail.id };
    await componentsRepository.insert(
      trx,
      { ...at, fingerprint: input.data.artifact_fingerprint ?? null },
      components,
    );
  }
  await scope.events.publish(trx, planned.events);
  return stored.marks;
}

/**
 * The fingerprints whose environments are re-evaluated: those whose compliance changed, and the
 * artifact of a signature that verified (a policy may require it).
 */
function signedFingerprints(changed: string[], recording: Recording): string[] {
  const fingerprint = recording.input.data.artifact_fingerprint;
  if (!recording.signature?.verified || !fingerprint || changed.includes(fingerprint)) {
    return changed;
  }
  return [...changed, fingerprint];
}

/**
 * An `sbom` system attestation carries its SBOM as the attached file, whose SHA-256 is the
 * summary's `original_fingerprint`; the annotations the CLI adds (`sbom_format`, `sbom_sha256`)
 * must agree with the summary.
 */
function checkSbomFile(input: AttestationInput, evidence: EvidenceUpload | null): void {
  if (input.kind !== 'system' || input.data.type_name !== 'sbom') {
    return;
  }
  const summary = input.data.attestation_data;
  if (!evidence) {
    throw new BadRequestError('An sbom attestation needs the SBOM file as its attachment_file', {
      attachment_file: 'Field required',
    });
  }
  if (evidence.sha256 !== summary.original_fingerprint) {
    const message = `The attached SBOM's SHA-256 is ${evidence.sha256}, not the original_fingerprint ${summary.original_fingerprint}`;
    throw new BadRequestError(message, { 'data_json.attestation_data.original_fingerprint': message });
  }
  const annotations = input.data.annotations ?? {};
  const expected: Record<string, string> = {
    sbom_format: summary.format,
    sbom_sha256: summary.original_fingerprint,
  };
  for (const [key, value] of Object.entries(expected)) {
    if (Object.hasOwn(annotations, key) && annotations[key] !== value) {
      const message = `Annotation '${key}' is '${annotations[key]}', but the SBOM summary says '${value}'`;
      throw new BadRequestError(message, { [`data_json.annotations.${key}`]: message });
    }
  }
}

function putEvidence(scope: OrgScope, store: EvidenceStore, evidence: EvidenceUpload): Promise<void> {
  return store.put(scope.db, scope.org.id, evidence.blob, scope.now);
}

/** The artifact an attestation names (404 when its fingerprint is not in the trail), else its first target. */
function attestationTarget(
  scope: OrgScope,
  flow: FlowRow,
  trail: TrailRow,
  inputs: EvaluationInputs,
  data: AttestationData,
  targets: string[] | null,
): string | null {
  if (!data.artifact_fingerprint) {
    return targets?.[0] ?? null;
  }
  const artifact = inputs.artifacts.find((a) => a.fingerprint === data.artifact_fingerprint);
  if (!artifact) {
    throw new NotFoundError(
      `Artifact with fingerprint ${data.artifact_fingerprint} does not exist in trail "${trail.name}" of flow "${flow.name}" belonging to organization "${scope.org.name}"`,
    );
  }
  return artifact.template_reference_name;
}

/**
 * The rows an attestation stores (the attestation, its trail event, the trail's new evaluation),
 * the artifact states it changes and the events it publishes, from the trail as it stands. A
 * change of compliance is no event: the write that stores it marks the environments where the
 * fingerprints run.
 */
function planAttestation(
  scope: OrgScope,
  flow: FlowRow,
  trail: TrailRow,
  inputs: EvaluationInputs,
  r: Recording,
): { rows: PlannedAttestation; writes: EvaluationWrites; events: DomainEvent[] } {
  const data: AttestationData = r.input.data;
  const target = attestationTarget(scope, flow, trail, inputs, data, r.targets);
  const originalType = (r.decided.payload as { original_attestation_type?: string })
    .original_attestation_type;
  const writes = evaluateInputs({
    flow,
    trail,
    inputs,
    added: {
      id: r.id,
      name: data.attestation_name,
      type: r.decided.type,
      kind: r.input.kind,
      is_compliant: r.decided.isCompliant,
      artifact_fingerprint: data.artifact_fingerprint ?? null,
      target_artifacts: r.targets,
      git_commit: data.git_commit_info?.sha1 ?? null,
      // As `payload ->> 'original_attestation_type'` reads it back.
      original_type: originalType ?? null,
    },
    now: scope.now,
  });
  return {
    rows: {
      row: attestationRow(scope, flow, trail, r),
      event: trailEvent(scope, trail, r, target),
      trail: writes.trail,
      facts: writes.facts,
      values: writes.values,
    },
    writes,
    events: publishedEvents(scope, flow, trail, r),
  };
}

function attestationRow(
  scope: OrgScope,
  flow: FlowRow,
  trail: TrailRow,
  r: Recording,
): StoredAttestation['row'] {
  const data: AttestationData = r.input.data;
  const { evidence } = r;
  return {
    org_id: scope.org.id,
    id: r.id,
    flow_id: flow.id,
    trail_id: trail.id,
    name: data.attestation_name,
    type: r.decided.type,
    kind: r.input.kind,
    is_compliant: r.decided.isCompliant,
    artifact_fingerprint: data.artifact_fingerprint ?? null,
    target_artifacts: toJson(r.targets),
    git_commit: data.git_commit_info?.sha1 ?? null,
    payload: JSON.stringify(r.decided.payload),
    description: data.description ?? '',
    origin_url: data.origin_url ?? '',
    user_data: toJson(data.user_data ?? {}),
    annotations: toJson(data.annotations),
    external_urls: toJson(data.external_urls),
    git_commit_info: toJson(data.git_commit_info),
    repo_info: toJson(data.repo_info),
    repo_id: r.repoId,
    evidence_sha256: evidence?.sha256 ?? null,
    evidence_filename: evidence?.filename ?? null,
    evidence_size: evidence?.blob.size ?? null,
    evidence_content_type: evidence ? contentTypeFor(evidence.filename, evidence.mimetype) : null,
    created_by: scope.actor,
    created_at: scope.now,
  };
}

function trailEvent(
  scope: OrgScope,
  trail: TrailRow,
  r: Recording,
  target: string | null,
): StoredAttestation['event'] {
  const data: AttestationData = r.input.data;
  return {
    org_id: scope.org.id,
    trail_id: trail.id,
    type: data.artifact_fingerprint
      ? 'artifact_attestation_reported'
      : r.targets
        ? 'trail_attestation_for_artifact_reported'
        : 'trail_attestation_reported',
    fingerprint: data.artifact_fingerprint ?? null,
    occurred_at: scope.now,
    data: JSON.stringify({
      attestation_id: r.id,
      attestation_type: r.decided.type,
      is_compliant: r.decided.isCompliant,
      template_reference_name: data.attestation_name,
      ...(target ? { target_artifact: target } : {}),
      ...(data.artifact_fingerprint ? { artifact_fingerprint: data.artifact_fingerprint } : {}),
      ...(data.git_commit_info
        ? { git_commit_info: { sha1: data.git_commit_info.sha1, url: data.git_commit_info.url ?? null } }
        : {}),
    }),
  };
}

function publishedEvents(scope: OrgScope, flow: FlowRow, trail: TrailRow, r: Recording): DomainEvent[] {
  const data: AttestationData = r.input.data;
  return [
    {
      type: 'attestation.reported',
      orgId: scope.org.id,
      flowName: flow.name,
      trailName: trail.name,
      attestationId: r.id,
      attestationName: data.attestation_name,
      attestationType: r.decided.type,
      isCompliant: r.decided.isCompliant,
      fingerprint: data.artifact_fingerprint ?? null,
      at: scope.now,
    },
  ];
}
