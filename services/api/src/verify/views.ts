/**
 * The package's own record files against the records its log proves. `MANIFEST.sha256` is not
 * signed, so a file edited together with it passes the manifest check; the checkpoint is signed.
 * Each `attestation.json`, `artifact.json` (and a trail package's `artifacts/<fingerprint>.json`),
 * `trail.json` and `snapshot.json` must show the audited fields of a record the package's log
 * records prove, as that record holds them, and each evidence file must hash to the
 * `evidence_sha256` of its attestation's record. The files' other fields (compliance, user data,
 * links) are not in the log.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { VerifyError } from './checks.js';

/** A record the log proves (its leaf computed from the package's `log/records/` file). */
export interface ProvenRecord {
  index: number;
  record: Record<string, unknown>;
}

/** Proven records by `kind:id`. */
export type Proven = Map<string, ProvenRecord>;

type Same = (shown: unknown, logged: unknown) => boolean;

interface Field {
  /** Dotted path in the file. */
  shown: string;
  /** The record's field. */
  logged: string;
  same?: Same;
}

interface View {
  kind: string;
  matches(name: string): boolean;
  /** The proven record the file shows. */
  find(shown: Record<string, unknown>, proven: Proven): ProvenRecord | undefined;
  /** How the file names its record in a failure. */
  label(shown: Record<string, unknown>): string;
  fields: Field[];
}

const text = (v: unknown): string => canonicalize(v ?? null) ?? 'null';
const equal: Same = (a, b) => text(a) === text(b);
/**
 * Files show times as epoch seconds (a number, or a string of one) at millisecond precision;
 * records as UTC ISO 8601 with microseconds. Within the millisecond is the same time.
 */
const sameTime: Same = (shown, logged) =>
  typeof logged === 'string' && Math.abs(Number(shown) * 1000 - Date.parse(logged)) <= 1;
/** Files name evidence without a stored name `evidence`. */
const sameFilename: Same = (shown, logged) =>
  equal(shown, logged) || (shown === 'evidence' && logged === null);
/** Files show an evidence file without a stored size as size 0. */
const sameSize: Same = (shown, logged) =>
  shown === undefined ? logged === null || logged === undefined : Number(shown) === Number(logged ?? 0);

const byId =
  (kind: string, field: string) =>
  (shown: Record<string, unknown>, proven: Proven): ProvenRecord | undefined =>
    proven.get(`${kind}:${String(shown[field])}`);

const VIEWS: View[] = [
  {
    kind: 'attestation',
    matches: (name) => name === 'attestation.json' || name.endsWith('/attestation.json'),
    find: byId('attestation', 'attestation_id'),
    label: (shown) => `attestation ${String(shown.attestation_id)}`,
    fields: [
      { shown: 'attestation_name', logged: 'name' },
      { shown: 'attestation_type', logged: 'type' },
      { shown: 'is_compliant', logged: 'is_compliant' },
      { shown: 'artifact_fingerprint', logged: 'artifact_fingerprint' },
      { shown: 'target_artifacts', logged: 'target_artifacts' },
      { shown: 'reported_by', logged: 'created_by' },
      { shown: 'created_at', logged: 'created_at', same: sameTime },
      { shown: 'evidence_file.sha256', logged: 'evidence_sha256' },
      { shown: 'evidence_file.filename', logged: 'evidence_filename', same: sameFilename },
      { shown: 'evidence_file.size', logged: 'evidence_size', same: sameSize },
    ],
  },
  {
    kind: 'artifact',
    matches: (name) =>
      name === 'artifact.json' || name.endsWith('/artifact.json') || /^artifacts\/[^/]+\.json$/.test(name),
    find: byId('artifact', 'id'),
    label: (shown) => `artifact ${String(shown.id)}`,
    fields: [
      { shown: 'fingerprint', logged: 'fingerprint' },
      { shown: 'filename', logged: 'filename' },
      { shown: 'template_reference_name', logged: 'template_reference_name' },
      { shown: 'git_commit', logged: 'git_commit' },
      { shown: 'commit_url', logged: 'commit_url' },
      { shown: 'build_url', logged: 'build_url' },
      { shown: 'created_at', logged: 'created_at', same: sameTime },
    ],
  },
  {
    // A trail's file carries no id: it is the proven trail of its name (a package has one).
    kind: 'trail',
    matches: (name) => name === 'trail.json',
    find: (shown, proven) =>
      [...proven.entries()].find(([k, p]) => k.startsWith('trail:') && p.record.name === shown.name)?.[1],
    label: (shown) => `trail ${String(shown.name)}`,
    fields: [
      { shown: 'description', logged: 'description' },
      { shown: 'origin_url', logged: 'origin_url' },
      { shown: 'git_commit_info', logged: 'git_commit_info' },
      { shown: 'created_by', logged: 'created_by' },
      { shown: 'created_at', logged: 'created_at', same: sameTime },
    ],
  },
  {
    // A snapshot's file carries its index, not its environment's id: a package has one environment.
    kind: 'snapshot',
    matches: (name) => name === 'snapshot.json',
    find: (shown, proven) =>
      [...proven.entries()].find(
        ([k, p]) => k.startsWith('snapshot:') && p.record.index === shown.index,
      )?.[1],
    label: (shown) => `snapshot ${String(shown.index)}`,
    fields: [
      { shown: 'timestamp', logged: 'created_at', same: sameTime },
      // Files show an unknown verdict (no policy) as not compliant.
      { shown: 'compliant', logged: 'compliant', same: (shown, logged) => shown === (logged === true) },
      { shown: 'user_name', logged: 'reported_by' },
      { shown: 'summary.started', logged: 'started' },
      { shown: 'summary.changed', logged: 'changed' },
      { shown: 'summary.exited', logged: 'exited' },
    ],
  },
];

