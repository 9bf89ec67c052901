/**
 * A trail's facts (domain/trail-evaluation.ts `essentialAttestations`, migration 0303): reporting to a
 * trail from its facts, report after report, evaluates exactly as reporting with its whole
 * history would, over random histories of every binding (trail, fingerprint, targets by name and
 * commit, unbound) with overrides; and the facts of a long history stay small.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { essentialAttestations, evaluateInputs } from '../../services/api/src/domain/trail-evaluation.js';
import type { EvaluationInputs } from '../../services/api/src/storage/trail-store/index.js';
import type { FlowRow } from '../../services/api/src/storage/repositories/flows.js';
import type { TrailRow } from '../../services/api/src/storage/repositories/trails.js';
import type { FlowTemplate } from '../../services/api/src/domain/flow-template.js';

type Report = EvaluationInputs['attestations'][number];
type Artifact = EvaluationInputs['artifacts'][number];

const FP = ['1'.repeat(64), '2'.repeat(64), '3'.repeat(64)];
const COMMITS = ['c'.repeat(40), 'd'.repeat(40)];
const template: FlowTemplate = {
  version: 1,
  trail: {
    attestations: [{ name: 'pr', type: 'pull_request' }],
    artifacts: [
      { name: 'backend', attestations: [{ name: 'unit', type: 'junit' }] },
      { name: 'frontend', attestations: [] },
    ],
  },
};
const flow = { id: 'flow-1', template } as unknown as FlowRow;
const trail = {
  id: 'trail-1',
  template: null,
  compliance: {},
  compliance_state: 'INCOMPLETE',
} as unknown as TrailRow;
const now = new Date('2026-11-22T00:00:00Z');

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, pick };
}

function history(seed: number): { artifacts: Artifact[]; reports: Array<Omit<Report, 'seq'>> } {
  const r = random(seed);
  const artifacts: Artifact[] = [];
  // The third fingerprint is never reported: attestations for it stay unbound.
  if (r.next() < 0.8) {
    artifacts.push({
      id: 'a1',
      fingerprint: FP[0]!,
      template_reference_name: 'backend',
      git_commit: COMMITS[0]!,
      seq: 1,
      state: 'INCOMPLETE',
      compliance: {},
    } as unknown as Artifact);
  }
  if (r.next() < 0.6) {
    artifacts.push({
      id: 'a2',
      fingerprint: FP[1]!,
      template_reference_name: 'frontend',
      git_commit: COMMITS[1]!,
      seq: 2,
      state: 'INCOMPLETE',
      compliance: {},
    } as unknown as Artifact);
  }
  const length = 1 + Math.floor(r.next() * 40);
  const reports: Array<Omit<Report, 'seq'>> = [];
  for (let i = 0; i < length; i++) {
    const binding = r.next();
    const override = r.next() < 0.25;
    const type = r.pick(['generic', 'junit', 'snyk']);
    reports.push({
      id: `r${seed}-${i}`,
      name: r.pick(['unit', 'pr', 'lint', 'scan']),
      type: override ? 'override' : type,
      kind: override ? 'override' : type,
      is_compliant: r.next() < 0.7,
      artifact_fingerprint: binding < 0.4 ? r.pick(FP) : null,
      target_artifacts: binding >= 0.4 && binding < 0.6 ? [r.pick(['backend', 'frontend'])] : null,
      git_commit: binding >= 0.4 && binding < 0.6 ? r.pick([...COMMITS, null]) : null,
      original_type: override ? type : null,
    });
  }
  return { artifacts, reports };
}

/**
 * expect(actual).toEqual(expected), asked only when the two differ strictly: strictly equal values
 * are equal to toEqual too, and toEqual over thousands of evaluations costs seconds.
 */
function expectEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    expect(actual, message).toEqual(expected);
  }
}

describe('trail facts', () => {
  it('evaluate every report after them as the whole history does, over 400 random histories', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const { artifacts, reports } = history(seed);
      let all: Report[] = [];
      let facts: Report[] = [];
      for (const added of reports) {
        const full = evaluateInputs({ flow, trail, inputs: { artifacts, attestations: all }, added, now });
        const fromFacts = evaluateInputs({
          flow,
          trail,
          inputs: { artifacts, attestations: facts },
          added,
          now,
        });
        expectEqual(fromFacts.evaluation, full.evaluation, `history ${seed}, report ${added.id}`);
        expectEqual(fromFacts.changedFingerprints, full.changedFingerprints);
        expect(fromFacts.facts.lastId).toBe(added.id);
        // As the database hands both back: every report with its seq; facts numbered in order.
        all = [...all, { ...added, seq: all.length + 1 }];
        facts = fromFacts.facts.attestations.map((a, i) => ({ ...a, seq: i + 1 }));
      }
      const whole = evaluateInputs({ flow, trail, inputs: { artifacts, attestations: all }, now });
      const reduced = evaluateInputs({ flow, trail, inputs: { artifacts, attestations: facts }, now });
      expectEqual(reduced.evaluation, whole.evaluation);
    }
  });

  it('keep at most three reports of a slot reported a thousand times', () => {
    const reports: Report[] = Array.from({ length: 1000 }, (_, i) => ({
      id: `r${i}`,
      seq: i + 1,
      name: 'lint',
      type: i % 10 === 9 ? 'override' : 'generic',
      kind: i % 10 === 9 ? 'override' : 'generic',
      is_compliant: i % 2 === 0,
      artifact_fingerprint: null,
      target_artifacts: null,
      git_commit: null,
      original_type: i % 10 === 9 ? 'generic' : null,
    }));
    const kept = essentialAttestations(reports, new Set());
    // The first, the latest (an override) and the latest report it overrides.
    expect(kept.map((r) => r.id)).toEqual(['r0', 'r998', 'r999']);
  });

  it('keep every report that may be listed unbound', () => {
    const reports: Report[] = Array.from({ length: 5 }, (_, i) => ({
      id: `r${i}`,
      seq: i + 1,
      name: 'unit',
      type: 'generic',
      kind: 'generic',
      is_compliant: true,
      artifact_fingerprint: null,
      target_artifacts: ['backend'],
      git_commit: COMMITS[0]!,
      original_type: null,
    }));
    expect(essentialAttestations(reports, new Set())).toHaveLength(5);
    const byFingerprint = reports.map((r) => ({
      ...r,
      target_artifacts: null,
      artifact_fingerprint: FP[2]!,
    }));
    expect(essentialAttestations(byFingerprint, new Set())).toHaveLength(5);
    expect(essentialAttestations(byFingerprint, new Set([FP[2]!]))).toHaveLength(2);
  });
});
