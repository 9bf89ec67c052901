/** Ready/Reconciling/Stalled conditions as the operator writes them. */
import { describe, expect, it } from 'vitest';
import {
  readyConditions,
  retryingConditions,
  setCondition,
  stalledConditions,
} from '../../services/operator/src/conditions.js';

const t0 = new Date('2026-11-01T10:00:00Z');
const t1 = new Date('2026-11-01T10:05:00Z');

describe('conditions', () => {
  it('moves lastTransitionTime only when the status changes', () => {
    const a = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: 'ApiUnavailable', message: 'down' },
      1,
      t0,
    );
    const b = setCondition(
      a,
      { type: 'Ready', status: 'False', reason: 'ApiUnavailable', message: 'still down' },
      1,
      t1,
    );
    expect(b[0]!.lastTransitionTime).toBe('2026-11-01T10:00:00Z');
    expect(b[0]!.message).toBe('still down');
    const c = setCondition(b, { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'ok' }, 2, t1);
    expect(c[0]).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-11-01T10:05:00Z',
      observedGeneration: 2,
    });
  });

  it('marks a retryable failure not ready and reconciling, without stalling', () => {
    const stalled = stalledConditions([], 3, 'InvalidSpec', 'bad', t0);
    const retry = retryingConditions(stalled, 4, 'ApiUnavailable', 'connection refused', t1);
    expect(retry.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'False'],
      ['Reconciling', 'True'],
    ]);
  });

  it('marks an invalid spec stalled, and success clears both', () => {
    const stalled = stalledConditions([], 3, 'InvalidSpec', 'policy content is not YAML', t0);
    expect(stalled.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', 'False', 'InvalidSpec'],
      ['Stalled', 'True', 'InvalidSpec'],
    ]);
    const ready = readyConditions(stalled, 4, 'Matches Verity', t1);
    expect(ready).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Succeeded',
        message: 'Matches Verity',
        lastTransitionTime: '2026-11-01T10:05:00Z',
        observedGeneration: 4,
      },
    ]);
  });
});
