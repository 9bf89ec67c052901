/** Operations endpoints: /ready, /healthz, /readyz, /metrics. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

describe('operations endpoints', () => {
  it('answers GET /ready with plain OK, as kosli status expects', async () => {
    const res = await t.app.inject({ url: '/ready', headers: { authorization: 'Bearer anything' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('OK');
  });

  it('reports liveness and database readiness', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok' });
  });

  it('counts requests by route pattern, method and status, with latency and process metrics', async () => {
    const key = await t.seedKey('acme', 'reader');
    await client(t.app, key).get('/api/v2/organizations/acme');
    await client(t.app, key).get('/api/v2/service-accounts/acme/nobody');
    await client(t.app).get('/api/v2/nope');
    const res = await t.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    const text = res.body;
    expect(text).toMatch(
      /verity_http_requests_total\{route="\/api\/v2\/organizations\/:org",method="GET",status="200"\} 1/,
    );
    expect(text).toMatch(
      /verity_http_requests_total\{route="\/api\/v2\/service-accounts\/:org\/:name",method="GET",status="404"\} 1/,
    );
    expect(text).toMatch(/verity_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    expect(text).toMatch(
      /verity_http_request_duration_seconds_bucket\{le="0.005",route="\/api\/v2\/organizations\/:org"/,
    );
    expect(text).toMatch(/process_resident_memory_bytes/);
    // raw values never become labels
    expect(text).not.toContain('nobody');
  });

  it('answers 503 from /readyz when the database is gone', async () => {
    const other = await createTestApp();
    await other.db.close();
    const res = await other.app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable' });
    await other.app.close();
  });
});
