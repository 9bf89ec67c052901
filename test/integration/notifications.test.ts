/**
 * Actions and notification delivery to real receivers started here: an HTTP server that checks
 * signatures and counts deliveries (one fails twice, then succeeds), and an SMTP server. The
 * worker runs inside the app (kicked by commits); a dead worker's claimed rows come back.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp } from '../helpers/runtime.js';
import { signWebhook } from '../../services/api/src/domain/webhook-signing.js';
import { outboxRepository } from '../../services/api/src/storage/repositories/actions.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { enqueueNotifications } from '../../services/api/src/usecases/notifications/notifications.js';
import { sql } from 'kysely';
import { until } from '../helpers/wait.js';

const ORG = 'acme';
const SECRET = 'test-webhook-secret-0123456789';

interface Received {
  path: string;
  body: any;
  valid: boolean;
  at: number;
}
const received: Received[] = [];
const failuresLeft: Record<string, number> = { '/flaky': 2 };
const mails: string[] = [];
let http: Server;
let smtp: SMTPServer;
let base: string;
let smtpPort: number;
let t: TestApp;
let api: ReturnType<typeof client>;

/** Waits until nothing in the outbox is due (or, with `leased`, due and not leased to some worker). */
async function settled(leased = false): Promise<void> {
  const org = await orgsRepository.findByName(t.db.db, ORG);
  await until(async () => {
    // A re-evaluation still to run may yet write notifications: not settled until it has run.
    const marks = await sql<{ n: number }>`select count(*)::int as n from reevaluation_marks`.execute(
      t.db.db,
    );
    if (marks.rows[0]!.n > 0) {
      t.app.runtime.kick();
      return undefined;
    }
    const now = t.clock.now();
    const busy = (await outboxRepository.forOrg(t.db.db, org!.id)).some(
      (r) =>
        r.delivered_at === null &&
        r.failed_at === null &&
        r.next_attempt_at <= now &&
        (!leased || r.lease_until === null || r.lease_until <= now),
    );
    return busy ? undefined : true;
  });
}

