/**
 * The JSON records `attestationsRepository.insertAttestationBatch` sends in one statement: per
 * trail its write and its conditions, its trail events and its attestation rows (each column with
 * its SQL type, written once).
 */
import { sql } from 'kysely';
import type { AttestationsTable } from '../tables/evidence.js';
import type { StoredAttestation, TrailAttestationBatch } from './attestations.js';

/** A jsonb column's value as text (stored rows carry JSON text already), cast in SQL. */
const jsonText = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

/**
 * The attestation columns a batch inserts, each with its SQL type, written once: the insert's
 * column list, its select list and the record type of the JSON rows follow from it. jsonb columns
 * travel as JSON text and are cast.
 */
const ATTESTATION_COLUMNS = {
  org_id: 'text',
  id: 'text',
  flow_id: 'text',
  trail_id: 'text',
  name: 'text',
  type: 'text',
  kind: 'text',
  is_compliant: 'boolean',
  artifact_fingerprint: 'text',
  target_artifacts: 'jsonb',
  git_commit: 'text',
  payload: 'jsonb',
  description: 'text',
  origin_url: 'text',
  user_data: 'jsonb',
  annotations: 'jsonb',
  external_urls: 'jsonb',
  git_commit_info: 'jsonb',
  repo_info: 'jsonb',
  repo_id: 'text',
  evidence_sha256: 'text',
  evidence_filename: 'text',
  evidence_size: 'bigint',
  evidence_content_type: 'text',
  created_by: 'text',
  created_at: 'timestamptz',
} as const satisfies Partial<Record<keyof AttestationsTable, string>>;

type AttestationColumn = keyof typeof ATTESTATION_COLUMNS;
const COLUMN_NAMES = Object.keys(ATTESTATION_COLUMNS) as AttestationColumn[];
const isJson = (c: AttestationColumn) => ATTESTATION_COLUMNS[c] === 'jsonb';

export const ATTESTATION_INSERT = {
  names: sql.raw(COLUMN_NAMES.join(', ')),
  values: sql.raw(COLUMN_NAMES.map((c) => (isJson(c) ? `r.${c}::jsonb` : `r.${c}`)).join(', ')),
  record: sql.raw(COLUMN_NAMES.map((c) => `${c} ${isJson(c) ? 'text' : ATTESTATION_COLUMNS[c]}`).join(', ')),
};

/** Columns a row may leave out, and what they store then. */
const COLUMN_DEFAULTS: Partial<Record<AttestationColumn, string>> = { description: '', origin_url: '' };

/** An attestation row as one JSON record of a batch insert. */
function attestationRecord(r: StoredAttestation['row']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of COLUMN_NAMES) {
    out[c] = isJson(c) ? jsonText(r[c]) : (r[c] ?? COLUMN_DEFAULTS[c] ?? null);
  }
  return out;
}

/** A batch as the JSON records its statement reads: trails, trail events and attestations. */
export function batchRecords(trails: readonly TrailAttestationBatch[]) {
  const trailRecords: object[] = [];
  const eventRecords: object[] = [];
  const rowRecords: object[] = [];
  let ord = 0;
  for (const t of trails) {
    trailRecords.push({
      org_id: t.orgId,
      trail_id: t.trailId,
      version: t.ifUnchanged?.version ?? null,
      flow_version: t.ifUnchanged?.flowVersion ?? null,
      flow_names: t.ifUnchanged ? JSON.stringify(t.ifUnchanged.flowNames) : null,
      compliance: jsonText(t.trail.compliance),
      compliance_state: t.trail.compliance_state,
      evaluated_at: t.trail.evaluated_at,
      last_modified_at: t.trail.last_modified_at,
      facts_last_id: t.facts.lastId,
      facts: JSON.stringify(t.facts.attestations),
      artifacts: JSON.stringify(t.artifacts ?? []),
      marks: JSON.stringify(t.marks?.fingerprints ?? []),
      marked_at: t.marks?.at ?? null,
    });
    for (const { row: r, event: e } of t.attestations) {
      ord += 1;
      eventRecords.push({
        ord,
        org_id: e.org_id,
        trail_id: e.trail_id,
        type: e.type,
        fingerprint: e.fingerprint ?? null,
        occurred_at: e.occurred_at,
        data: jsonText(e.data),
      });
      rowRecords.push({ ord, ...attestationRecord(r) });
    }
  }
  return { trailRecords, eventRecords, rowRecords };
}
