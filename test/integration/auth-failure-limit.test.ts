/**
 * The failed-authentication limit behind a proxy: the client address is the one the trusted
 * proxies name, never one the client writes into X-Forwarded-For, and an address over the limit
 * is refused before any key lookup.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { notificationsHeard } from '../helpers/elsewhere.js';

/** The ingress: it connects from 10.0.0.5 and appends the client's address to X-Forwarded-For. */
const INGRESS = '10.0.0.5';
const badKeysThroughIngress = async (t: TestApp, client: string, n: number) => {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.app.inject({
      url: '/api/v2/organizations/acme',
      remoteAddress: INGRESS,
      headers: {
        authorization: `Bearer bad-key-${i}`,
        // The client's own header, rotated on every request; the ingress appends the real address.
        'x-forwarded-for': `10.9.${i}.1, ${client}`,
      },
    });
    statuses.push(res.statusCode);
  }
  return statuses;
};
const limitedThenRefused = [...Array<number>(5).fill(401), ...Array<number>(15).fill(429)];

describe.each([
  ['a hop count', '1'],
  ['the legacy true, taken as one hop', 'true'],
  ['the proxy addresses', '10.0.0.0/8, 127.0.0.1'],
])('VERITY_TRUST_PROXY as %s', (_what, trust) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { VERITY_TRUST_PROXY: trust, VERITY_AUTH_FAILURES_PER_MINUTE: '5' },
    });
  });
  afterAll(async () => t?.close());

  it('limits 20 bad keys with rotating X-Forwarded-For to 5 failures, then 429', async () => {
    expect(await badKeysThroughIngress(t, '203.0.113.7', 20)).toEqual(limitedThenRefused);
    // Another client behind the same ingress has its own count.
    expect((await badKeysThroughIngress(t, '198.51.100.9', 1))[0]).toBe(401);
  });
});

describe('an address over the failure limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { VERITY_AUTH_FAILURES_PER_MINUTE: '3' } });
  });
  afterAll(async () => t?.close());

  it('gets 429 without a key lookup: answered while the key table is locked', async () => {
    const from = (authorization: string) =>
      t.app.inject({
        url: '/api/v2/organizations/acme',
        remoteAddress: '203.0.113.50',
        headers: { authorization },
      });
    const known = await t.seedKey('acme', 'reader');
    // The new key's notification clears the key cache when it arrives: let it arrive first.
    await notificationsHeard(t);
    expect((await from(`Bearer ${known}`)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect((await from(`Bearer junk${i}`)).statusCode).toBe(401);
    }
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.db.transaction().execute(async (trx) => {
      await sql`lock table api_keys in access exclusive mode`.execute(trx);
      locked();
      await held;
    });
    try {
      await lockTaken;
      const answers = await Promise.race([
        Promise.all([from('Bearer junk-a'), from('Bearer junk-b')]),
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 3000)),
      ]);
      expect(answers).not.toBe('timeout');
      const [a, b] = answers as Awaited<ReturnType<typeof from>>[];
      expect([a!.statusCode, b!.statusCode]).toEqual([429, 429]);
      expect(Number(a!.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      release();
      await holder;
    }
    // A key this replica already knows goes on from the same address; an unknown one waits.
    expect((await from(`Bearer ${known}`)).statusCode).toBe(200);
    const unknown = await t.seedKey('acme', 'reader');
    expect((await from(`Bearer ${unknown}`)).statusCode).toBe(429);
  });
});
