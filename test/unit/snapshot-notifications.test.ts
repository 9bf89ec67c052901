/** What a change of an environment notifies (domain/snapshot-notifications.ts, semantics.md section 7). */
import { describe, expect, it } from 'vitest';
import {
  scaledNotifications,
  snapshotNotifications,
  type ProvenanceSummary,
} from '../../services/api/src/domain/snapshot-notifications.js';

const base = { org: 'acme', timestamp: 1700000000, environment: 'prod' };
const snapshot = { index: 7, html_url: 'h', api_url: 'a' };
const record = (flowName: string): ProvenanceSummary => ({
  flowName,
  trailName: 't1',
  artifactCompliance: 'COMPLIANT',
  gitCommit: 'c0ffee',
  commitUrl: null,
  buildUrl: null,
  htmlUrl: `http://v/${flowName}`,
});
const startedA = { name: 'a', fingerprint: 'fa', instance_count: 2, verdict_hash: 'va' };

describe('snapshotNotifications (section 7)', () => {
  it.each([
    {
      rule: 'ON_STARTED_ARTIFACT on a start, ON_RELEASE per flow it was reported in',
      started: [startedA],
      exits: [],
      records: [['fa', [record('api'), record('web')]]] as const,
      compliance: { before: true, after: true },
      triggers: ['ON_STARTED_ARTIFACT', 'ON_RELEASE', 'ON_RELEASE'],
    },
    {
      rule: 'ON_EXITED_ARTIFACT on an exit',
      started: [],
      exits: [{ name: 'b', fingerprint: 'fb', count: 3 }],
      records: [],
      compliance: { before: null, after: null },
      triggers: ['ON_EXITED_ARTIFACT'],
    },
    {
      rule: 'ON_NON_COMPLIANT_ENV on a transition to non-compliant',
      started: [],
      exits: [],
      records: [],
      compliance: { before: true, after: false },
      triggers: ['ON_NON_COMPLIANT_ENV'],
    },
    {
      rule: 'no compliance trigger when it becomes unknown (policies detached)',
      started: [],
      exits: [],
      records: [],
      compliance: { before: true, after: null },
      triggers: [],
    },
  ])('$rule', (c) => {
    const events = snapshotNotifications({
      base,
      snapshot,
      compliance: c.compliance,
      started: c.started,
      exits: c.exits,
      verdicts: [{ hash: 'va', compliant: true }],
      startedRecords: new Map(c.records.map(([fp, r]) => [fp, [...r]])),
    });
    expect(events.map((e) => e.trigger)).toEqual(c.triggers);
  });

  it('payloads carry the snapshot with its status, and the first flow record as provenance', () => {
    const [event] = snapshotNotifications({
      base,
      snapshot,
      compliance: { before: false, after: true },
      started: [startedA],
      exits: [],
      verdicts: [{ hash: 'va', compliant: true }],
      startedRecords: new Map([['fa', [record('api')]]]),
    });
    expect(event).toEqual({
      ...base,
      snapshot: { index: 7, status: 'compliant', html_url: 'h', api_url: 'a' },
      trigger: 'ON_STARTED_ARTIFACT',
      description: '2 instances started running (from 0 to 2)',
      artifact: {
        name: 'a',
        fingerprint: 'fa',
        provenance: {
          flow: 'api',
          trail: 't1',
          status: 'compliant',
          commit: 'c0ffee',
          commit_url: null,
          build_url: null,
          html_url: 'http://v/api',
        },
      },
    });
  });
});

describe('scaledNotifications (rule 4: scaling makes no snapshot, but is told)', () => {
  it('one ON_SCALED_ARTIFACT per fingerprint whose count moved', () => {
    expect(scaledNotifications(base, [{ name: 'a', fingerprint: 'fa', was: 1, now: 3 }])).toEqual([
      {
        trigger: 'ON_SCALED_ARTIFACT',
        ...base,
        description: 'scaled from 1 to 3 instances',
        artifact: { name: 'a', fingerprint: 'fa' },
      },
    ]);
  });
});
