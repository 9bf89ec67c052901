/** Planning in slices: the same result in one piece or sliced, and other work runs between slices. */
import { describe, expect, it } from 'vitest';
import { planDeployments, planDeploymentsSteps } from '../../services/api/src/domain/deployments.js';
import {
  planReport,
  planReportSteps,
  type ReportPlanInput,
} from '../../services/api/src/domain/snapshot-plan.js';
import { diffRuntime, diffRuntimeSteps, SLICE } from '../../services/api/src/domain/snapshot-diff.js';
import { drain, inSlices, mapSteps, STEP_ITEMS, type Steps } from '../../services/api/src/slices.js';

function* counting(n: number): Steps<number> {
  let sum = 0;
  for (let i = 1; i <= n; i++) {
    sum += i;
    if (i % 10 === 0) {
      yield;
    }
  }
  return sum;
}

const yields = <T>(steps: Steps<T>) => {
  let count = 0;
  while (!steps.next().done) {
    count += 1;
  }
  return count;
};

function reportInput(n: number): ReportPlanInput {
  const started = Array.from({ length: n }, (_, i) => ({
    fingerprint: `fp${i}`,
    name: `r.example/svc-${i}:v2`,
    detailHash: `d${i}`,
    instances: [],
    detailKey: '[]',
    instanceCount: 1,
  }));
  const current = Array.from({ length: n }, (_, i) => ({
    fingerprint: `old${i}`,
    name: `r.example/svc-${i}:v1`,
    instance_count: 1,
    detail_hash: `o${i}`,
    verdict_hash: `v${i}`,
    run_start: 1,
    compliant: null,
    provenance: [],
  }));
  return {
    index: 2,
    started,
    verdicts: new Map(started.map((s) => [s.fingerprint, { hash: `h-${s.fingerprint}`, compliant: null }])),
    reported: new Map(started.map((s) => [s.fingerprint, s])),
    current,
    exited: current.map((c) => c.fingerprint),
    live: current.map((c) => ({ fingerprint: c.fingerprint, instance_count: 1 })),
  };
}

describe('slices', () => {
  it('drain and inSlices return what the steps compute', async () => {
    expect(drain(counting(100))).toBe(5050);
    expect(await inSlices(counting(100))).toBe(5050);
  });

  it('inSlices lets work queued meanwhile run before it finishes', async () => {
    const order: string[] = [];
    const done = inSlices(counting(100)).then(() => order.push('sliced'));
    setImmediate(() => order.push('other request'));
    await done;
    expect(order).toEqual(['other request', 'sliced']);
  });

  it('a rollout of every image plans the same in slices as in one piece, one slice per STEP_ITEMS fingerprints', async () => {
    const n = 5 * STEP_ITEMS;
    const input = reportInput(n);
    const sliced = await inSlices(planReportSteps(input));
    expect(sliced).toEqual(planReport(input));
    expect(sliced.newStates).toHaveLength(n);
    expect(sliced.exits).toHaveLength(n);
    // started and current fingerprints together
    expect(yields(planReportSteps(input))).toBe((2 * n) / STEP_ITEMS);

    const started = input.started.map((s) => ({
      fingerprint: s.fingerprint,
      name: s.name,
      flows: [],
      ranBefore: false,
    }));
    const before = input.current.map((c) => ({ fingerprint: c.fingerprint, name: c.name, flows: [] }));
    const deployments = await inSlices(planDeploymentsSteps(started, before));
    expect(deployments).toEqual(planDeployments(started, before));
    expect(deployments).toHaveLength(n);
    expect(deployments[7]!.replaced).toEqual([
      { fingerprint: 'old7', name: 'r.example/svc-7:v1', artifactId: null },
    ]);
    expect(yields(planDeploymentsSteps(started, before))).toBe((2 * n) / STEP_ITEMS);
  });

  it('a rollout of every image diffs the same in slices as in one piece, and so do mapped rows', async () => {
    const n = 3 * SLICE;
    const live = Array.from({ length: n }, (_, i) => ({
      fingerprint: `old${i}`,
      instanceCount: 1,
      detailKey: 'd',
    }));
    const reported = Array.from({ length: n }, (_, i) => ({
      fingerprint: i === 0 ? 'old0' : `new${i}`,
      instanceCount: i === 0 ? 2 : 1,
      detailKey: 'd',
    }));
    const sliced = await inSlices(diffRuntimeSteps(live, reported));
    expect(sliced).toEqual(diffRuntime(live, reported));
    expect(sliced).toMatchObject({ scaled: ['old0'], snapshotDue: true });
    expect(sliced.started).toHaveLength(n - 1);
    expect(sliced.exited).toHaveLength(n - 1);
    // live twice (index, then exits) and reported once
    expect(yields(diffRuntimeSteps(live, reported))).toBe((3 * n) / SLICE);

    const rows = await inSlices(mapSteps(sliced.started, (fp) => ({ fingerprint: fp })));
    expect(rows.map((r) => r.fingerprint)).toEqual(sliced.started);
    expect(yields(mapSteps(sliced.started, (fp) => fp))).toBe(Math.floor((n - 1) / STEP_ITEMS));
  });
});
