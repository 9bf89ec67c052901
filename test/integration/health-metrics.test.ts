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
    const res = await t.app.metrics.server.inject({ url: '/metrics' });
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

  it('names no organization or environment to an unauthenticated client of the API port', async () => {
    // Its own app: the runtime gauges share one read of the database per second.
    const own = await createTestApp();
    const key = await own.seedKey('tenant-secret-org', 'member');
    const put = await client(own.app, key).put('/api/v2/environments/tenant-secret-org', {
      name: 'hidden-env',
      type: 'K8S',
      description: '',
    });
    expect(put.status).toBe(201);
    const report = await client(own.app, key).put(
      '/api/v2/environments/tenant-secret-org/hidden-env/report/K8S',
      {
        artifacts: [],
      },
    );
    expect(report.status).toBe(200);
    const onApiPort = await own.app.inject({ url: '/metrics' });
    expect(onApiPort.statusCode).toBe(404);
    expect(onApiPort.body).not.toContain('tenant-secret-org');
    expect(onApiPort.body).not.toContain('hidden-env');
    // The metrics listener (its own port) still has them, for Prometheus.
    const scraped = await own.app.metrics.server.inject({ url: '/metrics' });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.body).toContain('tenant-secret-org');
    expect(scraped.body).toContain('verity_database_available 1');
    await own.close();
  });

  it('reports the database unavailable at scrape time without failing the scrape', async () => {
    const other = await createTestApp();
    await other.seedKey('acme', 'admin');
    await other.db.close();
    const res = await other.app.metrics.server.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('verity_database_available 0');
    await other.app.close();
  });

  it('answers 503 from /readyz when the database is gone', async () => {
    const other = await createTestApp();
    await other.db.close();
    const res = await other.app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable' });
    await other.app.close();
  });

  it('asks a scrape for the metrics token when one is set: 401 without it or with another', async () => {
    const token = 'scrape-token-0123456789';
    const guarded = await createTestApp({ env: { VERITY_METRICS_TOKEN: token } });
    await guarded.seedKey('acme', 'admin');
    const scrape = (authorization?: string) =>
      guarded.app.metrics.server.inject({
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      });
    for (const refused of [
      await scrape(),
      await scrape('Bearer wrong-token-0123456789'),
      await scrape(token),
    ]) {
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(refused.body).not.toContain('acme');
    }
    const scraped = await scrape(`Bearer ${token}`);
    expect(scraped.statusCode).toBe(200);
    expect(scraped.body).toContain('verity_database_available 1');
    await guarded.close();
  });
});