const at = (value: Record<string, unknown>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      value,
    );

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The evidence files beside an attestation's file against its record: how many were checked, and
 * whether the record names a file the package does not hold (a retention rule removes evidence
 * files and keeps their attestations, so an absent file is reported, not failed).
 */
function checkEvidence(
  files: Map<string, Buffer>,
  name: string,
  proven: ProvenRecord,
): { checked: number; absent: boolean } {
  const dir = name.slice(0, name.length - 'attestation.json'.length);
  const evidence = [...files.keys()].filter((n) => n.startsWith(`${dir}evidence/`));
  const logged = proven.record.evidence_sha256;
  for (const file of evidence) {
    if (sha256(files.get(file)!) !== logged) {
      throw new VerifyError(
        `${file}: its SHA-256 is not the evidence_sha256 of attestation ${String(proven.record.id)} in its log entry ${proven.index}`,
      );
    }
  }
  return { checked: evidence.length, absent: typeof logged === 'string' && evidence.length === 0 };
}

/**
 * Every record file of the package against the proven record it shows, and every evidence file
 * against its attestation's record. Throws naming the first file that differs; returns counts and
 * the attestation files whose evidence file the package does not hold.
 */
export function checkViews(
  files: Map<string, Buffer>,
  proven: Proven,
  parse: (name: string) => Record<string, unknown>,
): { records: number; evidence: number; absent: string[] } {
  let records = 0;
  let evidence = 0;
  const absent: string[] = [];
  for (const name of [...files.keys()].filter((n) => !n.startsWith('log/')).sort()) {
    const view = VIEWS.find((v) => v.matches(name));
    if (!view) {
      continue;
    }
    const shown = parse(name);
    const found = view.find(shown, proven);
    if (!found || found.record.kind !== view.kind) {
      throw new VerifyError(
        `${name}: shows ${view.label(shown)}, which the package's log records do not prove`,
      );
    }
    for (const f of view.fields) {
      const a = at(shown, f.shown);
      const b = found.record[f.logged];
      if (!(f.same ?? equal)(a, b)) {
        throw new VerifyError(
          `${name}: ${f.shown} is ${text(a)}, its log entry ${found.index} (${view.label(shown)}) says ${f.logged} ${text(b)}`,
        );
      }
    }
    records += 1;
    if (view.kind === 'attestation') {
      const e = checkEvidence(files, name, found);
      evidence += e.checked;
      if (e.absent) {
        absent.push(name);
      }
    }
  }
  return { records, evidence, absent };
}
