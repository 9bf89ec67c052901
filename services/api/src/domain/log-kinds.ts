/**
 * The registry of what the transparency log records: one entry per kind of record. Each names its
 * table, the columns that identify a record, the audit-relevant columns copied into the entry's
 * `record`, whether a change of those columns (an update) or a removal is a new entry, and the API
 * resource the entry points at. Triggers generated from this list (storage/log-triggers.ts) queue
 * every write of these tables in the write's own transaction; the self-check recomputes records
 * from the same column list. Adding a kind is adding one entry here.
 *
 * A record is `{kind, id, ...columns}`; a removal logs the last values with `"removed": true`.
 * Times are written as UTC ISO-8601 with microseconds, so a record reads the same on any server.
 */

export type ColumnType = 'value' | 'time' | 'sha256';

export interface LogColumn {
  /** The column; also the record's field unless `as` renames it. */
  column: string;
  as?: string;
  /** `time`: UTC ISO-8601; `sha256`: the hex SHA-256 of the column's JSON text (large documents). */
  type?: ColumnType;
}

/** Names of records an entry's resource link needs (read when entries are served). */
export interface NameLookup {
  flow(id: unknown): Promise<string | undefined>;
  trail(id: unknown): Promise<{ flow: string; name: string } | undefined>;
  environment(id: unknown): Promise<string | undefined>;
  policy(id: unknown): Promise<string | undefined>;
}

/** The API resource `/api/v2/{collection}/{org}/{...segments}` of the organization, each segment escaped. */
export type ResourceUrl = (collection: string, ...segments: string[]) => string;

export interface LogKind {
  kind: string;
  table: string;
  /** Columns identifying a record in its organization; the record id joins their values with ':'. */
  key: string[];
  columns: LogColumn[];
  /** An update that changes one of these columns is a new entry. */
  updates?: string[];
  /** A removal of the row is a new entry (`"removed": true`). */
  deletes?: boolean;
  resource(url: ResourceUrl, record: Record<string, unknown>, names: NameLookup): Promise<string | null>;
}

const col = (column: string, type: ColumnType = 'value', as?: string): LogColumn =>
  as ? { column, type, as } : { column, type };
/** A key or name value as text (objects as JSON, never '[object Object]'). */
export function keyText(v: unknown): string {
  if (v === null || v === undefined) {
    return '';
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') {
    return String(v);
  }
  return JSON.stringify(v);
}
const s = keyText;

