/**
 * Witnesses by push: a `log_checkpoint` notification config with a webhook target delivers each
 * new checkpoint of the organization's log to a real receiver started here (https on 127.0.0.1,
 * trusted through VERITY_OUTBOUND_CA and allowed through VERITY_OUTBOUND_ALLOW). The receiver checks the signature as any
 * receiver would (HMAC-SHA256 of `<timestamp>.<body>` with the organization's webhook key) and
 * the checkpoint against what the log's own checkpoint and key routes answer. The sequencer and
 * the notifier are driven by hand.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { openNote, parseCheckpoint, verifyConsistency } from '../helpers/tlog-client.js';

const ORG = 'acme';
const CONFIG = `/api/v2/notification-config/${ORG}/log_checkpoint`;
const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
const CA = readFileSync(new URL('receiver.crt', TLS_DIR), 'utf8');

interface Hit {
  path: string;
  raw: string;
  body: any;
  headers: IncomingHttpHeaders;
}
const hits: Hit[] = [];
let receiver: Server;
let base: string;
let t: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  receiver = createServer({ cert: CA, key: readFileSync(new URL('receiver.key', TLS_DIR)) }, (req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      hits.push({ path, raw, body: JSON.parse(raw), headers: req.headers });
      res.statusCode = path === '/down' ? 503 : 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await createTestApp({
    env: {
      VERITY_OUTBOUND_ALLOW: '127.0.0.1',
      VERITY_OUTBOUND_CA: CA,
      VERITY_LOG_SEQUENCE_MS: '60000',
      VERITY_NOTIFIER_POLL_MS: '3600000',
      VERITY_REEVALUATION_INTERVAL_MS: '3600000',
    },
  });
  api = client(t.app, await t.seedKey(ORG, 'admin'));
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => receiver?.close(r));
});

/** Sequences what is queued and delivers what the sequencer announced. */
async function sequenceAndDeliver(): Promise<void> {
  await t.app.transparencyLog.sequence();
  await t.app.runtime.notifier.drain();
}

/** What a receiver does first: the signature header must be the HMAC of `<timestamp>.<body>`. */
function signedWith(key: string, hit: Hit): boolean {
  const timestamp = String(hit.headers['x-verity-timestamp']);
  const expected = `sha256=${createHmac('sha256', key).update(`${timestamp}.${hit.raw}`).digest('hex')}`;
  return String(hit.headers['x-verity-signature']).split(',').includes(expected);
}

const environment = (name: string, description = '') =>
  api.put(`/api/v2/environments/${ORG}`, { name, type: 'K8S', description });

describe('log_checkpoint notifications to a webhook', () => {
  it('sends nothing while no config names a target', async () => {
    expect((await environment('before')).status).toBe(201);
    await sequenceAndDeliver();
    expect(hits).toEqual([]);
  });

  it('delivers each new checkpoint, signed, as the log itself answers it', async () => {
    const put = await api.put(CONFIG, { targets: [{ type: 'WEBHOOK', webhook: `${base}/witness` }] });
    expect(put.status).toBe(201);
    expect(put.json).toMatchObject({
      notification_type: 'log_checkpoint',
      detection: { on_checkpoint: true },
    });
    expect((await environment('prod')).status).toBe(201);
    await sequenceAndDeliver();

    expect(hits.map((h) => h.path)).toEqual(['/witness']);
    const hit = hits[0]!;
    const signingKey = (await api.get(`/api/v2/organizations/${ORG}/webhook-signing-key`)).json.key;
    expect(signedWith(signingKey, hit)).toBe(true);
    expect(signedWith('not-the-key', hit)).toBe(false);
    expect(hit.headers['x-verity-event']).toBe('ON_LOG_CHECKPOINT');
    const served = await api.get(`/api/v2/log/${ORG}/checkpoint`);
    expect(hit.body).toMatchObject({
      org: ORG,
      event_type: 'LOG_CHECKPOINT',
      checkpoint: { origin: `verity.test/${ORG}`, note: served.body },
    });
    const verifier = (await api.get(`/api/v2/log/${ORG}/key`)).body.split('\n')[0]!;
    const cp = parseCheckpoint(openNote(hit.body.checkpoint.note, verifier));
    expect(cp.origin).toBe(`verity.test/${ORG}`);
    expect(hit.body.checkpoint.tree_size).toBe(cp.size);
    expect(cp.size).toBeGreaterThan(0);
  });

  it('sends nothing when a round has no new entry, and a consistent next checkpoint when it has', async () => {
    await sequenceAndDeliver();
    expect(hits).toHaveLength(1);
    expect((await environment('prod', 'changed')).status).toBe(200);
    await sequenceAndDeliver();
    expect(hits).toHaveLength(2);
    const verifier = (await api.get(`/api/v2/log/${ORG}/key`)).body.split('\n')[0]!;
    const [first, second] = hits.map((h) => parseCheckpoint(openNote(h.body.checkpoint.note, verifier)));
    expect(second!.size).toBe(first!.size + 1);
    const proof = await api.get(
      `/api/v2/log/${ORG}/proof/consistency?from=${first!.size}&to=${second!.size}`,
    );
    const hashes = (proof.json.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(verifyConsistency(first!.size, second!.size, first!.root, second!.root, hashes)).toBe(true);
    expect(hits[1]!.body.checkpoint.note).toBe((await api.get(`/api/v2/log/${ORG}/checkpoint`)).body);
  });

  it("shows a receiver that refuses a checkpoint as the config's last failure", async () => {
    const put = await api.put(CONFIG, { targets: [{ type: 'WEBHOOK', webhook: `${base}/down` }] });
    expect(put.status).toBe(200);
    expect((await environment('staging')).status).toBe(201);
    await sequenceAndDeliver();
    expect(hits.at(-1)).toMatchObject({ path: '/down', body: { event_type: 'LOG_CHECKPOINT' } });
    const config = (await api.get(CONFIG)).json;
    expect(config.last_failure).toEqual({
      failed_at: t.clock.seconds(),
      error: expect.stringMatching(/HTTP 503/),
    });
  });
});
