/**
 * What a snapshot writes (domain/snapshot-plan.ts), by the rules of semantics.md section 5 and
 * section 6, and the names of the tri-state compliance (domain/compliance-state.ts).
 */
import { describe, expect, it } from 'vitest';
import { complianceState } from '../../services/api/src/domain/compliance-state.js';
import {
  planReevaluation,
  planReport,
  provenanceKey,
  samePolicies,
  type CurrentState,
  type PlannedVerdict,
  type ReportedState,
} from '../../services/api/src/domain/snapshot-plan.js';

const reported = (
  fingerprint: string,
  instanceCount: number,
  detailHash = `d-${fingerprint}`,
): ReportedState => {
  const instances = Array.from({ length: instanceCount }, (_, i) => ({
    podName: `p${i}`,
    creationTimestamp: i,
  }));
  return {
    fingerprint,
    name: `app-${fingerprint}`,
    instances,
    // As groupReport makes it: the instances' canonical JSON text.
    detailKey: JSON.stringify(instances),
    detailHash,
    instanceCount,
  };
};

const link = (artifactId: string, flow = 'api') => ({
  flow_name: flow,
  trail_name: 't1',
  artifact_id: artifactId,
});

const current = (
  fingerprint: string,
  instanceCount: number,
  extra: Partial<CurrentState> = {},
): CurrentState => ({
  fingerprint,
  name: `app-${fingerprint}`,
  instance_count: instanceCount,
  detail_hash: `d-${fingerprint}`,
  verdict_hash: `v-${fingerprint}`,
  run_start: 1,
  compliant: true,
  provenance: [],
  ...extra,
});

describe('planReport (section 5)', () => {
  it.each([
    {
      rule: 'a start (0 -> n) begins a run at the new snapshot with its verdict',
      started: [reported('a', 2)],
      currentStates: [] as CurrentState[],
      exited: [] as string[],
      states: [{ fingerprint: 'a', change: 'started', was_count: 0, instance_count: 2, run_start: 3 }],
      replaced: [] as string[],
      exits: [] as Array<{ fingerprint: string; count: number }>,
    },
    {
      rule: 'rule 4: a count that moved since the last snapshot is recorded with this one',
      started: [reported('a', 1)],
      currentStates: [current('b', 1)],
      reportedAlso: [reported('b', 3)],
      exited: [],
      states: [
        { fingerprint: 'a', change: 'started', was_count: 0, instance_count: 1, run_start: 3 },
        { fingerprint: 'b', change: 'unchanged', was_count: 1, instance_count: 3, run_start: 1 },
      ],
      replaced: ['b'],
      exits: [],
    },
    {
      rule: 'rule 3: a running fingerprint whose count did not move keeps its state',
      started: [reported('a', 1)],
      currentStates: [current('b', 2)],
      reportedAlso: [reported('b', 2, 'other-pods')],
      exited: [],
      states: [{ fingerprint: 'a', change: 'started', was_count: 0, instance_count: 1, run_start: 3 }],
      replaced: [],
      exits: [],
    },
    {
      rule: 'an exit (n -> 0) ends the run with the count it last ran with',
      started: [],
      currentStates: [current('b', 2)],
      exited: ['b'],
      live: [{ fingerprint: 'b', instance_count: 4 }],
      states: [],
      replaced: [],
      exits: [{ fingerprint: 'b', count: 4 }],
    },
  ])('$rule', (c) => {
    const all = [...c.started, ...(c.reportedAlso ?? [])];
    const plan = planReport({
      index: 3,
      started: c.started,
      verdicts: new Map(
        c.started.map((a) => [a.fingerprint, { hash: `v-${a.fingerprint}`, compliant: true }]),
      ),
      reported: new Map(all.map((a) => [a.fingerprint, a])),
      current: c.currentStates,
      exited: c.exited,
      live: c.live ?? [],
    });
    expect(plan.newStates).toEqual(c.states.map((s) => expect.objectContaining({ ...s, from_index: 3 })));
    expect(plan.replaced).toEqual(c.replaced);
    expect(plan.exits).toEqual(c.exits.map((e) => expect.objectContaining(e)));
    expect(plan.details.map((d) => d.hash)).toEqual(plan.newStates.map((s) => s.detail_hash));
  });

  it('section 6: the environment compliance reads every fingerprint still running', () => {
    const plan = planReport({
      index: 2,
      started: [reported('a', 1)],
      verdicts: new Map([['a', { hash: 'v-a', compliant: null }]]),
      reported: new Map([['a', reported('a', 1)]]),
      current: [current('b', 1, { compliant: false }), current('c', 1, { compliant: true })],
      exited: ['c'],
      live: [],
    });
    expect(plan.compliance).toEqual([null, false]);
  });
});