beforeAll(async () => {
  http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      if ((failuresLeft[path] ?? 0) > 0) {
        failuresLeft[path]! -= 1;
        res.statusCode = 503;
        res.end('try later');
        return;
      }
      const ts = String(req.headers['x-verity-timestamp'] ?? '');
      const valid = req.headers['x-verity-signature'] === signWebhook(SECRET, ts, body);
      received.push({ path, body: JSON.parse(body), valid, at: Date.now() });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      let text = '';
      stream.on('data', (c: Buffer) => (text += c.toString()));
      stream.on('end', () => {
        mails.push(text);
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  t = await createTestApp({
    env: {
      VERITY_NOTIFIER_ENABLED: 'true',
      VERITY_NOTIFIER_POLL_MS: '3600000',
      VERITY_REEVALUATION_INTERVAL_MS: '3600000',
      VERITY_OUTBOUND_ALLOW: '127.0.0.1',
      VERITY_WEBHOOK_SECRET: SECRET,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    },
  });
  api = client(t.app, await t.seedKey(ORG, 'member'));
  await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => http?.close(r));
  await new Promise<void>((r) => smtp?.close(() => r()));
});

describe('actions', () => {
  it('upserts by name, keeps the number, validates triggers against the type', async () => {
    const body = {
      name: 'prod-alerts',
      environments: ['prod'],
      triggers: ['ON_STARTED_ARTIFACT', 'ON_NON_COMPLIANT_ENV'],
      targets: [
        { type: 'WEBHOOK', webhook: `${base}/hook`, payload_version: '1.0' },
        { type: 'SLACK', webhook: `${base}/slack` },
        { type: 'EMAIL', emails: ['ops@example.com'] },
      ],
    };
    expect((await api.put(`/api/v2/actions/${ORG}/environments`, body)).status).toBe(201);
    expect((await api.put(`/api/v2/actions/${ORG}/environments`, body)).status).toBe(200);
    const list = await api.get(`/api/v2/actions/${ORG}`);
    expect(list.json).toHaveLength(1);
    expect(list.json[0]).toMatchObject({
      name: 'prod-alerts',
      type: 'env',
      number: 1,
      environments: ['prod'],
      is_failing: false,
      targets: [
        { type: 'WEBHOOK', last_success_at: null },
        { type: 'SLACK' },
        { type: 'EMAIL', emails: ['ops@example.com'] },
      ],
    });
    const bad = await api.put(`/api/v2/actions/${ORG}/environments`, { ...body, triggers: ['ON_RELEASE'] });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual({ 'body.triggers': 'not an environment trigger: ON_RELEASE' });
    expect(
      (await api.put(`/api/v2/actions/${ORG}/environments`, { ...body, environments: ['nope'] })).status,
    ).toBe(400);
    expect(
      (await api.put(`/api/v2/actions/${ORG}/environments`, { ...body, targets: [{ type: 'PAGER' }] }))
        .status,
    ).toBe(400);
  });

  it('serves the environments_notifications routes the Terraform provider uses', async () => {
    const body = {
      name: 'tf',
      type: 'env',
      environments: ['prod'],
      triggers: ['ON_EXITED_ARTIFACT'],
      targets: [{ type: 'WEBHOOK', webhook: `${base}/tf` }],
    };
    expect((await api.put(`/api/v2/organizations/${ORG}/environments_notifications`, body)).status).toBe(201);
    const list = (await api.get(`/api/v2/organizations/${ORG}/environments_notifications`)).json;
    const n = list.find((a: any) => a.name === 'tf').number;
    expect(n).toBe(2);
    expect(
      (
        await api.put(`/api/v2/organizations/${ORG}/environments_notifications/${n}`, {
          ...body,
          name: 'tf2',
        })
      ).status,
    ).toBe(200);
    expect(
      (await api.get(`/api/v2/organizations/${ORG}/environments_notifications/${n}`)).json,
    ).toMatchObject({ name: 'tf2', number: n });
    expect(
      (await api.delete(`/api/v2/organizations/${ORG}/environments_notifications/${n}`, null)).status,
    ).toBe(200);
    expect((await api.get(`/api/v2/actions/${ORG}/${n}`)).status).toBe(404);
    expect((await api.delete(`/api/v2/actions/${ORG}/${n}`, null)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('delivers a start to a webhook (signed, payload 1.0), Slack (blocks) and e-mail within 2 s', async () => {
    const started = Date.now();
    const res = await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: deployment('api', 'registry/api:1', fp('1'), 1),
    });
    expect(res.json).toBe('Snapshot #1 created');
    const hook = await until(() => received.find((r) => r.path === '/hook'));
    expect(hook.at - started).toBeLessThan(2000);
    expect(hook.valid).toBe(true);
    expect(hook.body).toMatchObject({
      version: '1.0',
      org: ORG,
      environment: 'prod',
      event_type: 'ARTIFACT_STARTED',
      description: '1 instance started running (from 0 to 1)',
      snapshot: { index: '1', status: 'unknown', api_url: 'http://verity.test/api/v2/snapshots/acme/prod/1' },
      artifact: { name: 'registry/api:1', fingerprint: fp('1') },
    });
    const slack = await until(() => received.find((r) => r.path === '/slack'));
    expect(slack.body.blocks[0]).toMatchObject({ type: 'header' });
    const mail = await until(() => mails[0]);
    expect(mail).toContain('To: ops@example.com');
    expect(mail).toContain('ARTIFACT_STARTED in environment prod');
    const action = await until(async () => {
      const a = (await api.get(`/api/v2/actions/${ORG}/1`)).json;
      return a.targets.every((x: any) => x.last_success_at !== null) ? a : undefined;
    });
    expect(action.is_failing).toBe(false);
    // The counter moves just after the delivery is recorded.
    const metrics = await until(async () => {
      const body = (await t.app.metrics.server.inject({ url: '/metrics' })).body;
      return /verity_notifications_total\{target_type="EMAIL",result="success"\} 1/.test(body)
        ? body
        : undefined;
    });
    expect(metrics).toMatch(/verity_notifications_total\{target_type="WEBHOOK",result="success"\} 1/);
  });

  it('retries with backoff: a target that fails twice then succeeds gets it once, and is_failing clears', async () => {
    await api.put(`/api/v2/actions/${ORG}/environments`, {
      name: 'flaky',
      environments: ['prod'],
      triggers: ['ON_EXITED_ARTIFACT'],
      targets: [{ type: 'WEBHOOK', webhook: `${base}/flaky` }],
    });
    await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts: [] });
    const action = async () =>
      (await api.get(`/api/v2/actions/${ORG}`)).json.find((a: any) => a.name === 'flaky');
    let a = await until(async () => {
      const x = await action();
      return x.targets[0].last_failure_at !== null ? x : undefined;
    });
    expect(a.is_failing).toBe(true);
    expect(a.targets[0].last_error).toBe(`HTTP 503 from ${new URL(base).host}`);
    // Not due before the backoff has passed: a kick sends nothing.
    t.app.runtime.kick();
    await settled();
    expect(failuresLeft['/flaky']).toBe(1);
    t.clock.advance(20 * 60_000);
    t.app.runtime.kick();
    await until(() => (failuresLeft['/flaky'] === 0 ? true : undefined));
    await settled();
    t.clock.advance(20 * 60_000);
    t.app.runtime.kick();
    const ok = await until(() => received.find((r) => r.path === '/flaky'));
    expect(ok.body.event_type).toBe('ARTIFACT_EXITED');
    expect(ok.valid).toBe(true);
    a = await until(async () => {
      const x = await action();
      return x.is_failing ? undefined : x;
    });
    expect(received.filter((r) => r.path === '/flaky')).toHaveLength(1);
    expect(a.targets[0].last_success_at).not.toBeNull();
  });

  it('refuses a loopback address the operator did not allow, and records why', async () => {
    await api.put(`/api/v2/actions/${ORG}/environments`, {
      name: 'internal',
      environments: ['prod'],
      triggers: ['ON_STARTED_ARTIFACT'],
      targets: [{ type: 'WEBHOOK', webhook: 'http://127.0.0.2:9/internal' }],
    });
    await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
      artifacts: deployment('web', 'registry/web:1', fp('2'), 1),
    });
    let a: any;
    for (let i = 0; i < 100; i++) {
      a = (await api.get(`/api/v2/actions/${ORG}`)).json.find((x: any) => x.name === 'internal');
      if (a.targets[0].last_failure_at !== null) {
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(a.is_failing).toBe(true);
    expect(a.targets[0].last_error).toContain('127.0.0.2, a loopback address; set VERITY_OUTBOUND_ALLOW');
    const org = await orgsRepository.findByName(t.db.db, ORG);
    const row = (await outboxRepository.forOrg(t.db.db, org!.id)).find((r) =>
      r.target.webhook?.includes('127.0.0.2'),
    );
    expect(row?.failed_at).not.toBeNull();
  });

  it('loses nothing when a worker dies mid-batch: its leased rows are delivered after the lease', async () => {
    const org = await orgsRepository.findByName(t.db.db, ORG);
    await settled();
    // Only this test's deliveries count: a delivery of earlier work may still land meanwhile.
    const batchDelivered = () =>
      received.filter((r) => r.path === '/hook' && String(r.body.description).startsWith('batch')).length;
    // Due 5 s from now, so the app's own worker, whenever its loop runs, cannot take them before
    // a "dead" worker claims them at that time: only the lease can keep them from it after.
    const due = new Date(t.clock.now().getTime() + 5_000);
    await t.db.db.transaction().execute((tx) =>
      enqueueNotifications(
        tx,
        org!.id,
        [1, 2, 3].map((i) => ({
          trigger: 'ON_STARTED_ARTIFACT' as const,
          org: ORG,
          timestamp: i,
          environment: 'prod',
          description: `batch ${i}`,
        })),
        due,
      ),
    );
    const claimed = await outboxRepository.claim(t.db.db, due, 60_000, 100);
    expect(
      claimed.filter((r) => String(r.payload.description).startsWith('batch')).length,
    ).toBeGreaterThanOrEqual(3);
    // Now due, but leased: another worker's round finds nothing to take while the lease holds.
    t.clock.advance(5_000);
    expect(await t.app.runtime.notifier.drain()).toBe(0);
    expect(batchDelivered()).toBe(0);
    t.clock.advance(61_000);
    t.app.runtime.kick();
    await until(() => (batchDelivered() >= 3 ? true : undefined));
    const batch = received.filter(
      (r) => r.path === '/hook' && String(r.body.description).startsWith('batch'),
    );
    expect(batch.map((r) => r.body.description).sort()).toEqual(['batch 1', 'batch 2', 'batch 3']);
  });
});

describe('retention', () => {
  it('purges delivered and given-up notifications older than the retention, never pending ones', async () => {
    const org = await orgsRepository.findByName(t.db.db, ORG);
    await settled();
    const finished = (await outboxRepository.forOrg(t.db.db, org!.id)).filter(
      (r) => r.delivered_at !== null || r.failed_at !== null,
    );
    expect(finished.length).toBeGreaterThan(0);
    // Nothing is old enough yet.
    expect(await t.app.runtime.purgeNotifications()).toBe(0);
    // A pending row written 31 days later stays; everything finished before it goes.
    t.clock.advance(31 * 86_400_000);
    await t.db.db.transaction().execute((tx) =>
      enqueueNotifications(
        tx,
        org!.id,
        [
          {
            trigger: 'ON_STARTED_ARTIFACT' as const,
            org: ORG,
            timestamp: 1,
            environment: 'prod',
            description: 'kept',
          },
        ],
        new Date(t.clock.now().getTime() + 3_600_000),
      ),
    );
    const pendingBefore = (await outboxRepository.forOrg(t.db.db, org!.id)).filter(
      (r) => r.delivered_at === null && r.failed_at === null,
    );
    expect(await t.app.runtime.purgeNotifications()).toBe(finished.length);
    const left = await outboxRepository.forOrg(t.db.db, org!.id);
    expect(left.map((r) => r.id).sort()).toEqual(pendingBefore.map((r) => r.id).sort());
    expect(left.some((r) => r.payload.description === 'kept')).toBe(true);
  });
});
