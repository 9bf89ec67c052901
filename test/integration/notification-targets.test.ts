/**
 * Notification targets: every webhook is signed (a target's own write-only secret, else the
 * organization's key, which an admin reads and rotates, both signatures for 24 hours after a
 * rotation), addresses are masked for readers, and pending deliveries of replaced targets are
 * dropped while results land on the target they were for. The receiver checks signatures with
 * the Node snippet of the README, run as written.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { deployment, fp } from '../helpers/runtime.js';
import { signWebhook } from '../../services/api/src/domain/webhook-signing.js';
import { outboxRepository } from '../../services/api/src/storage/repositories/actions.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';

const ORG = 'acme';
const TARGET_SECRET = 'target-secret-0123456789-abcdef';

type Verify = (key: string, body: string, timestamp: string, signatures: string) => boolean;
/** The README's Node verification snippet, run as a receiver would. */
function readmeVerify(): Verify {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('### Verifying webhook signatures'));
  const code = /```js\n([\s\S]*?)```/.exec(section)![1]!;
  expect(code.trim().split('\n').length).toBeLessThanOrEqual(12);
  return runInNewContext(`${code}\nverify`, {
    require: createRequire(import.meta.url),
    Buffer,
    Date,
    Math,
    Number,
  }) as Verify;
}

interface Received {
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
}
const received: Received[] = [];
const down = new Set(['/down']);
let http: Server;
let base: string;
let t: TestApp;
let admin: ReturnType<typeof client>;
let member: ReturnType<typeof client>;
let reader: ReturnType<typeof client>;
let verify: Verify;
let events = 0;

/** Starts one artifact in prod (ON_STARTED_ARTIFACT) and waits until every due row is settled. */
async function event(): Promise<void> {
  events += 1;
  const n = String(events);
  await member.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
    artifacts: deployment(`app${n}`, `registry/app:${n}`, fp(n), 1),
  });
  await t.app.runtime.notifier.drain();
}
const action = async (name: string, api = member) =>
  (await api.get(`/api/v2/actions/${ORG}`)).json.find((a: any) => a.name === name);
const put = (name: string, targets: unknown[]) =>
  member.put(`/api/v2/actions/${ORG}/environments`, {
    name,
    environments: ['prod'],
    triggers: ['ON_STARTED_ARTIFACT'],
    targets,
  });

beforeAll(async () => {
  verify = readmeVerify();
  http = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ path, body, headers: req.headers });
      res.statusCode = down.has(path) ? 503 : 200;
      res.end();
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  t = await createTestApp({
    // Near real time, so the snippet's timestamp tolerance holds.
    clock: new TestClock(Date.now()),
    env: {
      VERITY_NOTIFIER_POLL_MS: '3600000',
      VERITY_OUTBOUND_ALLOW: '127.0.0.1',
    },
  });
  admin = client(t.app, await t.seedKey(ORG, 'admin'));
  member = client(t.app, await t.seedKey(ORG, 'member'));
  reader = client(t.app, await t.seedKey(ORG, 'reader'));
  await member.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => http?.close(r));
});

const last = (path: string) => received.filter((r) => r.path === path).at(-1)!;
const signed = (r: Received) => ({
  timestamp: String(r.headers['x-verity-timestamp']),
  signatures: String(r.headers['x-verity-signature']),
});