describe('planReevaluation (section 6)', () => {
  const verdict = (fingerprint: string, v: Partial<PlannedVerdict> = {}): [string, PlannedVerdict] => [
    fingerprint,
    { hash: `v-${fingerprint}`, compliant: true, provenance: [], ...v },
  ];

  it.each([
    {
      rule: 'nothing changed and the same policies: no snapshot',
      state: current('a', 1),
      verdict: verdict('a'),
      policiesChanged: false,
      change: undefined,
    },
    {
      rule: 'the same verdicts under other policy versions: a snapshot, states unchanged',
      state: current('a', 1),
      verdict: verdict('a'),
      policiesChanged: true,
      change: null,
    },
    {
      rule: 'a verdict that became non-compliant: became-non-compliant',
      state: current('a', 1),
      verdict: verdict('a', { hash: 'v2', compliant: false }),
      policiesChanged: false,
      change: 'became-non-compliant',
    },
    {
      rule: 'provenance from another artifact record: updated-provenance',
      state: current('a', 1, { provenance: [link('r1')] }),
      verdict: verdict('a', { hash: 'v2', provenance: [link('r1'), link('r2', 'web')] }),
      policiesChanged: false,
      change: 'updated-provenance',
    },
  ])('$rule', (c) => {
    const plan = planReevaluation({
      index: 5,
      current: [c.state],
      verdicts: new Map([c.verdict]),
      live: new Map(),
      policiesChanged: c.policiesChanged,
    });
    if (c.change === undefined) {
      expect(plan).toBeNull();
      return;
    }
    expect(plan).not.toBeNull();
    expect(plan!.newStates.map((s) => s.change)).toEqual(c.change === null ? [] : [c.change]);
  });

  it('section 5: a fingerprint newly linked to an artifact record tells that record where it runs', () => {
    const plan = planReevaluation({
      index: 5,
      current: [current('a', 1, { provenance: [link('r1')], run_start: 2 })],
      verdicts: new Map([verdict('a', { hash: 'v2', provenance: [link('r1'), link('r2')] })]),
      live: new Map([['a', { instance_count: 3, detail_hash: 'd2', detail: [] }]]),
      policiesChanged: false,
    });
    expect(plan!.linked).toEqual([
      { fingerprint: 'a', snapshotIndex: 2, instanceCount: 3, artifactIds: ['r2'] },
    ]);
    expect(plan!.newStates[0]).toMatchObject({ instance_count: 3, was_count: 1, detail_hash: 'd2' });
    expect(plan!.details).toEqual([{ hash: 'd2', detail: '[]' }]);
  });

  it('provenance compares as a set of flow, trail and artifact record', () => {
    expect(provenanceKey([link('r1'), link('r2', 'web')])).toBe(
      provenanceKey([link('r2', 'web'), link('r1')]),
    );
    expect(provenanceKey([link('r1')])).not.toBe(provenanceKey([link('r2')]));
  });

  it.each([
    { a: [{ id: 'p', version: 1 }], b: [{ id: 'p', version: 1 }], same: true },
    { a: [{ id: 'p', version: 1 }], b: [{ id: 'p', version: 2 }], same: false },
    { a: [], b: [{ id: 'p', version: 1 }], same: false },
  ])('policies compare by id and version: $same', ({ a, b, same }) => {
    expect(samePolicies(a, b)).toBe(same);
  });
});

describe('complianceState (section 6: unknown without policies)', () => {
  it.each([
    { compliant: true, upper: 'COMPLIANT', lower: 'compliant' },
    { compliant: false, upper: 'NON-COMPLIANT', lower: 'non-compliant' },
    { compliant: null, upper: 'UNKNOWN', lower: 'unknown' },
  ])('$compliant is $upper', ({ compliant, upper, lower }) => {
    expect(complianceState(compliant)).toBe(upper);
    expect(complianceState(compliant, 'lower')).toBe(lower);
  });
});