export const LOG_KINDS: readonly LogKind[] = [
  {
    kind: 'flow',
    table: 'flows',
    key: ['id'],
    columns: [
      col('id'),
      col('name'),
      col('description'),
      col('visibility'),
      col('template_yaml'),
      col('archived'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    updates: ['name', 'description', 'visibility', 'template_yaml', 'archived'],
    resource: async (url, r) => url('flows', s(r.name)),
  },
  {
    kind: 'trail',
    table: 'trails',
    key: ['id'],
    columns: [
      col('id'),
      col('flow_id'),
      col('name'),
      col('description'),
      col('template_yaml'),
      col('git_commit_info'),
      col('origin_url'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    updates: ['name', 'description', 'template_yaml', 'git_commit_info', 'origin_url'],
    // Removed only by a retention rule, which logs its disposition too.
    deletes: true,
    resource: async (url, r, names) => {
      const flow = await names.flow(r.flow_id);
      return flow ? url('trails', flow, s(r.name)) : null;
    },
  },
  {
    kind: 'artifact',
    table: 'artifacts',
    key: ['id'],
    columns: [
      col('id'),
      col('flow_id'),
      col('trail_id'),
      col('fingerprint'),
      col('filename'),
      col('template_reference_name'),
      col('git_commit'),
      col('build_url'),
      col('commit_url'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    updates: ['fingerprint', 'filename', 'template_reference_name', 'git_commit', 'build_url', 'commit_url'],
    // Removed only by a retention rule, which logs its disposition too.
    deletes: true,
    resource: async (url, r, names) => {
      const flow = await names.flow(r.flow_id);
      return flow ? url('artifacts', flow, 'fingerprint', s(r.fingerprint)) : null;
    },
  },
  {
    // Attestations of every kind: overrides and decisions too. Never updated by Verity.
    kind: 'attestation',
    table: 'attestations',
    key: ['id'],
    columns: [
      col('id'),
      col('flow_id'),
      col('trail_id'),
      col('name'),
      col('type'),
      col('kind', 'value', 'attestation_kind'),
      col('is_compliant'),
      col('artifact_fingerprint'),
      col('target_artifacts'),
      col('git_commit'),
      col('payload', 'sha256', 'payload_sha256'),
      col('evidence_sha256'),
      col('evidence_filename'),
      col('evidence_size'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    deletes: true,
    resource: async (url, r, names) => {
      const trail = await names.trail(r.trail_id);
      return trail ? url('attestations', trail.flow, 'trail', trail.name, s(r.name)) : null;
    },
  },
  {
    kind: 'environment',
    table: 'environments',
    key: ['id'],
    columns: [
      col('id'),
      col('name'),
      col('type'),
      col('description'),
      col('require_provenance'),
      col('archived'),
      col('tags'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    updates: ['name', 'type', 'description', 'require_provenance', 'archived', 'tags'],
    resource: async (url, r) => url('environments', s(r.name)),
  },
  {
    kind: 'snapshot',
    table: 'runtime_snapshots',
    key: ['environment_id', 'index'],
    columns: [
      col('environment_id'),
      col('index'),
      col('created_at', 'time'),
      col('compliant'),
      col('started'),
      col('changed'),
      col('exited'),
      col('artifact_count'),
      col('cause'),
      col('applied_policies'),
      col('reported_by'),
    ],
    deletes: true,
    resource: async (url, r, names) => {
      const env = await names.environment(r.environment_id);
      return env ? url('snapshots', env, s(r.index)) : null;
    },
  },
  {
    kind: 'policy',
    table: 'policies',
    key: ['id'],
    columns: [
      col('id'),
      col('name'),
      col('type'),
      col('archived'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    updates: ['name', 'type', 'archived'],
    resource: async (url, r) => url('policies', s(r.name)),
  },
  {
    kind: 'policy_version',
    table: 'policy_versions',
    key: ['policy_id', 'version'],
    columns: [
      col('policy_id'),
      col('version'),
      col('content_hash'),
      col('policy_yaml', 'sha256', 'policy_yaml_sha256'),
      col('comment'),
      col('created_by'),
      col('created_at', 'time'),
    ],
    resource: async (url, r, names) => {
      const policy = await names.policy(r.policy_id);
      return policy ? url('policies', policy) : null;
    },
  },
  {
    kind: 'policy_attachment',
    table: 'environment_policies',
    key: ['environment_id', 'policy_id'],
    columns: [col('environment_id'), col('policy_id'), col('attached_at', 'time')],
    deletes: true,
    resource: async (url, r, names) => {
      const env = await names.environment(r.environment_id);
      return env ? url('environments', env) : null;
    },
  },
  {
    // What a retention rule removed, and under which rule (the removals are entries of their own).
    kind: 'disposition',
    table: 'dispositions',
    key: ['id'],
    columns: [
      col('id'),
      col('kind', 'value', 'removed_kind'),
      col('count'),
      col('items', 'sha256', 'items_sha256'),
      col('digests'),
      col('rule'),
      col('as_of', 'time'),
      col('removed_at', 'time'),
      col('run_by'),
    ],
    resource: async (url) => url('retention', 'dispositions'),
  },
];

const BY_KIND = new Map(LOG_KINDS.map((k) => [k.kind, k]));

export function logKind(kind: string): LogKind | undefined {
  return BY_KIND.get(kind);
}

/** The record id of a row (or record) of `kind`: its key columns' values joined with ':'. */
export function recordIdOf(kind: LogKind, row: Record<string, unknown>): string {
  return kind.key.map((k) => keyText(row[k])).join(':');
}

/** The SQL (over the row alias `alias`) of one column's value as the record holds it. */
function columnSql(alias: string, c: LogColumn): string {
  const ref = `${alias}.${quoteIdent(c.column)}`;
  switch (c.type) {
    case 'time':
      return `to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case 'sha256':
      return `encode(sha256(convert_to(${ref}::text, 'UTF8')), 'hex')`;
    case 'value':
    case undefined:
      return ref;
  }
}

/** The SQL expression of a row's record fields (without kind and id) as a jsonb object. */
export function recordSql(kind: LogKind, alias: string): string {
  const pairs = kind.columns.map((c) => `'${c.as ?? c.column}', ${columnSql(alias, c)}`);
  return `jsonb_build_object(${pairs.join(', ')})`;
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
    throw new Error(`not a plain identifier: ${name}`);
  }
  return `"${name}"`;
}

/** The record of a queued or stored row: its fields with the kind and id first. */
export function recordOf(
  kind: LogKind,
  fields: Record<string, unknown>,
  removed: boolean,
): Record<string, unknown> {
  const record: Record<string, unknown> = { kind: kind.kind, id: recordIdOf(kind, fields), ...fields };
  if (removed) {
    record.removed = true;
  }
  return record;
}
