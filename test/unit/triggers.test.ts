import { describe, expect, it } from 'vitest';
import {
  actionsFor,
  complianceTrigger,
  emailMessage,
  invalidTriggers,
  retryDelayMs,
  slackMessage,
  webhookPayload,
  type NotificationEvent,
} from '../../services/api/src/domain/triggers.js';
import { parseOutboundAllowList, refusedAddress } from '../../services/api/src/domain/outbound-address.js';

const started: NotificationEvent = {
  trigger: 'ON_STARTED_ARTIFACT',
  org: 'acme',
  timestamp: 1692616493.7,
  environment: 'prod',
  description: '1 instance started running (from 0 to 1)',
  snapshot: {
    index: 12,
    status: 'compliant',
    html_url: 'http://v/acme/environments/prod/snapshots/12',
    api_url: 'http://v/api',
  },
  artifact: { name: '<script>alert(1)</script>', fingerprint: 'a'.repeat(64), provenance: null },
};

describe('triggers (section 7)', () => {
  it.each([
    { before: null, after: false, expected: 'ON_NON_COMPLIANT_ENV' },
    { before: true, after: false, expected: 'ON_NON_COMPLIANT_ENV' },
    { before: false, after: true, expected: 'ON_COMPLIANT_ENV' },
    { before: null, after: true, expected: 'ON_COMPLIANT_ENV' },
    { before: false, after: false, expected: null },
    { before: true, after: null, expected: null },
  ])('compliance $before -> $after fires $expected (transitions only)', ({ before, after, expected }) => {
    expect(complianceTrigger(before, after)).toBe(expected);
  });

  it('validates triggers against the action type', () => {
    expect(invalidTriggers('env', ['ON_STARTED_ARTIFACT', 'ON_RELEASE'])).toEqual(['ON_RELEASE']);
    expect(invalidTriggers('flow', ['ON_STARTED_TRAIL', 'ON_APPROVAL'])).toEqual([]);
  });

  it('reaches the actions of the same kind that name the environment and the trigger', () => {
    const actions = [
      { id: '1', type: 'env' as const, environments: ['prod'], flows: [], triggers: ['ON_STARTED_ARTIFACT'] },
      {
        id: '2',
        type: 'env' as const,
        environments: ['staging'],
        flows: [],
        triggers: ['ON_STARTED_ARTIFACT'],
      },
      { id: '3', type: 'env' as const, environments: ['prod'], flows: [], triggers: ['ON_EXITED_ARTIFACT'] },
      {
        id: '4',
        type: 'flow' as const,
        environments: [],
        flows: ['prod'],
        triggers: ['ON_STARTED_ARTIFACT'],
      },
    ];
    expect(actionsFor(actions, started).map((a) => a.id)).toEqual(['1']);
    expect(
      actionsFor([{ id: '5', type: 'flow', environments: [], flows: ['f'], triggers: ['ON_APPROVAL'] }], {
        ...started,
        trigger: 'ON_APPROVAL',
        flow: 'f',
      }),
    ).toEqual([]);
  });

  it('builds payload version 1.0', () => {
    expect(webhookPayload(started)).toEqual({
      version: '1.0',
      timestamp: '1692616493',
      org: 'acme',
      environment: 'prod',
      event_type: 'ARTIFACT_STARTED',
      description: '1 instance started running (from 0 to 1)',
      snapshot: {
        index: '12',
        status: 'compliant',
        html_url: 'http://v/acme/environments/prod/snapshots/12',
        api_url: 'http://v/api',
      },
      artifact: { name: '<script>alert(1)</script>', fingerprint: 'a'.repeat(64), provenance: null },
    });
  });

  it('escapes user text in Slack and e-mail', () => {
    expect(JSON.stringify(slackMessage(started))).not.toContain('<script>');
    expect(slackMessage(started).blocks).toBeInstanceOf(Array);
    const mail = emailMessage(started);
    expect(mail.html).toContain('&lt;script&gt;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.subject).toBe('[Verity] ARTIFACT_STARTED in environment prod (acme)');
  });

  it.each([
    { attempt: 1, random: 0, expected: 500 },
    { attempt: 1, random: 0.999, expected: 1000 },
    { attempt: 3, random: 0, expected: 2000 },
    { attempt: 30, random: 0, expected: 450_000 },
  ])('retry $attempt waits $expected ms with jitter $random', ({ attempt, random, expected }) => {
    expect(retryDelayMs(attempt, random)).toBe(expected);
  });
});

describe('outbound addresses (section 7)', () => {
  const none = parseOutboundAllowList('');
  if (!none.ok) {
    throw new Error('parse');
  }
  it.each([
    ['93.184.216.34', null],
    ['2606:4700::1111', null],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['192.168.1.1', 'private'],
    ['172.16.0.5', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
  ])('%s is refused for %s', (address, range) => {
    const reason = refusedAddress(address, 'hooks.example', none.value);
    if (range === null) {
      expect(reason).toBeNull();
    } else {
      expect(reason).toContain(range);
    }
  });

  it('lets the operator allow hosts and ranges', () => {
    const allow = parseOutboundAllowList('127.0.0.1, 10.0.0.0/8, hooks.internal');
    expect(allow.ok).toBe(true);
    if (!allow.ok) {
      return;
    }
    expect(refusedAddress('127.0.0.1', 'localhost', allow.value)).toBeNull();
    expect(refusedAddress('10.9.9.9', 'x', allow.value)).toBeNull();
    expect(refusedAddress('192.168.0.1', 'hooks.internal', allow.value)).toBeNull();
    expect(refusedAddress('192.168.0.1', 'other', allow.value)).toContain('private');
    expect(parseOutboundAllowList('10.0.0.0/99').ok).toBe(false);
  });
});
