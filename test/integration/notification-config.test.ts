/**
 * Notification configs as the Terraform provider sends them (`kosli_notification_config`), and
 * the API-key expiry warnings they direct: 14 and 3 days before a service-account key expires
 * and on expiry, once each, to real receivers started here (an https server trusted through
 * VERITY_OUTBOUND_CA, and an SMTP server). The app clock moves; the sweep and the notifier are
 * driven by hand, except after the restart, where the app's own loops run.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import { signWebhook } from '../../services/api/src/domain/webhook-signing.js';
import { newId } from '../../services/api/src/ids.js';
import { createServer as createTcpServer } from 'node:net';
import { openDatabase } from '../../services/api/src/storage/create-db.js';
import { isDatabaseUnavailable } from '../../services/api/src/storage/errors.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { usersRepository } from '../../services/api/src/storage/repositories/users.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { terraformClient } from '../helpers/terraform.js';
import { until } from '../helpers/wait.js';

const ORG = 'acme';
const DAY = 86_400_000;
const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
const CA = readFileSync(new URL('receiver.crt', TLS_DIR), 'utf8');
const URL_PATH = (type: string) => `/notification-config/${ORG}/${type}`;

interface Hit {
  path: string;
  body: any;
  raw: string;
  headers: IncomingHttpHeaders;
}
interface Mail {
  to: string[];
  text: string;
}
const hits: Hit[] = [];
const mails: Mail[] = [];
let https: Server;
let smtp: SMTPServer;
let base: string;
let t: TestApp;
let app: FastifyInstance;
let env: Record<string, string>;
let tf: ReturnType<typeof terraformClient>;
let member: ReturnType<typeof terraformClient>;
let reader: ReturnType<typeof terraformClient>;

/** A mail's text with quoted-printable soft breaks and escapes undone, as a mail reader shows it. */
const unquote = (text: string) =>
  text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

beforeAll(async () => {
  https = createServer({ cert: CA, key: readFileSync(new URL('receiver.key', TLS_DIR)) }, (req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      hits.push({ path, raw, body: JSON.parse(raw), headers: req.headers });
      res.statusCode = path === '/down' ? 503 : 200;
      res.end();
    });
  });
  await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let text = '';
      stream.on('data', (c: Buffer) => (text += c.toString()));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text: unquote(text) });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  env = {
    VERITY_NOTIFIER_POLL_MS: '3600000',
    VERITY_REEVALUATION_INTERVAL_MS: '3600000',
    VERITY_OUTBOUND_ALLOW: '127.0.0.1',
    VERITY_OUTBOUND_CA: CA,
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
  };
  t = await createTestApp({ env });
  app = t.app;
  tf = terraformClient(app, await t.seedKey(ORG, 'admin'));
  member = terraformClient(app, await t.seedKey(ORG, 'member'));
  reader = terraformClient(app, await t.seedKey(ORG, 'reader'));
});
afterAll(async () => {
  await app?.close();
  await t?.db.close();
  await new Promise((r) => https?.close(r));
  await new Promise<void>((r) => smtp?.close(() => r()));
});

/** A service account in `org` with one key expiring `days` from the app clock (0: never); returns the key id. */
async function accountKey(
  org: string,
  account: string,
  days: number,
  api?: ReturnType<typeof terraformClient>,
): Promise<string> {
  const admin = api ?? (org === ORG ? tf : terraformClient(app, await t.seedKey(org, 'admin')));
  expect((await admin.post(`/service-accounts/${org}`, { name: account, privilege: 'reader' })).status).toBe(
    201,
  );
  const expires_at = days === 0 ? 0 : Math.floor(t.clock.seconds() + days * 86_400);
  const key = await admin.post(`/service-accounts/${org}/${account}/api-keys`, {
    description: `${account} key`,
    expires_at,
  });
  expect(key.status).toBe(201);
  return key.json.id;
}

/** Runs one sweep and delivers what it wrote; returns the warnings written. */
async function sweep() {
  const warnings = await app.runtime.sweepKeyExpiry();
  await app.runtime.notifier.drain();
  return warnings;
}

