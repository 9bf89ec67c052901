/**
 * The notifications a change of an environment sends (semantics.md section 7): a snapshot tells of
 * starts, exits, releases and compliance transitions; a report that only scaled tells of scaling.
 */
import { complianceState } from './compliance-state.js';
import { describeChange, startedAnnotation } from './snapshot-diff.js';
import { complianceTrigger, type NotificationEvent } from './triggers.js';

/** A flow record of a running fingerprint, as payloads show it. */
export interface ProvenanceSummary {
  flowName: string;
  trailName: string;
  /** The artifact's status in its trail (COMPLIANT, NON-COMPLIANT, INCOMPLETE). */
  artifactCompliance: string;
  gitCommit: string | null;
  commitUrl: string | null;
  buildUrl: string | null;
  htmlUrl: string;
}

/** What every notification of one environment change carries. */
export interface NotificationBase {
  org: string;
  /** Epoch seconds. */
  timestamp: number;
  environment: string;
}

/** The `provenance` of an artifact in a payload: its first flow record, or null without one. */
export function provenancePayload(records: readonly ProvenanceSummary[] | undefined) {
  const r = records?.[0];
  return r
    ? {
        flow: r.flowName,
        trail: r.trailName,
        status: r.artifactCompliance.toLowerCase(),
        commit: r.gitCommit,
        commit_url: r.commitUrl,
        build_url: r.buildUrl,
        html_url: r.htmlUrl,
      }
    : null;
}

/**
 * The notifications of one snapshot: ON_STARTED_ARTIFACT and ON_EXITED_ARTIFACT per fingerprint,
 * ON_RELEASE per flow record of a fingerprint that started (a release of that flow), and the
 * compliance trigger when the environment's compliance moved to a known verdict.
 */
export function snapshotNotifications(input: {
  base: NotificationBase;
  snapshot: { index: number; html_url: string; api_url: string };
  compliance: { before: boolean | null; after: boolean | null };
  started: ReadonlyArray<{ name: string; fingerprint: string; instance_count: number; verdict_hash: string }>;
  exits: ReadonlyArray<{ name: string; fingerprint: string; count: number }>;
  verdicts: ReadonlyArray<{ hash: string; compliant: boolean | null }>;
  /** Flow records of the fingerprints that started. */
  startedRecords: ReadonlyMap<string, readonly ProvenanceSummary[]>;
}): NotificationEvent[] {
  const { started, compliance } = input;
  const env = input.base.environment;
  const { index, html_url, api_url } = input.snapshot;
  const snapshot = { index, status: complianceState(compliance.after, 'lower'), html_url, api_url };
  const base = { ...input.base, snapshot };
  const verdictOf = new Map(input.verdicts.map((v) => [v.hash, v]));
  // One event per start, exit and flow record of a start: bounded by the report and the provenance.
  const events: NotificationEvent[] = [
    ...started.map((s): NotificationEvent => ({
      ...base,
      trigger: 'ON_STARTED_ARTIFACT',
      description: describeChange(
        startedAnnotation(verdictOf.get(s.verdict_hash)?.compliant ?? null),
        0,
        s.instance_count,
      ),
      artifact: {
        name: s.name,
        fingerprint: s.fingerprint,
        provenance: provenancePayload(input.startedRecords.get(s.fingerprint)),
      },
    })),
    ...input.exits.map((e): NotificationEvent => ({
      ...base,
      trigger: 'ON_EXITED_ARTIFACT',
      description: describeChange('exited', e.count, 0),
      artifact: { name: e.name, fingerprint: e.fingerprint },
    })),
    ...started.flatMap((s) =>
      (input.startedRecords.get(s.fingerprint) ?? []).map((r): NotificationEvent => ({
        ...base,
        trigger: 'ON_RELEASE',
        flow: r.flowName,
        trail: r.trailName,
        description: `${s.name} started running in ${env}`,
        artifact: { name: s.name, fingerprint: s.fingerprint, provenance: provenancePayload([r]) },
      })),
    ),
  ];
  const trigger = complianceTrigger(compliance.before, compliance.after);
  if (trigger) {
    events.push({
      ...base,
      trigger,
      description: `Environment ${env} became ${complianceState(compliance.after, 'lower')} in snapshot #${snapshot.index}`,
    });
  }
  return events;
}

/** ON_SCALED_ARTIFACT for each fingerprint whose instance count alone moved (no snapshot: rule 4). */
export function scaledNotifications(
  base: NotificationBase,
  scaled: ReadonlyArray<{ name: string; fingerprint: string; was: number; now: number }>,
): NotificationEvent[] {
  return scaled.map((s) => ({
    trigger: 'ON_SCALED_ARTIFACT',
    ...base,
    description: describeChange('unchanged', s.was, s.now),
    artifact: { name: s.name, fingerprint: s.fingerprint },
  }));
}