describe('webhook signatures', () => {
  it("signs with the organization's key, which only an admin reads", async () => {
    expect((await put('org-key', [{ type: 'WEBHOOK', webhook: `${base}/org` }])).status).toBe(201);
    await event();
    const r = last('/org');
    const { timestamp, signatures } = signed(r);
    expect(signatures).toMatch(/^sha256=[0-9a-f]{64}$/);
    const key = await admin.get(`/api/v2/organizations/${ORG}/webhook-signing-key`);
    expect(key.status).toBe(200);
    expect(key.json).toMatchObject({ previous_key_signs_until: null });
    expect(verify(key.json.key, r.body, timestamp, signatures)).toBe(true);
    expect(verify(`${key.json.key}x`, r.body, timestamp, signatures)).toBe(false);
    expect((await member.get(`/api/v2/organizations/${ORG}/webhook-signing-key`)).status).toBe(403);
    expect((await member.post(`/api/v2/organizations/${ORG}/webhook-signing-key/rotate`, null)).status).toBe(
      403,
    );
  });

  it('after a rotation sends both signatures for 24 hours, then only the new one', async () => {
    const old = (await admin.get(`/api/v2/organizations/${ORG}/webhook-signing-key`)).json.key;
    const rotated = await admin.post(`/api/v2/organizations/${ORG}/webhook-signing-key/rotate`, null);
    expect(rotated.status).toBe(200);
    expect(rotated.json.key).not.toBe(old);
    expect(rotated.json.previous_key_signs_until).toBeCloseTo(t.clock.seconds() + 86_400, 0);
    await event();
    let r = last('/org');
    let { timestamp, signatures } = signed(r);
    expect(signatures.split(',')).toHaveLength(2);
    expect(verify(rotated.json.key, r.body, timestamp, signatures)).toBe(true);
    expect(verify(old, r.body, timestamp, signatures)).toBe(true);
    t.clock.advance(86_400_000 + 1000);
    await event();
    r = last('/org');
    ({ timestamp, signatures } = signed(r));
    expect(signatures.split(',')).toHaveLength(1);
    // A day later than the real clock, so checked here without the snippet's freshness test.
    expect(signatures).toBe(signWebhook(rotated.json.key, timestamp, r.body));
    t.clock.advance(-(86_400_000 + 1000));
  });

  it("signs with a target's own secret, which no read shows", async () => {
    const res = await put('own-secret', [{ type: 'WEBHOOK', webhook: `${base}/own`, secret: TARGET_SECRET }]);
    expect(res.status).toBe(201);
    await event();
    const r = last('/own');
    const { timestamp, signatures } = signed(r);
    expect(verify(TARGET_SECRET, r.body, timestamp, signatures)).toBe(true);
    for (const api of [admin, member, reader]) {
      const list = await api.get(`/api/v2/actions/${ORG}`);
      expect(list.body).not.toContain(TARGET_SECRET);
      expect(list.json.find((a: any) => a.name === 'own-secret').targets[0]).toMatchObject({
        has_secret: true,
      });
    }
    const openapi = (await t.app.inject({ url: '/api/v2/openapi.json' })).body;
    expect(openapi).toContain('getWebhookSigningKey');
  });
});

describe('reads below action:write', () => {
  it('show webhook and Slack addresses as scheme and host only', async () => {
    await put('masked', [
      { type: 'SLACK', webhook: `${base}/services/T0/B0/slack-token` },
      { type: 'WEBHOOK', webhook: `${base}/hook?token=abc` },
    ]);
    const host = new URL(base).host;
    const seen = await action('masked', reader);
    expect(seen.targets.map((x: any) => x.webhook)).toEqual([`http://${host}`, `http://${host}`]);
    const n = seen.number;
    expect((await reader.get(`/api/v2/actions/${ORG}/${n}`)).json.targets[0].webhook).toBe(`http://${host}`);
    const envList = (await reader.get(`/api/v2/organizations/${ORG}/environments_notifications`)).body;
    expect(envList).not.toContain('slack-token');
    expect(envList).not.toContain('token=abc');
    expect((await action('masked', member)).targets[0].webhook).toBe(`${base}/services/T0/B0/slack-token`);
  });
});

describe('replaced targets', () => {
  it('drop their pending deliveries, and results land on the target they were for', async () => {
    await put('moving', [
      { type: 'WEBHOOK', webhook: `${base}/keep` },
      { type: 'WEBHOOK', webhook: `${base}/down` },
    ]);
    await event();
    const before = await action('moving');
    expect(before.targets[1].last_error).toMatch(/^HTTP 503/);
    const keptSuccess = before.targets[0].last_success_at;
    expect(keptSuccess).not.toBeNull();
    const hitsDown = received.filter((r) => r.path === '/down').length;
    // The failing target is replaced, and the kept one moves to another position.
    await put('moving', [
      { type: 'WEBHOOK', webhook: `${base}/new` },
      { type: 'WEBHOOK', webhook: `${base}/keep` },
    ]);
    const org = await orgsRepository.findByName(t.db.db, ORG);
    const pending = (await outboxRepository.forOrg(t.db.db, org!.id)).filter(
      (r) => r.delivered_at === null && r.failed_at === null,
    );
    expect(pending.filter((r) => r.target.webhook === `${base}/down`)).toEqual([]);
    // Past every backoff: nothing more goes to the old address.
    t.clock.advance(3 * 3_600_000);
    await t.app.runtime.notifier.drain();
    t.clock.advance(-3 * 3_600_000);
    expect(received.filter((r) => r.path === '/down')).toHaveLength(hitsDown);
    const after = await action('moving');
    expect(after.targets[0]).toMatchObject({
      webhook: `${base}/new`,
      last_error: null,
      last_failure_at: null,
    });
    expect(after.targets[1]).toMatchObject({ webhook: `${base}/keep`, last_success_at: keptSuccess });
    expect(after.is_failing).toBe(false);
  });
});