/** Deliveries naming the key: webhooks carry it in `api_key`, Slack messages in their text. */
const warningsFor = (keyId: string) => hits.filter((h) => h.raw.includes(keyId));
/** The threshold a delivery warns of, as its receiver reads it. */
const threshold = (h: Hit): number =>
  h.body.api_key?.days_before_expiry ??
  (/EXPIRED/.test(h.body.text) ? 0 : Number(/within (\d+) days/.exec(h.body.text)![1]));

describe('notification config, as Terraform sends it', () => {
  it('answers 200 with empty targets while nothing is configured', async () => {
    const res = await tf.get(URL_PATH('api_key_expiry'));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      notification_type: 'api_key_expiry',
      scope: null,
      targets: [],
      detection: { days_before_expiry: [14, 3], on_expiry: true },
      last_notified_at: null,
      last_failure: null,
    });
  });

  it('stores normalized targets, 201 on create and 200 on update, answering the stored config', async () => {
    const body = {
      targets: [
        { type: 'EMAIL', emails: ['Platform@Example.COM', 'security@example.com'] },
        { type: 'SLACK', webhook: 'https://Hooks.Slack.com/services/T0/B0/secret/' },
        { type: 'WEBHOOK', webhook: `${base}/hook/` },
      ],
    };
    const created = await tf.put(URL_PATH('api_key_expiry'), body);
    expect(created.status).toBe(201);
    const stored = [
      { type: 'EMAIL', emails: ['Platform@example.com', 'security@example.com'] },
      { type: 'SLACK', webhook: 'https://hooks.slack.com/services/T0/B0/secret' },
      { type: 'WEBHOOK', webhook: `${base}/hook`, payload_version: '1.0' },
    ];
    expect(created.json).toMatchObject({ notification_type: 'api_key_expiry', scope: null, targets: stored });
    const updated = await tf.put(URL_PATH('api_key_expiry'), body);
    expect(updated.status).toBe(200);
    expect((await tf.get(URL_PATH('api_key_expiry'))).json.targets).toEqual(stored);
  });

  it('lets only admins read, change or delete the configuration', async () => {
    for (const api of [member, reader]) {
      expect((await api.get(URL_PATH('api_key_expiry'))).status).toBe(403);
    }
    const body = { targets: [{ type: 'EMAIL', emails: ['x@example.com'] }] };
    for (const api of [member, reader]) {
      expect((await api.put(URL_PATH('api_key_expiry'), body)).status).toBe(403);
      expect((await api.delete(URL_PATH('api_key_expiry'))).status).toBe(403);
    }
    expect((await tf.get(URL_PATH('api_key_expiry'))).json.targets).toHaveLength(3);
  });

  it.each([
    ['an empty target list', { targets: [] }, 'body.targets', /at least one target/],
    [
      'an http webhook',
      { targets: [{ type: 'WEBHOOK', webhook: 'http://hooks.example.com/x' }] },
      'body.targets[0].webhook',
      /https:\/\//,
    ],
    [
      'an http Slack webhook',
      { targets: [{ type: 'SLACK', webhook: 'http://hooks.slack.com/x' }] },
      'body.targets[0].webhook',
      /https:\/\//,
    ],
    [
      'a second EMAIL target',
      {
        targets: [
          { type: 'EMAIL', emails: ['a@example.com'] },
          { type: 'EMAIL', emails: ['b@example.com'] },
        ],
      },
      'body.targets[1]',
      /one EMAIL target holds every address/,
    ],
    [
      'the same webhook twice',
      {
        targets: [
          { type: 'WEBHOOK', webhook: 'https://hooks.example.com/x' },
          { type: 'WEBHOOK', webhook: 'https://HOOKS.example.com/x/' },
        ],
      },
      'body.targets[1].webhook',
      /same URL as targets\[0\]/,
    ],
    [
      'an address twice',
      { targets: [{ type: 'EMAIL', emails: ['a@example.com', 'a@EXAMPLE.com'] }] },
      'body.targets[0].emails',
      /listed twice/,
    ],
    [
      'a bad address',
      { targets: [{ type: 'EMAIL', emails: ['not-an-address'] }] },
      'body.targets[0].emails[0]',
      /email/,
    ],
    [
      'an unknown field',
      { targets: [{ type: 'EMAIL', emails: ['a@example.com'] }], extra: 1 },
      'body.extra',
      /not permitted/,
    ],
    ['an unknown target type', { targets: [{ type: 'PAGER', to: 'x' }] }, 'body.targets[0].type', /SLACK/],
  ])('refuses %s with a 400 naming the field, changing nothing', async (_name, body, field, why) => {
    const res = await tf.put(URL_PATH('api_key_expiry'), body);
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('Input payload validation failed');
    expect(res.json.errors[field]).toMatch(why);
    expect((await tf.get(URL_PATH('api_key_expiry'))).json.targets).toHaveLength(3);
  });

  it('refuses an unknown notification type with a 400 on every method', async () => {
    for (const res of [
      await tf.get(URL_PATH('coffee_low')),
      await tf.put(URL_PATH('coffee_low'), { targets: [{ type: 'EMAIL', emails: ['a@example.com'] }] }),
      await tf.delete(URL_PATH('coffee_low')),
    ]) {
      expect(res.status).toBe(400);
      expect(res.json.errors['path.notification_type']).toBe(
        "Input should be 'api_key_expiry' or 'log_checkpoint'",
      );
    }
  });

  it('deletes the config (so recipients are derived again), and a second delete is fine', async () => {
    const res = await tf.delete(URL_PATH('api_key_expiry'));
    expect(res.status).toBe(200);
    expect(res.json).toBe('OK');
    expect((await tf.get(URL_PATH('api_key_expiry'))).json.targets).toEqual([]);
    expect((await tf.delete(URL_PATH('api_key_expiry'))).status).toBe(200);
  });
});

