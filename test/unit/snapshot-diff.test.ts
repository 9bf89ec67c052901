import { describe, expect, it } from 'vitest';
import {
  diffRuntime,
  groupReport,
  reevaluationChange,
  reportKey,
  reportUnchanged,
  startedAnnotation,
  describeChange,
  type ReportEntry,
} from '../../services/api/src/domain/snapshot-diff.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);

const pod = (name: string, digests: Record<string, string>, ts = 1000): ReportEntry => ({
  podName: name,
  namespace: 'prod',
  digests,
  creationTimestamp: ts,
  owners: null,
});

function live(entries: ReportEntry[]) {
  return groupReport(entries).map((a) => ({
    fingerprint: a.fingerprint,
    instanceCount: a.instances.length,
    detailKey: a.detailKey,
  }));
}

describe('groupReport: one snapshot artifact per fingerprint (section 5)', () => {
  it.each([
    {
      case: 'pods of one image form one artifact with their count',
      entries: [pod('api-1', { 'api:1': A }), pod('api-2', { 'api:1': A })],
      expected: [{ fingerprint: A, name: 'api:1', count: 2 }],
    },
    {
      case: 'a pod running two images is an instance of each',
      entries: [pod('web-1', { 'web:1': B, 'sidecar:3': C })],
      expected: [
        { fingerprint: B, name: 'web:1', count: 1 },
        { fingerprint: C, name: 'sidecar:3', count: 1 },
      ],
    },
    {
      case: 'an empty digest is skipped and makes no artifact',
      entries: [{ taskArn: 't1', digests: { 'api:1': '' }, creationTimestamp: 5 }],
      expected: [],
    },
    {
      case: 'one fingerprint under two names takes the smallest name',
      entries: [pod('x-1', { 'zeta:1': A }), pod('x-2', { 'alpha:1': A })],
      expected: [{ fingerprint: A, name: 'alpha:1', count: 2 }],
    },
  ])('$case', ({ entries, expected }) => {
    expect(
      groupReport(entries).map((a) => ({
        fingerprint: a.fingerprint,
        name: a.name,
        count: a.instances.length,
      })),
    ).toEqual(expected);
  });

  it('orders instances so the same pods in another order give the same key', () => {
    const one = groupReport([pod('api-1', { 'api:1': A }), pod('api-2', { 'api:1': A })]);
    const two = groupReport([pod('api-2', { 'api:1': A }), pod('api-1', { 'api:1': A })]);
    expect(reportKey(one)).toBe(reportKey(two));
  });
});

describe('diffRuntime: spec rules 2, 3 and 4', () => {
  const base = [pod('api-1', { 'api:1': A }), pod('api-2', { 'api:1': A }), pod('web-1', { 'web:1': B })];
  it.each([
    {
      rule: 'rule 2: the same report twice makes no snapshot and changes nothing',
      next: base,
      expected: {
        started: [],
        exited: [],
        scaled: [],
        redetailed: [],
        snapshotDue: false,
      },
    },
    {
      rule: 'rule 4: 2 -> 3 replicas makes no snapshot',
      next: [...base, pod('api-3', { 'api:1': A })],
      expected: {
        started: [],
        exited: [],
        scaled: [A],
        redetailed: [],
        snapshotDue: false,
      },
    },
    {
      rule: 'rule 3: a restarted pod (new name and timestamp, same image) makes no snapshot',
      next: [pod('api-1', { 'api:1': A }), pod('api-9', { 'api:1': A }, 2000), pod('web-1', { 'web:1': B })],
      expected: {
        started: [],
        exited: [],
        scaled: [],
        redetailed: [A],
        snapshotDue: false,
      },
    },
    {
      rule: 'a new image makes a snapshot: one starts, one exits',
      next: [pod('api-1', { 'api:2': C }), pod('api-2', { 'api:2': C }), pod('web-1', { 'web:1': B })],
      expected: {
        started: [C],
        exited: [A],
        scaled: [],
        redetailed: [],
        snapshotDue: true,
      },
    },
    {
      rule: 'everything stopping makes a snapshot with every fingerprint exited',
      next: [],
      expected: {
        started: [],
        exited: [A, B],
        scaled: [],
        redetailed: [],
        snapshotDue: true,
      },
    },
  ])('$rule', ({ next, expected }) => {
    const reported = live(next);
    expect(diffRuntime(live(base), reported)).toEqual(expected);
  });
});

describe('reportUnchanged: spec rule 2', () => {
  const key = reportKey(groupReport([pod('api-1', { 'api:1': A })]));
  const other = reportKey(groupReport([pod('api-1', { 'api:2': C })]));
  it('rule 2: a report with the last report key changes nothing once there is a snapshot', () => {
    expect(reportUnchanged({ key, latestSnapshot: 3 }, key)).toBe(true);
  });
  it('rule 2: another key, no last report, or no snapshot yet is a change', () => {
    expect(reportUnchanged({ key, latestSnapshot: 3 }, other)).toBe(false);
    expect(reportUnchanged({ key: null, latestSnapshot: 3 }, key)).toBe(false);
    expect(reportUnchanged({ key, latestSnapshot: 0 }, key)).toBe(false);
  });
});

describe('annotations (section 5)', () => {
  it.each([
    { compliant: true, expected: 'started-compliant' },
    { compliant: false, expected: 'started-non-compliant' },
    { compliant: null, expected: 'started-unknown' },
  ] as const)('a start with compliance $compliant is $expected', ({ compliant, expected }) => {
    expect(startedAnnotation(compliant)).toBe(expected);
  });

  it.each([
    { before: [null, 'p'], after: [true, 'p'], expected: 'became-compliant' },
    { before: [true, 'p'], after: [false, 'p'], expected: 'became-non-compliant' },
    { before: [null, ''], after: [null, 'flow-a'], expected: 'updated-provenance' },
    { before: [true, 'p'], after: [true, 'p'], expected: null },
    { before: [false, 'p'], after: [true, 'q'], expected: 'became-compliant' },
  ] as const)('re-evaluation $before -> $after is $expected', ({ before, after, expected }) => {
    expect(
      reevaluationChange(
        { compliant: before[0], provenanceKey: before[1] },
        { compliant: after[0], provenanceKey: after[1] },
      ),
    ).toBe(expected);
  });

  it.each([
    { type: 'started-compliant', was: 0, now: 1, text: '1 instance started running (from 0 to 1)' },
    { type: 'started-unknown', was: 0, now: 3, text: '3 instances started running (from 0 to 3)' },
    { type: 'exited', was: 2, now: 0, text: '2 instances stopped running (from 2 to 0)' },
  ] as const)('describes $type $was -> $now', ({ type, was, now, text }) => {
    expect(describeChange(type, was, now)).toBe(text);
  });
});
