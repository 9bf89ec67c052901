/**
 * The JSON records `attestationsRepository.insertAttestationBatch` sends in one statement: per
 * trail its write and its conditions, its trail events and its attestation rows (each column with
 * its SQL type, written once). jsonb values are JSON text already; they go into the records as
 * they are, not as strings to escape here and parse twice there.
 */
import { sql } from 'kysely';
import type { AttestationsTable } from '../tables/evidence.js';
import type { ArtifactStateWrite, StoredAttestation, TrailAttestationBatch } from './attestations.js';

/** A jsonb column's value as JSON text (stored rows carry JSON text already). */
const jsonText = (v: unknown): string =>
  v === null || v === undefined ? 'null' : typeof v === 'string' ? v : JSON.stringify(v);

let lastTime = NaN;
let lastIso = '';

/**
 * A timestamp as JSON.stringify writes it, remembering the last one: an attestation's row, event
 * and trail carry the same time, and JSON.stringify's own conversion of each Date cost more
 * than the rest of the record.
 */
function isoOf(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined || typeof d === 'string') {
    return d ?? null;
  }
  const time = d.getTime();
  if (time !== lastTime) {
    lastIso = d.toISOString();
    lastTime = time;
  }
  return lastIso;
}

/**
 * One JSON record: `plain` serialised, then each of `json` (JSON text) appended as it is. A JSON
 * null reads back as SQL NULL, as a null parameter did.
 */
function record(plain: Record<string, unknown>, json: Record<string, unknown>): string {
  let out = JSON.stringify(plain).slice(0, -1);
  for (const k in json) {
    out += `,"${k}":${jsonText(json[k])}`;
  }
  return `${out}}`;
}

/** A plain (not JSON text) value as JSON: a string escaped, a Date as JSON.stringify writes it. */
function plainJson(v: unknown): string {
  if (v === null || v === undefined) {
    return 'null';
  }
  if (typeof v === 'string') {
    return JSON.stringify(v);
  }
  return v instanceof Date ? `"${isoOf(v)}"` : JSON.stringify(v);
}

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
  values: sql.raw(COLUMN_NAMES.map((c) => `r.${c}`).join(', ')),
  record: sql.raw(COLUMN_NAMES.map((c) => `${c} ${ATTESTATION_COLUMNS[c]}`).join(', ')),
};

/** Columns a row may leave out, and what they store then. */
const COLUMN_DEFAULTS: Partial<Record<AttestationColumn, string>> = { description: '', origin_url: '' };

/**
 * Each column with its key as the record writes it (`,"name":`) and whether its value is JSON
 * text already.
 */
const RECORD_COLUMNS = COLUMN_NAMES.map((c) => ({ c, key: `,"${c}":`, json: isJson(c) }));

/**
 * An attestation row as one JSON record of a batch insert, `ord` its place in the batch: written
 * column by column, not through an object made for JSON.stringify, which cost half of the time
 * spent making a batch's records.
 */
function attestationRecord(ord: number, r: StoredAttestation['row']): string {
  let out = `{"ord":${ord}`;
  for (const { c, key, json } of RECORD_COLUMNS) {
    out += key + (json ? jsonText(r[c]) : plainJson(r[c] ?? COLUMN_DEFAULTS[c]));
  }
  return `${out}}`;
}

/**
 * An artifact's new state as one JSON record: its compliance as the key of the trail's document
 * that holds it, or else as its text.
 */
function artifactRecord({ compliance, statusKey, ...a }: ArtifactStateWrite): string {
  return statusKey === undefined
    ? record(a, { compliance })
    : record({ ...a, status_key: statusKey }, { compliance: null });
}

/** A batch as the JSON arrays its statement reads: trails, trail events and attestations. */
export function batchRecords(trails: readonly TrailAttestationBatch[]) {
  const trailRecords: string[] = [];
  const eventRecords: string[] = [];
  const rowRecords: string[] = [];
  let ord = 0;
  for (const t of trails) {
    trailRecords.push(
      record(
        {
          org_id: t.orgId,
          trail_id: t.trailId,
          version: t.ifUnchanged?.version ?? null,
          flow_version: t.ifUnchanged?.flowVersion ?? null,
          compliance_state: t.trail.compliance_state,
          evaluated_at: isoOf(t.trail.evaluated_at),
          last_modified_at: isoOf(t.trail.last_modified_at),
          facts_last_id: t.facts?.lastId ?? null,
          marked_at: isoOf(t.marks?.at),
        },
        {
          flow_names: t.ifUnchanged ? JSON.stringify(t.ifUnchanged.flowNames) : null,
          compliance: t.trail.compliance,
          facts: t.facts ? JSON.stringify(t.facts.attestations) : null,
          artifacts: `[${(t.artifacts ?? []).map(artifactRecord).join(',')}]`,
          marks: JSON.stringify(t.marks?.fingerprints ?? []),
        },
      ),
    );
    for (const { row: r, event: e } of t.attestations) {
      ord += 1;
      eventRecords.push(
        `{"ord":${ord},"org_id":${plainJson(e.org_id)},"trail_id":${plainJson(e.trail_id)},"type":${plainJson(e.type)},"fingerprint":${plainJson(e.fingerprint)},"occurred_at":${plainJson(e.occurred_at)},"data":${jsonText(e.data)}}`,
      );
      rowRecords.push(attestationRecord(ord, r));
    }
  }
  return {
    trailRecords: `[${trailRecords.join(',')}]`,
    eventRecords: `[${eventRecords.join(',')}]`,
    rowRecords: `[${rowRecords.join(',')}]`,
  };
}
