/**
 * How the console says where a page stands in a list, how many a repository runs, and how many
 * removals the retention page shows.
 */
import { describe, expect, it } from 'vitest';
import { grouped, rangeOf } from '../../services/console/src/lib/counts.js';
import { runningText } from '../../services/console/src/features/insight/figures.js';
import {
  nextDispositionPage,
  removalsShown,
  removalWhat,
} from '../../services/console/src/features/access/removals.js';

describe('counts in the console', () => {
  it('groups thousands', () => {
    expect(grouped(0)).toBe('0');
    expect(grouped(999)).toBe('999');
    expect(grouped(10_000)).toBe('10,000');
  });

  it('says which rows of how many a page shows', () => {
    expect(rangeOf({ offset: 0, shown: 50, total: 1234 }, 'deployment')).toBe('1–50 of 1,234 deployments');
    expect(rangeOf({ offset: 50, shown: 2, total: 52 }, 'deployment')).toBe('51–52 of 52 deployments');
    expect(rangeOf({ offset: 0, shown: 1, total: 1 }, 'event')).toBe('1–1 of 1 event');
    expect(rangeOf({ offset: 0, shown: 3, total: 3 }, 'entry', 'entries')).toBe('1–3 of 3 entries');
    expect(rangeOf({ offset: 100, shown: 50, total: 400 })).toBe('101–150 of 400');
    expect(rangeOf({ offset: 5, shown: 0, total: 5 }, 'deployment')).toBe('none of 5 deployments');
  });

  it('says "more than" a total the API stopped counting, and a page whose start it did not count', () => {
    expect(rangeOf({ offset: 0, shown: 50, total: 10_000, capped: true }, 'deployment')).toBe(
      '1–50 of more than 10,000 deployments',
    );
    expect(rangeOf({ offset: 9_990, shown: 10, total: 10_000, capped: true })).toBe(
      '9,991–10,000 of more than 10,000',
    );
    expect(rangeOf({ offset: null, shown: 50, total: 10_000, capped: true }, 'deployment')).toBe(
      '50 deployments past the first 10,000, of more than 10,000',
    );
  });

  it('says how many artifacts of a repository run, and how many of them a cut list shows', () => {
    expect(runningText(1, 1)).toBe('1 artifact running');
    expect(runningText(3, 3)).toBe('3 artifacts running');
    expect(runningText(0, 1200)).toBe(
      'Showing 0 of 1,200 artifacts running: the list stops at 1,000 over all environments.',
    );
    expect(runningText(950, 2000)).toBe(
      'Showing 950 of 2,000 artifacts running: the list stops at 1,000 over all environments.',
    );
  });

  it('says each removal in words: what, how many, and whose retention rule', () => {
    const rule = (scope: 'default' | 'flow' | 'environment', name: string | null, days: number) => ({
      period: 'trails_days' as const,
      days,
      scope,
      name,
    });
    expect(removalWhat({ count: 12, kind: 'evidence_files', rule: rule('default', null, 90) })).toBe(
      '12 evidence files older than 90 days (the default retention of evidence files)',
    );
    expect(removalWhat({ count: 1, kind: 'trails', rule: rule('flow', 'web', 365) })).toBe(
      "1 trail older than 365 days (flow web's retention of trails and attestations)",
    );
    expect(removalWhat({ count: 2500, kind: 'audit_log', rule: rule('default', null, 1095) })).toBe(
      '2,500 audit log entries older than 1,095 days (the default retention of the audit log)',
    );
    expect(removalWhat({ count: 3, kind: 'snapshots', rule: rule('environment', 'prod', 30) })).toBe(
      "3 snapshots older than 30 days (environment prod's retention of snapshots)",
    );
    expect(removalWhat({ count: 4, kind: 'trails', rule: rule('flow', null, 30) })).toBe(
      "4 trails older than 30 days (a flow's retention of trails and attestations)",
    );
  });

  it('says how many removals the retention page shows, and which page the API names next', () => {
    expect(removalsShown(20, 57, false)).toBe('Showing 1–20 of 57 removals');
    expect(removalsShown(40, 57, false)).toBe('Showing 1–40 of 57 removals');
    expect(removalsShown(1, 1, false)).toBe('Showing 1–1 of 1 removal');
    expect(removalsShown(20, 10_000, true)).toBe('Showing 1–20 of more than 10,000 removals');
    // a run after the first page was read: never fewer in all than are shown
    expect(removalsShown(25, 20, false)).toBe('Showing 1–25 of 25 removals');
    expect(
      nextDispositionPage('https://verity.example/api/v2/retention/acme/dispositions?page=2&per_page=20'),
    ).toBe(2);
    expect(nextDispositionPage('/api/v2/retention/acme/dispositions?page=7&per_page=20')).toBe(7);
    expect(nextDispositionPage(null)).toBeUndefined();
    expect(nextDispositionPage('/api/v2/retention/acme/dispositions?per_page=20')).toBeUndefined();
  });
});
