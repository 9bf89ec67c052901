/**
 * The trail aggregate's one write: attestations to several trails in one statement, with per
 * trail its trail events, its evaluation and facts, its artifacts' new states and the
 * re-evaluation marks of the environments where a changed fingerprint runs. The batcher writes
 * through it on the trail's row versions, a writer holding the trail's lock with `ifUnchanged: null`.
 *
 * The statement reads JSON records: per trail its write and its conditions, its trail events and
 * its attestation rows (each column with its SQL type, written once). jsonb values are JSON text
 * already; they go into the records as they are, not as strings to escape here and parse twice there.
 */
import { sql } from 'kysely';
import type { Db } from '../database.js';
import { flowIdByName } from '../repositories/flows.js';
import type { AttestationsTable } from '../tables/evidence.js';
import type { ArtifactStateWrite, StoredAttestation, StoredTrails, TrailAttestationBatch } from './types.js';

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

const ATTESTATION_INSERT = {
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

/**
 * The statement that stores `trails` (not empty): per trail its attestations (with their trail
 * events, in the order given), its evaluation and facts after the last of them, its artifacts'
 * new states and the re-evaluation marks of environments running a changed fingerprint. A trail
 * with `ifUnchanged` is written only if that still holds (and its artifacts are at the versions
 * given), and then with all of its attestations. It returns the trails written, each with its
 * row's new version, and how many marks were made.
 */
export function insertAttestationBatchQuery(trails: readonly TrailAttestationBatch[]) {
  const { trailRecords, eventRecords, rowRecords } = batchRecords(trails);
  const orgIds = [...new Set(trails.map((t) => t.orgId))];
  // One organization (nearly every batch) as a scalar: PostgreSQL costs a generic plan's
  // `= any($n)` as ten probes per array, so two arrays made the generic plan look ten times
  // dearer than it is, and it planned the statement afresh on every execution, about a fifth
  // of its CPU for the statement on a 1,000,000-attestation organization. With the scalar, the
  // generic plan (the same index scan) is used from the sixth execution on.
  const inOrgs = (column: string) =>
    orgIds.length === 1
      ? sql`${sql.ref(column)} = ${orgIds[0]}`
      : sql`${sql.ref(column)} = any(${orgIds}::text[])`;
  const trailIds = trails.map((t) => t.trailId);
  const artifactIds = trails.flatMap((t) => (t.artifacts ?? []).map((a) => a.id));
  // Rows are locked trail first, then its artifacts (`au` joins `tr`), as every other writer does.
  return sql<{ org_id: string; id: string; version: string; marks: number }>`
    with v as (
      select * from jsonb_to_recordset(${trailRecords}::jsonb) as v(org_id text,
        trail_id text, version text, flow_version text, flow_names jsonb, compliance jsonb,
        compliance_state text, evaluated_at timestamptz, last_modified_at timestamptz, facts_last_id text,
        facts jsonb, artifacts jsonb, marks jsonb, marked_at timestamptz)
    ), tr as (
      update trails t set compliance = v.compliance, compliance_state = v.compliance_state,
        evaluated_at = v.evaluated_at, last_modified_at = v.last_modified_at
      from v
      -- The trails by key as well as by join: the join alone, planned for the 100 rows a record
      -- set is assumed to hold, reads the whole trails table while it is small enough.
      where ${inOrgs('t.org_id')} and t.id = any(${trailIds}::text[])
        and t.org_id = v.org_id and t.id = v.trail_id and (v.version is null or (
        t.xmin::text = v.version
        -- A scalar subquery, probed by key: an exists here is planned as a hash of every flow.
        and (select f.xmin::text from flows f where f.org_id = t.org_id and f.id = t.flow_id) = v.flow_version
        and not exists (select 1 from jsonb_array_elements_text(v.flow_names) n(name)
          where (${flowIdByName(sql.ref('t.org_id'), sql.ref('n.name'))}) is distinct from t.flow_id)
        and not exists (select 1 from jsonb_to_recordset(v.artifacts) x(id text, version text)
          left join artifacts a on a.org_id = t.org_id and a.trail_id = t.id and a.id = x.id
          where a.xmin::text is distinct from x.version)))
      returning t.org_id, t.id, t.xmin::text as version
    ), au as (
      update artifacts a set state = x.state,
        compliance = coalesce(x.compliance, v.compliance -> 'artifacts_statuses' -> x.status_key)
      from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
      cross join jsonb_to_recordset(v.artifacts)
        x(id text, state text, compliance jsonb, status_key text, version text)
      -- By key as well, as the trails above: joined only, it was planned as a scan of the
      -- organization's artifacts for each trail written while the table was small.
      where ${inOrgs('a.org_id')} and a.id = any(${artifactIds}::text[])
        and a.org_id = v.org_id and a.trail_id = v.trail_id and a.id = x.id
        and (x.version is null or a.xmin::text = x.version)
    ), mk as (
      -- One mark per environment where a fingerprint whose compliance changed runs (the rule
      -- markEnvironmentsRunning applies to other evidence changes).
      insert into reevaluation_marks (org_id, id, environment_id, marked_at, reason)
      select m.org_id, substr(gen_random_uuid()::text, 1, 32), m.environment_id, m.marked_at, 'provenance'
      from (select distinct v.org_id, l.environment_id, v.marked_at
        from v join tr on tr.org_id = v.org_id and tr.id = v.trail_id
        cross join jsonb_array_elements_text(v.marks) f(fingerprint)
        join runtime_states l on l.org_id = v.org_id and l.fingerprint = f.fingerprint and l.to_index is null) m
      returning 1
    ), fa as (
      insert into trail_facts (org_id, trail_id, last_id, facts)
      select v.org_id, v.trail_id, v.facts_last_id, v.facts from v
      join tr on tr.org_id = v.org_id and tr.id = v.trail_id
      where v.facts is not null
      on conflict (org_id, trail_id) do update set last_id = excluded.last_id, facts = excluded.facts
    ), ev as (
      insert into trail_events (org_id, trail_id, type, fingerprint, occurred_at, data)
      select e.org_id, e.trail_id, e.type, e.fingerprint, e.occurred_at, e.data
      from jsonb_to_recordset(${eventRecords}::jsonb) as e(ord int, org_id text,
        trail_id text, type text, fingerprint text, occurred_at timestamptz, data jsonb)
      join tr on tr.org_id = e.org_id and tr.id = e.trail_id
      order by e.ord
    ), ins as (
      insert into attestations (${ATTESTATION_INSERT.names})
      select ${ATTESTATION_INSERT.values}
      from jsonb_to_recordset(${rowRecords}::jsonb) as r(ord int, ${ATTESTATION_INSERT.record})
      join tr on tr.org_id = r.org_id and tr.id = r.trail_id
      order by r.ord
    )
    select org_id, id, version, (select count(*)::int from mk) as marks from tr`;
}

export const trailWrites = {
  /**
   * Stores attestations to several trails in one statement (`insertAttestationBatchQuery`).
   * Returns the trails written, as `org_id:trail_id`, each with its row's new version (its
   * artifacts written share it: one statement, one transaction id), and how many marks were made.
   */
  async insertAttestationBatch(db: Db, trails: readonly TrailAttestationBatch[]): Promise<StoredTrails> {
    if (trails.length === 0) {
      return Object.assign(new Map<string, string>(), { marks: 0 });
    }
    const result = await insertAttestationBatchQuery(trails).execute(db);
    const stored = new Map(result.rows.map((r) => [`${r.org_id}:${r.id}`, r.version]));
    return Object.assign(stored, { marks: Number(result.rows[0]?.marks ?? 0) });
  },
};
