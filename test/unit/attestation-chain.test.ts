/**
 * What a chain's batch write sends of its artifacts' states (storage/batching/attestation-chain.ts,
 * storage/trail-store/write.ts): an artifact's compliance travels as the key
 * of the trail's document that holds it only when that document is the one the write stores,
 * the last attestation's; else as its own text, as the attestation that changed it made it.
 */
import { describe, expect, it } from 'vitest';
import {
  addPlanned,
  batchOf,
  newChain,
  type PlannedAttestation,
} from '../../services/api/src/storage/batching/attestation-chain.js';
import { batchRecords } from '../../services/api/src/storage/trail-store/write.js';
import type { AttestationTrailRead } from '../../services/api/src/storage/trail-store/index.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 10, 0, s));

const read = {
  flow: { id: 'flow-1' },
  trail: { org_id: 'org-1', id: 'trail-1', compliance: {}, compliance_state: 'INCOMPLETE' },
  version: '10',
  flowVersion: '7',
  artifactVersions: { 'artifact-1': '10' },
  inputs: {
    artifacts: [
      {
        id: 'artifact-1',
        fingerprint: 'f'.repeat(64),
        template_reference_name: 'backend',
        git_commit: null,
        seq: 1,
        state: 'INCOMPLETE',
        compliance: {},
      },
    ],
    attestations: [],
  },
  factsBehind: 0,
} as unknown as AttestationTrailRead;

/** An attestation planned at second `s`: artifact-bound (changing the artifact) or trail-level. */
function planned(s: number, changesArtifact: boolean): PlannedAttestation {
  const status = { status: 'COMPLIANT', evaluated_at: s };
  const artifactText = JSON.stringify(status);
  return {
    row: { org_id: 'org-1', id: `att-${s}`, trail_id: 'trail-1', created_at: at(s) },
    event: { org_id: 'org-1', trail_id: 'trail-1', type: 'attested', occurred_at: at(s), data: {} },
    trail: {
      compliance: `{"artifacts_statuses":{"backend":${artifactText}},"evaluated_at":${s}}`,
      compliance_state: 'COMPLIANT',
      evaluated_at: at(s),
      last_modified_at: at(s),
    },
    facts: { lastId: `att-${s}`, attestations: [] },
    artifactStates: changesArtifact
      ? [{ id: 'artifact-1', state: 'COMPLIANT', compliance: artifactText, statusKey: 'backend' }]
      : [],
    changedFingerprints: [],
    values: {
      trail: { artifacts_statuses: { backend: status }, evaluated_at: s },
      artifacts: new Map(changesArtifact ? [['artifact-1', status]] : []),
    },
  } as unknown as PlannedAttestation;
}

function chainOf(...attestations: PlannedAttestation[]) {
  const chain = newChain<number>({ read, remembered: false });
  attestations.forEach((a, i) => addPlanned(chain, i, a));
  return chain;
}

/** The artifact records of a batch as the statement reads them. */
const artifactRecords = (chain: ReturnType<typeof chainOf>) =>
  (JSON.parse(batchRecords([batchOf(chain)]).trailRecords) as Array<{ artifacts: unknown[] }>)[0]!.artifacts;

describe("a chain's artifact states in its batch write", () => {
  it("name the trail document's key when the last attestation changed the artifact", () => {
    const chain = chainOf(planned(1, true), planned(2, true));
    expect(batchOf(chain).artifacts).toEqual([
      expect.objectContaining({ id: 'artifact-1', statusKey: 'backend', version: '10' }),
    ]);
    // The statement copies it from the trail's document: the text is not sent again.
    expect(artifactRecords(chain)).toEqual([
      { id: 'artifact-1', state: 'COMPLIANT', version: '10', status_key: 'backend', compliance: null },
    ]);
  });

  it('carry their own text when a later attestation left the artifact as it was', () => {
    // The trail's document is the trail-level attestation's (second 2); the artifact's is second 1's.
    const chain = chainOf(planned(1, true), planned(2, false));
    expect(batchOf(chain).artifacts![0]).not.toHaveProperty('statusKey');
    expect(artifactRecords(chain)).toEqual([
      {
        id: 'artifact-1',
        state: 'COMPLIANT',
        version: '10',
        compliance: { status: 'COMPLIANT', evaluated_at: 1 },
      },
    ]);
  });
});
