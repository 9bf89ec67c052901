import { describe, expect, it } from 'vitest';
import { keyExpiryEvent } from '../../services/api/src/domain/api-key-expiry.js';
import {
  normalizeEmail,
  normalizeTargets,
  normalizeWebhookUrl,
} from '../../services/api/src/domain/notification-targets.js';
import { emailMessage, slackMessage, webhookPayload } from '../../services/api/src/domain/triggers.js';

describe('notification config targets are stored normalized', () => {
  it.each([
    ['https://Hooks.Example.COM/x/', 'https://hooks.example.com/x'],
    ['https://hooks.example.com/', 'https://hooks.example.com'],
    ['https://hooks.example.com', 'https://hooks.example.com'],
    ['https://hooks.example.com/a//', 'https://hooks.example.com/a'],
    ['https://hooks.example.com/a/?q=1', 'https://hooks.example.com/a?q=1'],
    ['https://HOOKS.example.com:8443/A/B/', 'https://hooks.example.com:8443/A/B'],
  ])('%s is stored as %s', (given, stored) => {
    expect(normalizeWebhookUrl(given)).toBe(stored);
  });

  it.each([
    ['Ops@Example.COM', 'Ops@example.com'],
    ['ops@example.com', 'ops@example.com'],
    ['"a@b"@Example.com', '"a@b"@example.com'],
  ])('%s is stored as %s', (given, stored) => {
    expect(normalizeEmail(given)).toBe(stored);
  });

  it('names every target that cannot be stored', () => {
    const result = normalizeTargets([
      { type: 'EMAIL', emails: ['a@example.com', 'a@EXAMPLE.com'] },
      { type: 'WEBHOOK', webhook: 'https://h.example.com/x', payload_version: '1.0' },
      { type: 'SLACK', webhook: 'https://H.example.com/x/' },
      { type: 'EMAIL', emails: ['b@example.com'] },
    ]);
    expect(result).toEqual({
      ok: false,
      errors: {
        'body.targets[0].emails': "'a@example.com' is listed twice",
        'body.targets[2].webhook': 'the same URL as targets[1]',
        'body.targets[3]': 'one EMAIL target holds every address (see targets[0])',
      },
    });
  });

  it('keeps the kind and payload version of each target', () => {
    expect(
      normalizeTargets([
        { type: 'WEBHOOK', webhook: 'https://h.example.com/x/', payload_version: '1.0' },
        { type: 'SLACK', webhook: 'https://s.example.com/y' },
      ]),
    ).toEqual({
      ok: true,
      targets: [
        { type: 'WEBHOOK', webhook: 'https://h.example.com/x', payload_version: '1.0' },
        { type: 'SLACK', webhook: 'https://s.example.com/y' },
      ],
    });
  });
});

describe('API-key expiry warnings say what expires when', () => {
  const key = {
    org: 'acme',
    serviceAccount: 'deployer',
    keyId: 'k1',
    description: 'ci <main>',
    expiresAt: 1_800_000_000,
    expiresAtUtc: '2027-01-15T08:00:00.000Z',
  };

  it('before expiry: API_KEY_EXPIRING with the days left', () => {
    const event = keyExpiryEvent({ ...key, thresholdDays: 14 }, 1_799_000_000);
    expect(webhookPayload(event)).toEqual({
      version: '1.0',
      timestamp: '1799000000',
      org: 'acme',
      event_type: 'API_KEY_EXPIRING',
      description:
        "API key 'ci <main>' (k1) of service account 'deployer' expires within 14 days, at 2027-01-15T08:00:00.000Z. Rotate it before then.",
      api_key: {
        id: 'k1',
        description: 'ci <main>',
        service_account: 'deployer',
        expires_at: 1_800_000_000,
        expires_at_utc: '2027-01-15T08:00:00.000Z',
        days_before_expiry: 14,
      },
    });
    expect(event.trigger).toBe('ON_API_KEY_EXPIRING');
  });

  it('at expiry: API_KEY_EXPIRED', () => {
    const event = keyExpiryEvent({ ...key, thresholdDays: 0 }, 1_800_000_100);
    expect(event.trigger).toBe('ON_API_KEY_EXPIRED');
    expect(webhookPayload(event).event_type).toBe('API_KEY_EXPIRED');
    expect(event.description).toMatch(/expired at 2027-01-15T08:00:00.000Z/);
  });

  it('e-mail and Slack name the account and the key, escaped', () => {
    const event = keyExpiryEvent({ ...key, thresholdDays: 3 }, 1_799_800_000);
    const mail = emailMessage(event);
    expect(mail.subject).toBe('[Verity] API_KEY_EXPIRING: service account deployer (acme)');
    expect(mail.text).toContain('Key: ci <main> (k1)');
    expect(mail.html).toContain('ci &lt;main&gt; (k1)');
    expect(mail.html).not.toContain('<main>');
    const slack = JSON.stringify(slackMessage(event));
    expect(slack).toContain('ci &lt;main&gt; (k1)');
    expect(slack).toContain('expires within 3 days');
  });
});
