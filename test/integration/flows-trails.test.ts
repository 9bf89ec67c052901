/** Flows and trails: rename (spec rule 1, both halves), legacy flows, templates, listing, tags, concurrency. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import type { AttestationStatus, Flow, TrailEvent, TrailListItem } from '../suite/wire.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
let member: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof cliClient>;
const base = '/api/v2/flows/acme';

const createFlow = (name: string, template?: string) =>
  cli.multipart('PUT', `${base}/template_file`, [
    { name: 'data_json', value: JSON.stringify({ name, description: `${name} flow` }) },
    ...(template !== undefined
      ? [{ name: 'template_file', filename: 'template.yml', content: template }]
      : []),
  ]);
const beginTrail = (flow: string, name: string) =>
  member.multipart('PUT', `/api/v2/trails/acme/${flow}`, [
    { name: 'data_json', value: JSON.stringify({ name }) },
  ]);

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  member = cliClient(t.app, await t.seedKey('acme', 'member'));
  reader = cliClient(t.app, await t.seedKey('acme', 'reader'));
});
afterAll(async () => t?.close());

describe('flow rename (spec rule 1)', () => {
  it('keeps the old name answering reads and writes after a rename', async () => {
    expect((await createFlow('old-name', 'version: 1\n')).status).toBe(201);
    const renamed = await cli.json('PUT', `${base}/old-name/rename`, { new_name: 'new-name' });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toBe('OK');
    expect((await cli.get(`${base}/new-name`)).json.name).toBe('new-name');
    const viaOld = await cli.get(`${base}/old-name`);
    expect(viaOld.status).toBe(200);
    expect(viaOld.json.name).toBe('new-name');
    // A write through the old name lands on the renamed flow.
    expect((await beginTrail('old-name', 'via-old-name')).status).toBe(201);
    const trail = await cli.get('/api/v2/trails/acme/new-name/via-old-name');
    expect(trail.status).toBe(200);
    expect(trail.json.flow.name).toBe('new-name');
    expect((await cli.get('/api/v2/flows/acme')).json.map((f: Flow) => f.name)).not.toContain('old-name');
    const fp = '7'.repeat(64);
    const reported = await member.json('POST', '/api/v2/artifacts/acme/old-name', {
      fingerprint: fp,
      filename: 'app',
      build_url: 'b',
      commit_url: 'c',
      trail_name: 'via-old-name',
    });
    expect(reported.status).toBe(201);
    const artifact = await cli.get(`/api/v2/artifacts/acme/old-name/fingerprint/${fp}`);
    expect(artifact.status).toBe(200);
    expect(artifact.json.flow_name).toBe('new-name');
  });

  it('stops answering to the old name once another flow takes it', async () => {
    expect((await createFlow('other', 'version: 1\n')).status).toBe(201);
    expect((await cli.json('PUT', `${base}/other/rename`, { new_name: 'old-name' })).status).toBe(200);
    const taken = await cli.get(`${base}/old-name`);
    expect(taken.json.name).toBe('old-name');
    expect(taken.json.description).toBe('other flow');
    expect((await cli.get(`${base}/new-name`)).json.description).toBe('old-name flow');
  });

  it('creates a new flow under an old name (kosli create flow), with or without a template', async () => {
    const ownTemplate = 'version: 1\ntrail:\n  attestations:\n  - name: lint\n    type: generic\n';
    expect((await createFlow('payments', ownTemplate)).status).toBe(201);
    expect((await cli.json('PUT', `${base}/payments/rename`, { new_name: 'payments-v2' })).status).toBe(200);
    // Until the name is taken, writes through it reach the renamed flow.
    expect((await beginTrail('payments', 'via-alias')).status).toBe(201);
    expect((await cli.get('/api/v2/trails/acme/payments-v2/via-alias')).status).toBe(200);

    // Without a template: a new flow, 201; the renamed flow keeps its new name and its template.
    expect((await createFlow('payments')).status).toBe(201);
    expect((await cli.get(`${base}/payments`)).json).toMatchObject({
      name: 'payments',
      description: 'payments flow',
      template: 'version: 1\n',
    });
    expect((await cli.get(`${base}/payments-v2`)).json).toMatchObject({
      name: 'payments-v2',
      template: ownTemplate,
    });
    const names = (await cli.get(base)).json.map((f: Flow) => f.name);
    expect(names).toEqual(expect.arrayContaining(['payments', 'payments-v2']));
    // Writes under the name now reach the new flow.
    expect((await beginTrail('payments', 'after')).status).toBe(201);
    expect((await cli.get('/api/v2/trails/acme/payments/after')).json.flow.name).toBe('payments');
    expect((await cli.get('/api/v2/trails/acme/payments-v2/after')).status).toBe(404);
    expect((await cli.get('/api/v2/trails/acme/payments-v2/via-alias')).status).toBe(200);

    // With a template, and with the legacy PUT /flows: the same.
    expect((await cli.json('PUT', `${base}/payments-v2/rename`, { new_name: 'payments-v3' })).status).toBe(
      200,
    );
    expect((await createFlow('payments-v2', 'version: 1\n')).status).toBe(201);
    expect((await cli.get(`${base}/payments-v2`)).json.name).toBe('payments-v2');
    expect((await cli.get(`${base}/payments-v3`)).json.template).toBe(ownTemplate);
    expect((await cli.json('PUT', `${base}/payments-v3/rename`, { new_name: 'payments-v4' })).status).toBe(
      200,
    );
    expect((await cli.json('PUT', base, { name: 'payments-v3', description: 'legacy' })).status).toBe(201);
    expect((await cli.get(`${base}/payments-v3`)).json).toMatchObject({
      name: 'payments-v3',
      description: 'legacy',
    });
    expect((await cli.get(`${base}/payments-v4`)).json.template).toBe(ownTemplate);
  });

  it('refuses a rename to the name of another flow, and a bad name, with 400', async () => {
    const clash = await cli.json('PUT', `${base}/new-name/rename`, { new_name: 'old-name' });
    expect(clash.status).toBe(400);
    expect(clash.json.message).toBe("Flow named 'old-name' already exists for organization 'acme'");
    const bad = await cli.json('PUT', `${base}/new-name/rename`, { new_name: 'new illegal name' });
    expect(bad.status).toBe(400);
    expect(bad.json.errors['body.new_name']).toMatch(/pattern/);
    const missing = await cli.json('PUT', `${base}/nope/rename`, { new_name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe("Flow named 'nope' does not exist for organization 'acme'");
  });
});

describe('flows', () => {
  it('creates a legacy flow with PUT /flows (201 "OK"), showing its names as the template', async () => {
    const r = await cli.json('PUT', base, {
      name: 'legacy',
      description: 'old style',
      visibility: 'private',
      template: ['artifact', 'build'],
    });
    expect(r.status).toBe(201);
    expect(r.json).toBe('OK');
    expect(
      (await cli.json('PUT', base, { name: 'legacy', description: 'again', template: ['artifact'] })).status,
    ).toBe(200);
    expect((await cli.get(`${base}/legacy`)).json).toMatchObject({
      template: 'artifact',
      description: 'again',
    });
  });

  it('refuses an invalid template with the line and the reason, creating nothing', async () => {
    const r = await createFlow(
      'bad-template',
      'version: 1\ntrail:\n  attestations:\n  - name: foo\n    type: not-supported\n',
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('Invalid flow template');
    expect(r.json.errors.template_file).toMatch(
      /^line 5: trail\.attestations\[0\]\.type: attestation type 'not-supported' is not supported/,
    );
    expect((await cli.get(`${base}/bad-template`)).status).toBe(404);
  });

  it('refuses a flow body with an unknown field or a bad name in data_json', async () => {
    const unknown = await cli.multipart('PUT', `${base}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name: 'x1', description: '', colour: 'red' }) },
    ]);
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors).toEqual({ 'data_json.colour': 'Extra inputs are not permitted' });
    const badName = await cli.multipart('PUT', `${base}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name: '-x', description: '' }) },
    ]);
    expect(badName.json.errors['data_json.name']).toMatch(/pattern/);
    const notJson = await cli.multipart('PUT', `${base}/template_file`, [
      { name: 'data_json', value: '{nope' },
    ]);
    expect(notJson.status).toBe(400);
    expect(notJson.json.errors.data_json).toMatch(/must be JSON/);
    const extraPart = await cli.multipart('PUT', `${base}/template_file`, [
      { name: 'data_json', value: JSON.stringify({ name: 'x2', description: '' }) },
      { name: 'surprise', value: '1' },
    ]);
    expect(extraPart.status).toBe(400);
    expect((await cli.get(`${base}/x2`)).status).toBe(404);
  });

  it('lists flows sorted by latest activity, with latest_activity_at and latest_state', async () => {
    await createFlow('quiet', 'version: 1\n');
    t.clock.advance(60_000);
    expect((await beginTrail('legacy', 'recent')).status).toBe(201);
    const byActivity = await cli.get(`${base}?sort=latest_activity&sort_direction=desc`);
    expect(byActivity.json[0].name).toBe('legacy');
    expect(byActivity.json[0].latest_state).toBe('COMPLIANT');
    expect(byActivity.json[0].latest_activity_at).toBe(t.clock.seconds());
    const quiet = byActivity.json.find((f: Flow) => f.name === 'quiet');
    expect(quiet.latest_activity_at).toBeNull();
    const byName = await cli.get(`${base}?sort=name&sort_direction=desc`);
    const names = byName.json.map((f: Flow) => f.name);
    expect(names).toEqual([...names].sort().reverse());
    const bad = await cli.get(`${base}?sort=colour`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors['query.sort']).toBeDefined();
  });

  it('tags a flow (PATCH /tags/{org}/flow/{name}) and filters flows and trails by tag', async () => {
    const r = await member.json('PATCH', '/api/v2/tags/acme/flow/legacy', {
      set_tags: { team: 'payments', risk: 'high' },
      remove_tags: [],
    });
    expect(r.status).toBe(200);
    expect(r.json).toBe('OK');
    await member.json('PATCH', '/api/v2/tags/acme/flows/legacy', { set_tags: {}, remove_tags: ['risk'] });
    expect((await cli.get(`${base}/legacy`)).json.tags).toEqual({ team: 'payments' });
    expect((await cli.get(`${base}?tag=team:payments`)).json.map((f: Flow) => f.name)).toEqual(['legacy']);
    const trails = await cli.get('/api/v2/trails/acme?flow_tag=team=payments&page=1&per_page=20');
    expect(trails.json.data.map((x: TrailListItem) => x.name)).toEqual(['recent']);
    const none = await cli.get('/api/v2/trails/acme?flow_tag=team:nobody');
    expect(none.json).toEqual({ data: [], pagination: { total: 0, page: 1, per_page: 20, page_count: 0 } });
    expect((await reader.json('PATCH', '/api/v2/tags/acme/flow/legacy', { set_tags: {} })).status).toBe(403);
  });

  it('answers environment tags with 404 until environments exist, and unknown types with 400', async () => {
    const env = await member.json('PATCH', '/api/v2/tags/acme/env/prod', {
      set_tags: { a: 'b' },
      remove_tags: [],
    });
    expect(env.status).toBe(404);
    expect(env.json.message).toBe("Environment named 'prod' does not exist for organization 'acme'");
    expect((await member.json('PATCH', '/api/v2/tags/acme/galaxy/x', { set_tags: {} })).status).toBe(400);
  });

  it('archives a flow', async () => {
    expect((await cli.json('PUT', `${base}/quiet/archive`)).status).toBe(200);
    expect((await cli.get(`${base}/quiet`)).json.archived).toBe(true);
  });
});

describe('trails', () => {
  it('begins a trail with JSON too, 201 then 200, and lists trails per flow', async () => {
    const first = await member.json('PUT', '/api/v2/trails/acme/legacy', {
      name: 'json-trail',
      description: 'first',
    });
    expect(first.status).toBe(201);
    const second = await member.json('PUT', '/api/v2/trails/acme/legacy', {
      name: 'json-trail',
      description: 'second',
    });
    expect(second.status).toBe(200);
    const got = await cli.get('/api/v2/trails/acme/legacy/json-trail');
    expect(got.json.description).toBe('second');
    expect(got.json.events.map((e: TrailEvent) => e.type)).toEqual(['trail_reported', 'trail_updated']);
    const list = await cli.get('/api/v2/trails/acme/legacy?per_page=1');
    expect(list.json.pagination).toMatchObject({ total: 2, per_page: 1, page_count: 2 });
  });

  it('answers 404 for a trail of a missing flow and a missing trail', async () => {
    const noFlow = await beginTrail('ghost', 't');
    expect(noFlow.status).toBe(404);
    expect(noFlow.json.message).toBe("Flow named 'ghost' does not exist for organization 'acme'");
    const noTrail = await cli.get('/api/v2/trails/acme/legacy/ghost');
    expect(noTrail.status).toBe(404);
    expect((await cli.get('/api/v2/trails/acme?flow=ghost')).status).toBe(404);
  });

  it('applies a per-trail template over the flow template', async () => {
    await createFlow('templated', 'version: 1\n');
    const r = await member.multipart('PUT', '/api/v2/trails/acme/templated', [
      { name: 'data_json', value: JSON.stringify({ name: 'own-template' }) },
      {
        name: 'template_file',
        filename: 't.yml',
        content: 'version: 1\ntrail:\n  attestations:\n  - name: sign-off\n    type: generic\n',
      },
    ]);
    expect(r.status).toBe(201);
    const trail = await cli.get('/api/v2/trails/acme/templated/own-template');
    expect(trail.json.compliance_state).toBe('INCOMPLETE');
    expect(trail.json.compliance_status.attestations_statuses).toEqual([
      expect.objectContaining({ attestation_name: 'sign-off', status: 'MISSING', is_compliant: null }),
    ]);
  });

  it('makes one trail of 50 parallel begins of one name, answering only 200, 201 or 409', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => beginTrail('templated', 'race')));
    const statuses = results.map((r) => r.status);
    expect(
      statuses.every((s) => [200, 201, 409].includes(s)),
      statuses.join(','),
    ).toBe(true);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    const list = await cli.get('/api/v2/trails/acme/templated?per_page=100');
    expect(list.json.data.filter((x: TrailListItem) => x.name === 'race')).toHaveLength(1);
  });

  it('keeps every one of 30 parallel attestations to one trail in its evaluation and event log', async () => {
    const url = '/api/v2/attestations/acme/templated/trail/race/generic';
    const report = (name: string) =>
      cli.multipart('POST', url, [
        { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
      ]);
    // One report first, so the rest find the organization's settings known (the unlocked path).
    expect((await report('first')).status).toBe(201);
    const names = Array.from({ length: 30 }, (_, i) => `parallel-${i}`);
    const results = await Promise.all(names.map(report));
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201));
    const trail = (await cli.get('/api/v2/trails/acme/templated/race')).json;
    const slots = trail.compliance_status.attestations_statuses.map(
      (s: AttestationStatus) => s.attestation_name,
    );
    expect(slots).toEqual(expect.arrayContaining(['first', ...names]));
    expect(slots.filter((n: string) => n.startsWith('parallel-'))).toHaveLength(30);
    expect(trail.events.filter((e: TrailEvent) => e.type === 'trail_attestation_reported')).toHaveLength(31);
  });
});
