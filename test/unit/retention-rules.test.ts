/** Retention rules (domain/retention.ts): which period applies, the operator's floor, what a hold keeps. */
import { describe, expect, it } from 'vitest';
import {
  appliedPeriod,
  belowMinimum,
  cutoffMs,
  describeHold,
  heldRangesOfAuditLog,
  heldRangesOfEnvironment,
  heldRangesOfFlow,
} from '../../services/api/src/domain/retention.js';

const NONE = { trails_days: 0, evidence_files_days: 0, snapshots_days: 0, audit_log_days: 0 };
const classes = {
  default: { trails_days: 30, snapshots_days: 90 },
  flows: { payments: { trails_days: 365 } },
  environments: { sandbox: { snapshots_days: 7 } },
};

describe('the period that applies', () => {
  it("takes the flow's own period, else the default's, else none (kept forever)", () => {
    expect(appliedPeriod(classes, 'trails_days', { kind: 'flow', name: 'payments' }, NONE)).toEqual({
      period: 'trails_days',
      days: 365,
      scope: 'flow',
      name: 'payments',
    });
    expect(appliedPeriod(classes, 'trails_days', { kind: 'flow', name: 'web' }, NONE)).toMatchObject({
      days: 30,
      scope: 'default',
      name: null,
    });
    expect(
      appliedPeriod(classes, 'snapshots_days', { kind: 'environment', name: 'sandbox' }, NONE),
    ).toMatchObject({
      days: 7,
      scope: 'environment',
    });
    expect(
      appliedPeriod(classes, 'evidence_files_days', { kind: 'flow', name: 'payments' }, NONE),
    ).toBeNull();
    expect(appliedPeriod(classes, 'audit_log_days', null, NONE)).toBeNull();
  });

  it('raises a period below a minimum the operator set after the class was stored', () => {
    const min = { ...NONE, snapshots_days: 30 };
    expect(
      appliedPeriod(classes, 'snapshots_days', { kind: 'environment', name: 'sandbox' }, min)?.days,
    ).toBe(30);
  });

  it('puts the cutoff whole days before the time of the run', () => {
    const applied = appliedPeriod(classes, 'trails_days', null, NONE)!;
    expect(cutoffMs(applied, Date.parse('2026-03-31T00:00:00Z'))).toBe(Date.parse('2026-03-01T00:00:00Z'));
  });
});

describe('the operator minimum', () => {
  it('names every period below it, where it was set', () => {
    const min = { ...NONE, trails_days: 60, snapshots_days: 10 };
    expect(belowMinimum(classes, min)).toEqual({
      'default.trails_days':
        'is 30; this server keeps trails at least 60 days (VERITY_RETENTION_MIN_TRAILS_DAYS)',
      'environments.sandbox.snapshots_days':
        'is 7; this server keeps snapshots at least 10 days (VERITY_RETENTION_MIN_SNAPSHOTS_DAYS)',
    });
    expect(belowMinimum(classes, NONE)).toEqual({});
  });
});

describe('what a hold keeps', () => {
  const q1 = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-03-31T00:00:00Z') };
  const byFlow = { flows: ['payments'], environments: [], ...q1 };
  const byEnv = { flows: [], environments: ['prod'], from: null, to: null };
  const everything = { flows: [], environments: [], from: null, to: null };

  it('keeps a flow, an environment, or with neither the whole organization', () => {
    expect(heldRangesOfFlow([byFlow, byEnv], 'payments')).toEqual([q1]);
    expect(heldRangesOfFlow([byFlow, byEnv], 'web')).toEqual([]);
    expect(heldRangesOfEnvironment([byFlow, byEnv], 'prod')).toEqual([{ from: null, to: null }]);
    expect(heldRangesOfAuditLog([byFlow, byEnv])).toEqual([]);
    expect(heldRangesOfAuditLog([everything])).toEqual([{ from: null, to: null }]);
    expect(heldRangesOfFlow([everything], 'web')).toHaveLength(1);
  });

  it('says in words what it keeps', () => {
    expect(describeHold(byFlow)).toBe(
      'the trails and evidence files of flow payments from 2026-01-01T00:00:00.000Z to 2026-03-31T00:00:00.000Z',
    );
    expect(describeHold({ ...byEnv, environments: ['prod', 'staging'] })).toBe(
      'the snapshots of environments prod, staging',
    );
    expect(describeHold({ ...everything, to: q1.to })).toBe(
      'every trail, evidence file, snapshot and audit log entry of the organization up to 2026-03-31T00:00:00.000Z',
    );
  });
});
