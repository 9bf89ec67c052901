/**
 * What a snapshot means for delivery (domain/deployments.ts): which started fingerprints are
 * deployments or rollbacks, what each replaced, and the commits it brought.
 */
import { describe, expect, it } from 'vitest';
import {
  changeLeadTime,
  commitOf,
  deployedCommits,
  imageRepository,
  leadSeconds,
  MAX_REPLACED,
  planDeployments,
  type RunningFingerprint,
} from '../../services/api/src/domain/deployments.js';

const running = (fingerprint: string, name: string, flows: string[] = []): RunningFingerprint => ({
  fingerprint,
  name,
  flows: flows.map((f) => ({ flow_name: f, artifact_id: `${f}-${fingerprint}` })),
});
const commit = (sha1: string, timestamp: number | null) => ({ sha1, timestamp, author: null, message: null });

describe('imageRepository', () => {
  it.each([
    ['registry.example/shop:1.2', 'registry.example/shop'],
    ['registry.example:5000/shop:1.2', 'registry.example:5000/shop'],
    ['registry.example:5000/shop', 'registry.example:5000/shop'],
    ['shop@sha256:abc', 'shop'],
    ['registry.example/shop:1@sha256:abc', 'registry.example/shop'],
    ['shop', 'shop'],
  ])('%s is %s without its tag or digest', (name, repo) => {
    expect(imageRepository(name)).toBe(repo);
  });
});

describe('planDeployments', () => {
  it('deploys a fingerprint that never ran here, replacing what ran under its flow', () => {
    const before = [running('a', 'shop:1', ['shop']), running('w', 'web:1', ['web'])];
    expect(planDeployments([{ ...running('b', 'shop:2', ['shop']), ranBefore: false }], before)).toEqual([
      {
        fingerprint: 'b',
        name: 'shop:2',
        artifactId: 'shop-b',
        flowName: 'shop',
        rollback: false,
        replaced: [{ fingerprint: 'a', name: 'shop:1', artifactId: 'shop-a' }],
      },
    ]);
  });

  it('attributes a fingerprint of several flows to the flow whose build it replaced', () => {
    const before = [running('a', 'shop:1', ['shop'])];
    const [d] = planDeployments([{ ...running('b', 'shop:2', ['lib', 'shop']), ranBefore: false }], before);
    expect(d).toMatchObject({ artifactId: 'shop-b', flowName: 'shop', replaced: [{ fingerprint: 'a' }] });
  });

  it('matches artifacts without provenance by image repository', () => {
    const before = [running('a', 'debug:1'), running('c', 'other:1')];
    const [d] = planDeployments([{ ...running('b', 'debug:2'), ranBefore: false }], before);
    expect(d).toMatchObject({
      artifactId: null,
      flowName: null,
      replaced: [{ fingerprint: 'a', artifactId: null }],
    });
  });

  it('marks a fingerprint that ran before and replaces another as a rollback', () => {
    const before = [running('b', 'shop:2', ['shop'])];
    const [d] = planDeployments([{ ...running('a', 'shop:1', ['shop']), ranBefore: true }], before);
    expect(d).toMatchObject({ rollback: true, replaced: [{ fingerprint: 'b' }] });
  });

  it('makes no deployment of a fingerprint that comes back replacing nothing (a restart)', () => {
    expect(planDeployments([{ ...running('a', 'shop:1', ['shop']), ranBefore: true }], [])).toEqual([]);
  });

  it('names at most MAX_REPLACED replaced fingerprints, however many ran under the flow', () => {
    const before = Array.from({ length: 500 }, (_, i) => running(`old${i}`, `shop:${i}`, ['shop']));
    const started = Array.from({ length: 500 }, (_, i) => ({
      ...running(`new${i}`, `shop:n${i}`, ['shop']),
      ranBefore: false,
    }));
    const planned = planDeployments(started, before);
    expect(planned).toHaveLength(500);
    expect(planned.every((d) => d.replaced.length === MAX_REPLACED)).toBe(true);
  });

  it('never counts a fingerprint started in the same snapshot as replaced', () => {
    const started = [
      { ...running('a', 'shop:1', ['shop']), ranBefore: false },
      { ...running('b', 'shop:2', ['shop']), ranBefore: false },
    ];
    expect(planDeployments(started, [running('a', 'shop:1', ['shop'])]).map((d) => d.replaced)).toEqual([
      [],
      [],
    ]);
  });
});

describe('deployedCommits', () => {
  it('keeps the commits after the replaced one up to the deployed one, oldest first, once each', () => {
    const own = commit('c3', 300);
    const candidates = [
      commit('c4', 400),
      commit('c3', 300),
      commit('c2', 200),
      commit('c1', 100),
      commit('c2', 200),
    ];
    expect(deployedCommits(own, candidates, 100).map((c) => c.sha1)).toEqual(['c2', 'c3']);
  });

  it('leaves out commits without a time when the replaced commit has one', () => {
    expect(deployedCommits(commit('c3', 300), [commit('cx', null)], 100).map((c) => c.sha1)).toEqual(['c3']);
  });

  it('takes every candidate up to its own when nothing was replaced', () => {
    expect(deployedCommits(commit('c3', 300), [commit('c1', 100)], null).map((c) => c.sha1)).toEqual([
      'c1',
      'c3',
    ]);
  });

  it('keeps at most 100, the oldest', () => {
    const many = Array.from({ length: 150 }, (_, i) => commit(`c${i}`, i));
    const kept = deployedCommits(commit('own', 1000), many, null);
    expect(kept).toHaveLength(100);
    expect(kept[0]!.sha1).toBe('c0');
  });
});

describe('lead times', () => {
  const at = new Date(10_000_000);
  it('measures seconds from a commit time or a date, and nothing from nothing', () => {
    expect(leadSeconds(at, 9_000)).toBe(1000);
    expect(leadSeconds(at, new Date(9_000_000))).toBe(1000);
    expect(leadSeconds(at, null)).toBeNull();
    expect(leadSeconds(at, undefined)).toBeNull();
  });

  it('measures a change from its oldest timed commit', () => {
    expect(changeLeadTime(at, [commit('a', 9_500), commit('b', null), commit('c', 9_000)])).toBe(1000);
    expect(changeLeadTime(at, [commit('b', null)])).toBeNull();
  });

  it('reads a commit from git_commit_info, its first message line only', () => {
    expect(commitOf({ sha1: 'abc', timestamp: 5, author: 'A <a@x>', message: 'one\ntwo' })).toEqual({
      sha1: 'abc',
      timestamp: 5,
      author: 'A <a@x>',
      message: 'one',
    });
    expect(commitOf({ sha1: '', timestamp: 5 })).toBeNull();
    expect(commitOf(null)).toBeNull();
    expect(commitOf({ sha1: 'abc', timestamp: 'soon' })).toMatchObject({ timestamp: null });
  });
});
