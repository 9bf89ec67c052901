/**
 * A slow or hostile receiver delays nobody else: a receiver that trickles its answer a byte at a
 * time and one that streams an endless 200 body hold only their own deliveries (each has a total
 * deadline and a cap on the bytes read); deliveries to other targets, of the same organization
 * and of another, arrive as usual meanwhile.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp } from '../helpers/runtime.js';
import { until } from '../helpers/wait.js';

const DEADLINE_MS = 6000;
const received: Array<{ path: string; at: number }> = [];
const sockets = new Set<Socket>();
let endlessClosed = false;
let good: Server;
let endless: Server;
let trickle: TcpServer;
const timers: NodeJS.Timeout[] = [];
let t: TestApp;
let a: ReturnType<typeof client>;
let b: ReturnType<typeof client>;
const url = (s: Server | TcpServer, path: string) =>
  `http://127.0.0.1:${(s.address() as AddressInfo).port}${path}`;

beforeAll(async () => {
  good = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ path: req.url ?? '', at: Date.now() });
      res.end('ok');
    });
  });
  // Answers 200 and then streams a body that never ends.
  endless = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const timer = setInterval(() => res.write(chunk), 5);
    timers.push(timer);
    res.on('close', () => {
      clearInterval(timer);
      endlessClosed = true;
    });
  });
  // Sends its answer's head one byte every 100 ms, forever.
  trickle = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    const head = Buffer.from('HTTP/1.1 200 OK\r\nx-slow: ' + 'y'.repeat(10_000));
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed) {
        return clearInterval(timer);
      }
      socket.write(head.subarray(i, i + 1));
      i = (i + 1) % head.length;
    }, 100);
    timers.push(timer);
  });
  for (const s of [good, endless, trickle]) {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  }
  t = await createTestApp({
    env: {
      VERITY_NOTIFIER_ENABLED: 'true',
      VERITY_NOTIFIER_POLL_MS: '3600000',
      VERITY_REEVALUATION_INTERVAL_MS: '3600000',
      VERITY_OUTBOUND_ALLOW: '127.0.0.1',
      VERITY_OUTBOUND_TIMEOUT_MS: String(DEADLINE_MS),
    },
  });
  a = client(t.app, await t.seedKey('org-a', 'member'));
  b = client(t.app, await t.seedKey('org-b', 'member'));
  for (const [api, org, targets] of [
    [
      a,
      'org-a',
      [
        { type: 'WEBHOOK', webhook: url(trickle, '/trickle') },
        { type: 'WEBHOOK', webhook: url(endless, '/endless') },
        { type: 'SLACK', webhook: url(trickle, '/trickle-slack') },
        { type: 'WEBHOOK', webhook: url(good, '/a') },
      ],
    ],
    [b, 'org-b', [{ type: 'WEBHOOK', webhook: url(good, '/b') }]],
  ] as const) {
    await api.put(`/api/v2/environments/${org}`, { name: 'prod', type: 'K8S', description: '' });
    const res = await api.put(`/api/v2/actions/${org}/environments`, {
      name: 'alerts',
      environments: ['prod'],
      triggers: ['ON_STARTED_ARTIFACT'],
      targets,
    });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  for (const timer of timers) {
    clearInterval(timer);
  }
  for (const s of sockets) {
    s.destroy();
  }
  await t?.close();
  for (const s of [good, endless, trickle]) {
    await new Promise((r) => s?.close(r));
  }
});

describe('a slow or hostile receiver', () => {
  it('holds only its own deliveries: the same org and another org get theirs meanwhile, and the slow ones settle at the deadline', async () => {
    const report = (api: typeof a, org: string, n: string) =>
      api.put(`/api/v2/environments/${org}/prod/report/K8S`, {
        artifacts: deployment(`app-${n}`, `registry/app:${n}`, fp(n), 1),
      });
    expect((await report(a, 'org-a', '1')).status).toBe(200);
    await until(() => received.find((r) => r.path === '/a'));
    // The slow deliveries of org A are still in flight; new events of both orgs go out at once.
    let started = Date.now();
    await report(b, 'org-b', '2');
    const toB = await until(() => received.find((r) => r.path === '/b'));
    expect(toB.at - started).toBeLessThan(DEADLINE_MS);
    started = Date.now();
    await report(a, 'org-a', '3');
    const toA = await until(() => received.filter((r) => r.path === '/a')[1]);
    expect(toA.at - started).toBeLessThan(DEADLINE_MS);
    // Both arrived before the slow deliveries had even reached their deadline.
    const during = (await a.get('/api/v2/actions/org-a')).json[0];
    expect(during.targets[0]).toMatchObject({ last_success_at: null, last_failure_at: null });

    // The endless body is cut at the byte cap: the status (200) was the answer.
    await until(() => (endlessClosed ? true : undefined));
    const targets = await until(async () => {
      const action = (await a.get('/api/v2/actions/org-a')).json[0];
      const trickled = action.targets.filter((x: any) => x.webhook.includes('/trickle'));
      return trickled.every((x: any) => x.last_failure_at !== null) ? action.targets : undefined;
    });
    const host = `127.0.0.1:${(trickle.address() as AddressInfo).port}`;
    expect(targets[0].last_error).toBe(`no answer from ${host} within ${DEADLINE_MS} ms`);
    expect(targets[2].last_error).toBe(`no answer from ${host} within ${DEADLINE_MS} ms`);
    expect(targets[1]).toMatchObject({ last_error: null });
    expect(targets[1].last_success_at).not.toBeNull();
  });
});
