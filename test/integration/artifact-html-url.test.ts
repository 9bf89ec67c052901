/**
 * What a trail's or an artifact's page reads in one request: an artifact by the record id its
 * html_url carries (`?artifact_id=`), and all attestations of one trail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { fp } from '../helpers/runtime.js';

let t: TestApp;
let api: ReturnType<typeof client>;
let key: string;
const ORG = 'acme';
const FP = fp('a');

beforeAll(async () => {
  t = await createTestApp();
  key = await t.seedKey(ORG, 'member');
  api = client(t.app, key);
  expect((await api.put(`/api/v2/flows/${ORG}`, { name: 'web', description: '' })).status).toBeLessThan(300);
  for (const trail of ['first', 'second']) {
    expect((await api.put(`/api/v2/trails/${ORG}/web`, { name: trail })).status).toBeLessThan(300);
    t.clock.advance(1000);
    const res = await api.post(`/api/v2/artifacts/${ORG}/web`, {
      fingerprint: FP,
      filename: 'web:1',
      build_url: 'https://ci.example/1',
      commit_url: 'https://git.example/c/1',
      trail_name: trail,
    });
    expect(res.status).toBeLessThan(300);
  }
});
afterAll(async () => t?.close());

describe('artifact by the id in its html_url', () => {
  it('reads the record of the trail the id names, not the latest one', async () => {
    const latest = (await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${FP}`)).json;
    expect(latest.trail_name).toBe('second');
    const first = (await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${FP}?trail=first`)).json;
    const url = new URL(first.html_url);
    expect(url.pathname).toBe(`/${ORG}/flows/web/artifacts/${FP}`);
    const id = url.searchParams.get('artifact_id');
    expect(id).toBe(first.id);
    const byId = await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${FP}?artifact_id=${id}`);
    expect(byId.status).toBe(200);
    expect(byId.json.trail_name).toBe('first');
    expect(byId.json.id).toBe(id);
  });

  it('is 404 for an id of another fingerprint, and 400 for a malformed id', async () => {
    const id = (await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${FP}`)).json.id;
    const other = await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${fp('b')}?artifact_id=${id}`);
    expect(other.status).toBe(404);
    expect((await api.get(`/api/v2/artifacts/${ORG}/web/fingerprint/${FP}?artifact_id=nope`)).status).toBe(
      400,
    );
  });
});

describe('attestations of one trail', () => {
  it('lists only the named trail of the flow, whatever other trails hold', async () => {
    for (const [trail, name] of [
      ['first', 'sign-off'],
      ['second', 'sign-off'],
      ['second', 'security'],
    ] as const) {
      const res = await cliClient(t.app, key).multipart(
        'POST',
        `/api/v2/attestations/${ORG}/web/trail/${trail}/generic`,
        [{ name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) }],
      );
      expect(res.status).toBe(201);
    }
    const second = await api.get(`/api/v2/attestations/${ORG}?flow=web&trail=second&per_page=100`);
    expect(second.status).toBe(200);
    expect(second.json.data.map((a: any) => [a.trail_name, a.attestation_name]).sort()).toEqual([
      ['second', 'security'],
      ['second', 'sign-off'],
    ]);
    const first = await api.get(`/api/v2/attestations/${ORG}?flow=web&trail=first`);
    expect(first.json.data.map((a: any) => a.trail_name)).toEqual(['first']);
  });
});