describe('service-account keys, as the Terraform data source reads them', () => {
  it('lists expires_at as a JSON number in epoch seconds, 0 when the key never expires', async () => {
    await accountKey(ORG, 'lister', 300);
    const never = await tf.post(`/service-accounts/${ORG}/lister/api-keys`, { description: 'forever' });
    const list = await tf.get(`/service-accounts/${ORG}/lister/api-keys`);
    expect(list.status).toBe(200);
    expect(list.json.map((k: any) => Object.keys(k).sort())).toEqual([
      ['created_at', 'description', 'expires_at', 'id', 'last_used_at'],
      ['created_at', 'description', 'expires_at', 'id', 'last_used_at'],
    ]);
    const byId = new Map(list.json.map((k: any) => [k.id, k]));
    expect((byId.get(never.json.id) as any).expires_at).toBe(0);
    const expiring = list.json.find((k: any) => k.id !== never.json.id);
    expect(expiring.expires_at).toBe(Math.floor(t.clock.seconds() + 300 * 86_400));
    expect(list.body).toMatch(/"expires_at":\d+(\.\d+)?[,}]/);
  });
});

describe('API-key expiry warnings', () => {
  let keyId: string;
  let revokedId: string;

  it('warns nobody while the key is further than 14 days from expiry', async () => {
    const config = await tf.put(URL_PATH('api_key_expiry'), {
      targets: [
        { type: 'WEBHOOK', webhook: `${base}/hook` },
        { type: 'SLACK', webhook: `${base}/slack` },
        { type: 'EMAIL', emails: ['ops@example.com'] },
      ],
    });
    expect(config.status).toBe(201);
    keyId = await accountKey(ORG, 'deployer', 15);
    revokedId = await accountKey(ORG, 'retired', 15);
    expect((await tf.delete(`/service-accounts/${ORG}/retired/api-keys/${revokedId}`)).status).toBe(200);
    await accountKey(ORG, 'forever', 0);
    expect(await sweep()).toEqual([]);
    expect(hits).toEqual([]);
    expect(mails).toEqual([]);
  });

  it('warns every target once when the key is 14 days from expiry, whichever sweep gets there', async () => {
    t.clock.advance(DAY + 60_000);
    const both = await Promise.all([app.runtime.sweepKeyExpiry(), app.runtime.sweepKeyExpiry()]);
    expect(both.flat()).toMatchObject([
      {
        org: ORG,
        serviceAccount: 'deployer',
        keyId,
        thresholdDays: 14,
        recipients: 'configured',
        deliveries: 3,
      },
    ]);
    await app.runtime.notifier.drain();
    expect(await sweep()).toEqual([]);
    const hook = hits.filter((h) => h.path === '/hook');
    expect(hook).toHaveLength(1);
    expect(hook[0]!.body).toMatchObject({
      version: '1.0',
      org: ORG,
      event_type: 'API_KEY_EXPIRING',
      api_key: {
        id: keyId,
        service_account: 'deployer',
        description: 'deployer key',
        days_before_expiry: 14,
      },
    });
    expect(hook[0]!.body.description).toMatch(/expires within 14 days/);
    expect(hook[0]!.headers['x-verity-event']).toBe('ON_API_KEY_EXPIRING');
    const signingKey = (await tf.get(`/organizations/${ORG}/webhook-signing-key`)).json.key;
    const timestamp = String(hook[0]!.headers['x-verity-timestamp']);
    expect(hook[0]!.headers['x-verity-signature']).toBe(signWebhook(signingKey, timestamp, hook[0]!.raw));
    const slack = hits.filter((h) => h.path === '/slack');
    expect(slack).toHaveLength(1);
    expect(slack[0]!.body.text).toMatch(/API_KEY_EXPIRING: service account deployer \(acme\)/);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toEqual(['ops@example.com']);
    expect(mails[0]!.text).toMatch(/deployer key/);
    expect(warningsFor(revokedId)).toEqual([]);
    const config = (await tf.get(URL_PATH('api_key_expiry'))).json;
    expect(config.last_notified_at).toBeCloseTo(t.clock.seconds(), 0);
    expect(config.last_failure).toBeNull();
    const metrics = (await app.metrics.server.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(
      /verity_api_key_expiry_warnings_total\{threshold_days="14",recipients="configured"\} 1\n/,
    );
  });

  it('after a restart, the app warns at 3 days without repeating the 14-day warning', async () => {
    t.clock.advance(11 * DAY);
    await app.close();
    // A new process on the same database, its own loops running: the sweep at start, the notifier
    // woken by what the sweep commits.
    app = await buildApp({
      config: testConfig({ ...env, VERITY_NOTIFIER_ENABLED: 'true' }),
      database: t.db,
      clock: t.clock.now,
      logger: false,
    });
    await app.ready();
    const mail = await until(() => (mails.length === 2 && hits.length === 4 ? mails[1] : undefined));
    expect(mail.text).toMatch(/expires within 3 days/);
    // Deliveries run side by side: compare them in a fixed order.
    const seen = warningsFor(keyId).map((h) => [h.path, threshold(h)] as const);
    expect(seen.sort(([p1, d1], [p2, d2]) => d2 - d1 || p1.localeCompare(p2))).toEqual([
      ['/hook', 14],
      ['/slack', 14],
      ['/hook', 3],
      ['/slack', 3],
    ]);
    expect(warningsFor(revokedId)).toEqual([]);
  });

  it('warns once on expiry, then never again', async () => {
    t.clock.advance(3 * DAY);
    const warnings = await sweep();
    expect(warnings).toMatchObject([{ keyId, thresholdDays: 0 }]);
    // The restarted app's notifier delivers too: wait for what a receiver sees.
    const expired = await until(() => {
      const got = warningsFor(keyId).filter((h) => threshold(h) === 0);
      return got.length === 2 && mails.length === 3 ? got : undefined;
    });
    expect(expired.find((h) => h.path === '/hook')!.body).toMatchObject({
      event_type: 'API_KEY_EXPIRED',
      description: expect.stringMatching(/expired at/),
    });
    t.clock.advance(DAY);
    expect(await sweep()).toEqual([]);
    expect(warningsFor(keyId)).toHaveLength(6);
    expect(mails).toHaveLength(3);
    expect(warningsFor(revokedId)).toEqual([]);
  });
});

describe('API-key expiry warnings in other organizations', () => {
  it('warns a key with two days left at 3 days only, and shows a failing target on the config', async () => {
    const admin = terraformClient(app, await t.seedKey('beta', 'admin'));
    const put = await admin.put('/notification-config/beta/api_key_expiry', {
      targets: [{ type: 'WEBHOOK', webhook: `${base}/down` }],
    });
    expect(put.status).toBe(201);
    const id = await accountKey('beta', 'short-lived', 2, admin);
    expect(await sweep()).toMatchObject([{ org: 'beta', keyId: id, thresholdDays: 3 }]);
    const config = await until(async () => {
      const c = (await admin.get('/notification-config/beta/api_key_expiry')).json;
      return c.last_failure ? c : undefined;
    });
    expect(warningsFor(id).map(threshold)).toEqual([3]);
    expect(config.last_notified_at).toBeNull();
    expect(config.last_failure).toEqual({
      failed_at: t.clock.seconds(),
      error: expect.stringMatching(/HTTP 503/),
    });
  });

  it('does not warn of a key replaced by a rotation, though its grace period ends soon', async () => {
    const admin = terraformClient(app, await t.seedKey('epsilon', 'admin'));
    const id = await accountKey('epsilon', 'rotator', 20, admin);
    const rotated = await admin.post(`/service-accounts/epsilon/rotator/api-keys/${id}/rotate`, {
      grace_period_hours: 24,
    });
    expect(rotated.status).toBe(201);
    expect(await sweep()).toEqual([]);
    t.clock.advance(DAY + 1000);
    expect(await sweep()).toEqual([]);
    expect(warningsFor(id)).toEqual([]);
  });

  it("without a config, e-mails the organization's admins who have an address", async () => {
    const org = (await orgsRepository.ensure(t.db.db, { id: newId(), name: 'gamma', display_name: 'gamma' }))
      .org;
    const user = await usersRepository.create(t.db.db, {
      id: newId(),
      name: 'gina',
      email: 'gina@example.com',
    });
    await usersRepository.upsertMembership(t.db.db, org.id, user.id, 'admin');
    const other = await usersRepository.create(t.db.db, { id: newId(), name: 'mo', email: 'mo@example.com' });
    await usersRepository.upsertMembership(t.db.db, org.id, other.id, 'member');
    const id = await accountKey('gamma', 'builder', 1);
    expect(await sweep()).toMatchObject([
      { org: 'gamma', keyId: id, thresholdDays: 3, recipients: 'admins' },
    ]);
    const mail = await until(() => mails.find((m) => m.to.includes('gina@example.com')));
    expect(mail.to).toEqual(['gina@example.com']);
    expect(mail.text).toMatch(/builder key/);
  });

  it('without a config or an admin address, warns nobody, once, and counts it', async () => {
    const before = mails.length + hits.length;
    const id = await accountKey('delta', 'lonely', 1);
    expect(await sweep()).toMatchObject([{ org: 'delta', keyId: id, thresholdDays: 3, recipients: 'none' }]);
    expect(await sweep()).toEqual([]);
    expect(mails.length + hits.length).toBe(before);
    const metrics = (await app.metrics.server.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(
      /verity_api_key_expiry_warnings_total\{threshold_days="3",recipients="none"\} 1\n/,
    );
  });
});

describe('with the database unreachable', () => {
  it('answers 503 to the config routes, and the sweep fails without harm', async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createTcpServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const handle = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/verity`,
      connectTimeoutMs: 1_000,
    });
    const down = await buildApp({ config: testConfig(env), database: handle, logger: false });
    try {
      await down.ready();
      const api = terraformClient(down, 'vty_anything-at-all-0123456789');
      for (const res of [
        await api.get(URL_PATH('api_key_expiry')),
        await api.put(URL_PATH('api_key_expiry'), {
          targets: [{ type: 'EMAIL', emails: ['a@example.com'] }],
        }),
      ]) {
        expect(res.status).toBe(503);
        expect(res.json.message).toMatch(/database/i);
      }
      const failed = await down.runtime.sweepKeyExpiry().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isDatabaseUnavailable(failed)).toBe(true);
    } finally {
      await down.close();
      await handle.close();
    }
  });
});
