/** The error path of semantics.md section 1, as a client sees it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, client, type TestApp } from '../helpers/app.js';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_BODY_LIMIT_BYTES: '4096' } });
  key = await t.seedKey('acme', 'admin');
});
afterAll(async () => t?.close());

describe('error bodies', () => {
  it('reports validation errors per field under body., with the message the CLI prints', async () => {
    const res = await client(t.app, key).post('/api/v2/service-accounts/acme', {
      name: 'not valid!',
      privilege: 'owner',
      description: 7,
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('Input payload validation failed');
    expect(Object.keys(res.json.errors).sort()).toEqual(['body.description', 'body.name', 'body.privilege']);
    expect(res.json.errors['body.name']).toMatch(/pattern/);
  });

  it('rejects unknown JSON fields with 400 and names them', async () => {
    const res = await client(t.app, key).post('/api/v2/service-accounts/acme', { name: 'ci', extra: true });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual({ 'body.extra': 'Extra inputs are not permitted' });
    // and nothing was created
    expect((await client(t.app, key).get('/api/v2/service-accounts/acme/ci')).status).toBe(404);
  });

  it('names nested fields with their array index', async () => {
    const res = await client(t.app, key).post('/api/v2/service-accounts/acme/x/api-keys', {
      description: '',
      expires_at: 'soon',
    });
    // unknown account is checked after validation: the body is wrong first
    expect(res.status).toBe(400);
    expect(Object.keys(res.json.errors)).toEqual(['body.description', 'body.expires_at']);
  });

  it('answers malformed JSON with 400 and a message', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v2/service-accounts/acme',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json; charset=utf-8' },
      payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Malformed JSON body');
  });

  it('answers an unmatched /api/ path with a JSON 404, never a redirect', async () => {
    for (const url of ['/api/v2/nope', '/api/v2/flows/acme/x/y/z/w/v', '/api/v1/anything', '/nowhere']) {
      const res = await client(t.app, key).get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.json.message).toMatch(/^Not found: GET /);
      expect(res.headers.location).toBeUndefined();
    }
  });

  it('answers an over-size body with 413', async () => {
    const res = await client(t.app, key).post('/api/v2/service-accounts/acme', {
      name: 'big',
      description: 'x'.repeat(5000),
    });
    expect(res.status).toBe(413);
    expect(res.json.message).toMatch(/larger than the limit of 4096 bytes/);
  });

  it('accepts the null body the CLI sends on writes without a payload', async () => {
    const api = client(t.app, key);
    expect(
      (await api.post('/api/v2/service-accounts/acme', { name: 'tmp', privilege: 'reader' })).status,
    ).toBe(201);
    const res = await api.delete('/api/v2/service-accounts/acme/tmp', null);
    expect(res.status).toBe(200);
    expect(res.json).toBe('OK');
  });

  it('accepts an empty body with a JSON content type', async () => {
    const api = client(t.app, key);
    expect((await api.post('/api/v2/service-accounts/acme', { name: 'tmp2' })).status).toBe(201);
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v2/service-accounts/acme/tmp2',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json; charset=utf-8' },
      payload: '',
    });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a body on a route that takes none', async () => {
    const res = await client(t.app, key).delete('/api/v2/service-accounts/acme/whatever', { surprise: 1 });
    expect(res.status).toBe(400);
  });
});

describe('rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({
      env: { VERITY_RATE_LIMIT_PER_MINUTE: '5', VERITY_AUTH_FAILURES_PER_MINUTE: '3' },
    });
  });
  afterAll(async () => limited?.close());

  it('answers a burst over the limit with 429 and Retry-After, per key', async () => {
    const keyA = await limited.seedKey('acme', 'reader');
    const keyB = await limited.seedKey('acme', 'reader');
    const replies = [];
    for (let i = 0; i < 8; i++) {
      replies.push(await client(limited.app, keyA).get('/api/v2/organizations/acme'));
    }
    const statuses = replies.map((r) => r.status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const last = replies.at(-1)!;
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    expect(last.json.message).toMatch(/Rate limit exceeded/);
    // another key has its own budget
    expect((await client(limited.app, keyB).get('/api/v2/organizations/acme')).status).toBe(200);
    // health probes are never limited
    for (let i = 0; i < 10; i++) {
      expect((await limited.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    }
  });

  it('counts one key in one bucket however the Authorization header spells it', async () => {
    const key = await limited.seedKey('acme', 'reader');
    const spellings = [`Bearer ${key}`, `bearer  ${key}`, `Bearer\t${key}`, ` BEARER ${key}`];
    const statuses = [];
    for (let i = 0; i < 8; i++) {
      const res = await limited.app.inject({
        url: '/api/v2/organizations/acme',
        headers: { authorization: spellings[i % spellings.length]! },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });

  it('limits failed authentications per client address, not valid keys in use from it', async () => {
    const from = (remoteAddress: string, authorization: string) =>
      limited.app.inject({ url: '/api/v2/organizations/acme', remoteAddress, headers: { authorization } });
    const key = await limited.seedKey('acme', 'reader');
    expect((await from('203.0.113.7', `Bearer ${key}`)).statusCode).toBe(200);
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await from('203.0.113.7', `Bearer junk${i}`)).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    const limitedReply = await from('203.0.113.7', 'Bearer junk-again');
    expect(Number(limitedReply.headers['retry-after'])).toBeGreaterThan(0);
    expect(limitedReply.json().message).toMatch(/Rate limit exceeded/);
    // A valid key in use from the same address, and a bad key from another address, go on as before.
    expect((await from('203.0.113.7', `Bearer ${key}`)).statusCode).toBe(200);
    expect((await from('198.51.100.9', 'Bearer junk')).statusCode).toBe(401);
  });
});
