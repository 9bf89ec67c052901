/** The shared client over real HTTP against the real app. */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  isRetryable,
  retryAfterMs,
  VerityApiError,
} from '../../services/shared/client/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_RATE_LIMIT_PER_MINUTE: '3' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t?.close());

describe('shared client', () => {
  it('reads the organization with a key that may change between requests', async () => {
    let key = 'wrong-key-000000000000000';
    const client = createClient({ baseUrl, org: 'acme', token: () => key });
    const good = await t.seedKey('acme', 'reader');
    const err = await client.organizations.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerityApiError);
    expect((err as VerityApiError).status).toBe(401);
    expect(isRetryable(err)).toBe(false);
    key = good;
    expect(await client.organizations.get()).toMatchObject({
      name: 'acme',
      experimental_features_enabled: false,
    });
  });

  it('carries Retry-After of a 429 and classifies it as retryable', async () => {
    const client = createClient({ baseUrl, org: 'acme', token: await t.seedKey('acme', 'reader') });
    let caught: unknown;
    for (let i = 0; i < 5 && !caught; i++) {
      caught = await client.organizations.get().then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect((caught as VerityApiError).status).toBe(429);
    expect(isRetryable(caught)).toBe(true);
    expect(retryAfterMs(caught)).toBeGreaterThan(0);
  });

  it('reports an unreachable server as status 0, retryable', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', org: 'acme', token: 'x', timeoutMs: 2000 });
    const err = await client.organizations.get().catch((e: unknown) => e);
    expect((err as VerityApiError).status).toBe(0);
    expect(isRetryable(err)).toBe(true);
  });
});
