/**
 * Text the database cannot hold, as a client sends it: a NUL character or a lone UTF-16
 * surrogate in any field of a JSON body, a multipart JSON part, a query string or a path, and
 * JSON nested deeper than the bound, is a 400 naming the field, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const FP = 'abcdea'.padEnd(64, 'b');

/** A JSON body sent as raw text, so that escapes such as `\ud800` reach the server as written. */
const rawJson = (method: 'PUT' | 'POST', url: string, text: string) =>
  t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json; charset=utf-8' },
    payload: text,
  });
let key: string;

const countAttestations = async () =>
  (await cli.get('/api/v2/attestations/acme/f1?per_page=100')).json.pagination.total as number;
/** JSON text of objects nested `depth` deep, built as text: a value that deep would not stringify. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;

beforeAll(async () => {
  t = await createTestApp();
  key = await t.seedKey('acme', 'admin');
  cli = cliClient(t.app, key);
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'f1', description: '' })).status).toBe(201);
  expect((await cli.json('PUT', '/api/v2/trails/acme/f1', { name: 't1' })).status).toBe(201);
});
afterAll(async () => t?.close());

describe('NUL characters', () => {
  it('refuses a NUL in a JSON description with 400 naming the field, and creates nothing', async () => {
    const res = await cli.json('PUT', '/api/v2/flows/acme', { name: 'nul', description: 'a\u0000b' });
    expect(res.status, res.body).toBe(400);
    expect(res.json.message).toBe('Input payload validation failed');
    expect(res.json.errors).toEqual({ 'body.description': expect.stringMatching(/NUL/) });
    expect((await cli.get('/api/v2/flows/acme/nul')).status).toBe(404);
  });

  it('refuses a NUL deep in user_data, and in a key of it', async () => {
    const inValue = await cli.json('PUT', '/api/v2/trails/acme/f1', {
      name: 'ud',
      user_data: { build: { notes: ['ok', 'x\u0000'] } },
    });
    expect(inValue.status, inValue.body).toBe(400);
    expect(inValue.json.errors).toEqual({ 'body.user_data.build.notes[1]': expect.stringMatching(/NUL/) });
    const inKey = await cli.json('PUT', '/api/v2/trails/acme/f1', {
      name: 'ud',
      user_data: { 'k\u0000': 1 },
    });
    expect(inKey.status, inKey.body).toBe(400);
    expect(Object.keys(inKey.json.errors)).toEqual(['body.user_data']);
    expect(inKey.json.errors['body.user_data']).toMatch(/key.*NUL/);
    expect((await cli.get('/api/v2/trails/acme/f1/ud')).status).toBe(404);
  });

  it('refuses a NUL in the description of a trail sent as multipart data_json', async () => {
    const res = await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
      { name: 'data_json', value: JSON.stringify({ name: 'mp', description: 'x\u0000y' }) },
    ]);
    expect(res.status, res.body).toBe(400);
    expect(res.json.errors).toEqual({ 'data_json.description': expect.stringMatching(/NUL/) });
    expect((await cli.get('/api/v2/trails/acme/f1/mp')).status).toBe(404);
  });

  it('refuses a NUL in the data_json of a multipart attestation, and stores no attestation', async () => {
    const before = await countAttestations();
    const res = await cli.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
      {
        name: 'data_json',
        value: JSON.stringify({ attestation_name: 'nul', is_compliant: true, description: 'a\u0000b' }),
      },
      { name: 'attachment_file', filename: 'bytes.bin', content: Buffer.from([0, 1, 0, 2]) },
    ]);
    expect(res.status, res.body).toBe(400);
    expect(res.json.errors).toEqual({ 'data_json.description': expect.stringMatching(/NUL/) });
    expect(await countAttestations()).toBe(before);
  });

  it('takes evidence files holding NUL bytes: they are bytes, not text', async () => {
    const res = await cli.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'bin', is_compliant: true }) },
      { name: 'attachment_file', filename: 'bytes.bin', content: Buffer.from([0, 1, 0, 2]) },
    ]);
    expect(res.status, res.body).toBe(201);
  });

  it('refuses a NUL in a query string and in a path segment', async () => {
    const query = await cli.get(`/api/v2/exposure/acme?purl=${encodeURIComponent('pkg:npm/a\u0000b')}`);
    expect(query.status, query.body).toBe(400);
    expect(query.json.errors).toEqual({ 'query.purl': expect.stringMatching(/NUL/) });
    const path = await cli.get(`/api/v2/attestations/acme/f1/artifact/${FP}/a%00b`);
    expect(path.status, path.body).toBe(400);
    expect(path.json.errors).toEqual({ 'path.name': expect.stringMatching(/NUL/) });
  });
});

describe('lone surrogates', () => {
  it('refuses a lone UTF-16 surrogate in a JSON string with 400, and creates nothing', async () => {
    const res = await rawJson('PUT', '/api/v2/flows/acme', '{"name":"sur","description":"a\\ud800b"}');
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toEqual({ 'body.description': expect.stringMatching(/surrogate/) });
    expect((await cli.get('/api/v2/flows/acme/sur')).status).toBe(404);
  });

  it('finds a lone surrogate deep in a large report (checked in slices), and records nothing', async () => {
    expect((await cli.json('PUT', '/api/v2/environments/acme', { name: 'big', type: 'K8S' })).status).toBe(
      201,
    );
    // 30,000 pods are some 150,000 strings: the check turns the event loop several times first.
    const pods = Array.from({ length: 30_000 }, (_, i) => ({
      podName: `p-${i}`,
      namespace: 'ns',
      digests: { [`r.example/svc-${i}:v1`]: FP },
      creationTimestamp: 1_700_000_000,
    }));
    const text = JSON.stringify({ artifacts: pods }).replace('"p-29000"', '"p-\\udc00"');
    const res = await rawJson('PUT', '/api/v2/environments/acme/big/report/K8S', text);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toEqual({
      'body.artifacts[29000].podName': expect.stringMatching(/surrogate/),
    });
    expect((await cli.get('/api/v2/snapshots/acme/big')).json).toEqual([]);
  });

  it('keeps a well-formed surrogate pair (an emoji) as it is', async () => {
    const res = await rawJson(
      'PUT',
      '/api/v2/flows/acme',
      '{"name":"pair","description":"ok \\ud83d\\ude00"}',
    );
    expect(res.statusCode, res.body).toBe(201);
    expect((await cli.get('/api/v2/flows/acme/pair')).json.description).toBe('ok \u{1F600}');
  });
});

describe('nesting depth', () => {
  it('refuses a JSON body nested 10,000 deep with 400, and creates nothing', async () => {
    const text = `{"name":"deep","user_data":${nested(10_000)}}`;
    const res = await rawJson('PUT', '/api/v2/trails/acme/f1', text);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe('Input payload validation failed');
    expect(Object.values(res.json().errors).join()).toMatch(/nested deeper than 64/);
    expect((await cli.get('/api/v2/trails/acme/f1/deep')).status).toBe(404);
  });

  it('refuses a multipart data_json nested 10,000 deep', async () => {
    const res = await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
      { name: 'data_json', value: `{"name":"deep2","user_data":${nested(10_000)}}` },
    ]);
    expect(res.status, res.body).toBe(400);
    expect(Object.keys(res.json.errors)[0]).toMatch(/^data_json\.user_data/);
  });

  it('takes user_data nested within the bound', async () => {
    const res = await rawJson(
      'PUT',
      '/api/v2/trails/acme/f1',
      `{"name":"shallow","user_data":${nested(60)}}`,
    );
    expect(res.statusCode, res.body).toBe(201);
  });
});
