/**
 * The JSON records a batch write sends (`batchRecords`): every attestation column and trail event
 * field reads back as the row holds it, whatever its text holds, with the defaults a column left
 * out stores.
 */
import { describe, expect, it } from 'vitest';
import { batchRecords } from '../../services/api/src/storage/trail-store/write.js';
import type {
  StoredAttestation,
  TrailAttestationBatch,
} from '../../services/api/src/storage/trail-store/index.js';

const created = new Date(Date.UTC(2026, 10, 24, 10, 0, 1, 234));
const awkward =
  'quote " backslash \\ newline \n tab \t nul \u0000 snowman \u2603 emoji \u{1F600} line sep \u2028';

// description and origin_url left out: the records give them the columns' defaults.
const row = {
  org_id: 'org-1',
  id: 'att-1',
  flow_id: 'flow-1',
  trail_id: 'trail-1',
  name: awkward,
  type: 'generic',
  kind: 'attestation',
  is_compliant: false,
  artifact_fingerprint: null,
  target_artifacts: '["backend"]',
  git_commit: 'a'.repeat(40),
  payload: { nested: { text: awkward, n: 1.5, list: [true, null] } },
  user_data: '{"k": "v \\" quoted"}',
  annotations: null,
  repo_id: null,
  evidence_size: 12345,
  created_by: awkward,
  created_at: created,
} as Omit<StoredAttestation['row'], 'description' | 'origin_url'> as StoredAttestation['row'];

const batch = (attestations: StoredAttestation[]): TrailAttestationBatch => ({
  orgId: 'org-1',
  trailId: 'trail-1',
  ifUnchanged: null,
  trail: {
    compliance: '{}',
    compliance_state: 'INCOMPLETE',
    evaluated_at: created,
    last_modified_at: created,
  },
  facts: null,
  attestations,
});

describe('the records of a batch write', () => {
  it('carry each attestation column as the row holds it, and the defaults of those left out', () => {
    const event = {
      org_id: 'org-1',
      trail_id: 'trail-1',
      type: 'attestation_reported',
      occurred_at: created,
      data: `{"name": ${JSON.stringify(awkward)}}`,
    };
    const records = batchRecords([
      batch([
        { row, event },
        { row: { ...row, id: 'att-2' }, event },
      ]),
    ]);
    const rows = JSON.parse(records.rowRecords) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({
      ord: 1,
      org_id: 'org-1',
      id: 'att-1',
      flow_id: 'flow-1',
      trail_id: 'trail-1',
      name: awkward,
      type: 'generic',
      kind: 'attestation',
      is_compliant: false,
      artifact_fingerprint: null,
      target_artifacts: ['backend'],
      git_commit: 'a'.repeat(40),
      payload: { nested: { text: awkward, n: 1.5, list: [true, null] } },
      description: '',
      origin_url: '',
      user_data: { k: 'v " quoted' },
      annotations: null,
      external_urls: null,
      git_commit_info: null,
      repo_info: null,
      repo_id: null,
      evidence_sha256: null,
      evidence_filename: null,
      evidence_size: 12345,
      evidence_content_type: null,
      created_by: awkward,
      created_at: '2026-11-24T10:00:01.234Z',
    });
    expect(rows[1]).toMatchObject({ ord: 2, id: 'att-2' });
    const events = JSON.parse(records.eventRecords) as Array<Record<string, unknown>>;
    expect(events[1]).toEqual({
      ord: 2,
      org_id: 'org-1',
      trail_id: 'trail-1',
      type: 'attestation_reported',
      fingerprint: null,
      occurred_at: '2026-11-24T10:00:01.234Z',
      data: { name: awkward },
    });
  });
});
