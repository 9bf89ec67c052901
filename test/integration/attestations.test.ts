/**
 * Attestations over HTTP: bad input of every kind is a 400 (or 413) that changes nothing,
 * binding failures answer with the spec's messages, overrides work on a slot never reported,
 * evidence files download with their type and name, fingerprint prefixes resolve or explain.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import type { DomainEvent } from '../../services/api/src/usecases/scope/domain-events.js';
import { attestationsRepository } from '../../services/api/src/storage/repositories/attestations.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { trailStore } from '../../services/api/src/storage/trail-store/index.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const published: DomainEvent[] = [];
const FP = 'abcdea'.padEnd(64, 'b');
const FP2 = 'abcde'.padEnd(64, '9');
const COMMIT = 'c'.repeat(40);
const url = (kind: string, trail = 't1') => `/api/v2/attestations/acme/f1/trail/${trail}/${kind}`;
const attest = (
  kind: string,
  data: unknown,
  trail = 't1',
  file?: { filename: string; content: string | Buffer },
) =>
  cli.multipart('POST', url(kind, trail), [
    { name: 'data_json', value: typeof data === 'string' ? data : JSON.stringify(data) },
    ...(file ? [{ name: 'attachment_file', ...file }] : []),
  ]);
const trailOf = async (trail = 't1') => (await cli.get(`/api/v2/trails/acme/f1/${trail}`)).json;
/** The fingerprints the last attestation write marks the environments of (where they run). */
const markedBy = (writes: { mock: { lastCall?: Parameters<typeof trailStore.insertAttestationBatch> } }) =>
  writes.mock.lastCall?.[1].flatMap((w) => w.marks?.fingerprints ?? []);
const countAttestations = async () =>
  (await cli.get('/api/v2/attestations/acme/f1?per_page=100')).json.pagination.total as number;

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_EVIDENCE_MAX_BYTES: '2048' } });
  t.app.domainEvents.subscribe(async (_db, events) => {
    published.push(...events);
  });
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  await cli.multipart('PUT', '/api/v2/flows/acme/template_file', [
    { name: 'data_json', value: JSON.stringify({ name: 'f1', description: '' }) },
    {
      name: 'template_file',
      filename: 't.yml',
      content:
        'version: 1\ntrail:\n  attestations:\n  - name: sign-off\n    type: generic\n  artifacts:\n  - name: app\n    attestations:\n    - name: tests\n      type: junit\n',
    },
  ]);
  await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
    { name: 'data_json', value: JSON.stringify({ name: 't1' }) },
  ]);
  for (const fp of [FP, FP2]) {
    await cli.json('POST', '/api/v2/artifacts/acme/f1', {
      fingerprint: fp,
      filename: `app-${fp.slice(0, 4)}`,
      git_commit: COMMIT,
      build_url: 'https://ci/1',
      commit_url: 'https://git/1',
      template_reference_name: 'app',
      trail_name: 't1',
    });
  }
});
afterEach(() => vi.restoreAllMocks());
afterAll(async () => t?.close());

describe('bad input changes nothing', () => {
  const junit = (overrides: Record<string, unknown>) => ({
    attestation_name: 'tests',
    artifact_fingerprint: FP,
    junit_results: [{ name: 's', failures: 0, errors: 0, skipped: 0, total: 1, duration: 1, ...overrides }],
  });
  it.each([
    ['a negative junit count', 'junit', junit({ failures: -1 }), 'data_json.junit_results[0].failures'],
    [
      'a 63-hex fingerprint',
      'generic',
      { attestation_name: 'x', artifact_fingerprint: 'a'.repeat(63), is_compliant: true },
      'data_json.artifact_fingerprint',
    ],
    [
      'a bad attestation name',
      'generic',
      { attestation_name: 'has space', is_compliant: true },
      'data_json.attestation_name',
    ],
    [
      'an unknown field',
      'generic',
      { attestation_name: 'x', is_compliant: true, colour: 1 },
      'data_json.colour',
    ],
    ['a missing is_compliant', 'generic', { attestation_name: 'x' }, 'data_json.is_compliant'],
    [
      'a huge array',
      'junit',
      {
        attestation_name: 'x',
        junit_results: Array.from({ length: 2001 }, () => ({
          name: 's',
          failures: 0,
          errors: 0,
          skipped: 0,
          total: 1,
          duration: 0,
        })),
      },
      'data_json.junit_results',
    ],
    [
      'an unknown provider',
      'pull_request',
      { attestation_name: 'x', git_provider: 'svn', pull_requests: [] },
      'data_json.git_provider',
    ],
    ['data_json that is not JSON', 'generic', '{"attestation_name": ', 'data_json'],
  ])('%s', async (_label, kind, data, field) => {
    const before = await countAttestations();
    const r = await attest(kind, data);
    expect(r.status, r.body).toBe(400);
    expect(r.json.message).toBe('Input payload validation failed');
    expect(Object.keys(r.json.errors)).toContain(field);
    expect(await countAttestations()).toBe(before);
  });

  it('refuses an unknown attestation kind with the list of kinds', async () => {
    const r = await attest('bogus', { attestation_name: 'x' });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/^Unknown attestation type 'bogus': use one of generic, junit/);
  });

  it('refuses malformed multipart, a missing data_json, a repeated part and a JSON body', async () => {
    const malformed = await cliBroken();
    expect(malformed.status).toBe(400);
    const missing = await cli.multipart('POST', url('generic'), [
      { name: 'attachment_file', filename: 'a.txt', content: 'x' },
    ]);
    expect(missing.status).toBe(400);
    expect(missing.json.errors).toEqual({ data_json: 'Field required' });
    const twice = await cli.multipart('POST', url('generic'), [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'x', is_compliant: true }) },
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'y', is_compliant: true }) },
    ]);
    expect(twice.status).toBe(400);
    expect(twice.json.errors.data_json).toMatch(/more than once/);
    const asJson = await cli.json('POST', url('generic'), { attestation_name: 'x', is_compliant: true });
    expect(asJson.status).toBe(400);
  });

  it('takes data_json sent as an application/json part, and refuses one that is not JSON', async () => {
    const before = await countAttestations();
    const typed = await jsonTypedPart('{"attestation_name":"typed-json","is_compliant":true}');
    expect(typed.status).toBe(201);
    expect(await countAttestations()).toBe(before + 1);
    const broken = await jsonTypedPart('{"attestation_name":');
    expect(broken.status).toBe(400);
    expect(broken.json.errors).toEqual({ body: 'a form part sent as application/json is not valid JSON' });
    expect(await countAttestations()).toBe(before + 1);
  });

  it('answers 413 for an evidence file over VERITY_EVIDENCE_MAX_BYTES and stores nothing', async () => {
    const before = await countAttestations();
    const r = await attest('generic', { attestation_name: 'big', is_compliant: true }, 't1', {
      filename: 'big.bin',
      content: Buffer.alloc(4096),
    });
    expect(r.status).toBe(413);
    expect(await countAttestations()).toBe(before);
  });
});

/** A generic attestation whose data_json part says Content-Type: application/json, as curl -F '...;type=application/json' sends it. */
async function jsonTypedPart(dataJson: string) {
  const key = await t.seedKey('acme', 'member');
  const res = await t.app.inject({
    method: 'POST',
    url: url('generic'),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=zzz' },
    payload: `--zzz\r\nContent-Disposition: form-data; name="data_json"\r\nContent-Type: application/json\r\n\r\n${dataJson}\r\n--zzz--\r\n`,
  });
  return { status: res.statusCode, json: JSON.parse(res.body) };
}

async function cliBroken() {
  const key = await t.seedKey('acme', 'member');
  const res = await t.app.inject({
    method: 'POST',
    url: url('generic'),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=zzz' },
    payload:
      '--zzz\r\nContent-Disposition: form-data; name="data_json"\r\n\r\n{"attestation_name":"x","is_compliant":true}',
  });
  return { status: res.statusCode, json: JSON.parse(res.body) };
}

describe('binding', () => {
  it('answers 404 with the spec message for a fingerprint not in the trail', async () => {
    const other = 'f'.repeat(64);
    const r = await attest('generic', {
      attestation_name: 'x',
      artifact_fingerprint: other,
      is_compliant: true,
    });
    expect(r.status).toBe(404);
    expect(r.json.message).toBe(
      `Artifact with fingerprint ${other} does not exist in trail "t1" of flow "f1" belonging to organization "acme"`,
    );
  });

  it('requires a fingerprint or a commit for an attestation on a template artifact', async () => {
    const r = await attest('generic', {
      attestation_name: 'x',
      target_artifacts: ['app'],
      is_compliant: true,
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/requires at least one of: artifact_fingerprint or git_commit_info\.$/);
  });

  it('shows an attestation whose commit matches no artifact as unbound, with the reason', async () => {
    const r = await attest('generic', {
      attestation_name: 'tests',
      target_artifacts: ['app'],
      git_commit_info: { sha1: 'd'.repeat(40) },
      is_compliant: true,
    });
    expect(r.status).toBe(201);
    const trail = await trailOf();
    expect(trail.compliance_status.unbound_attestations).toEqual([
      expect.objectContaining({
        attestation_name: 'tests',
        target_artifacts: ['app'],
        git_commit: 'd'.repeat(40),
      }),
    ]);
    expect(trail.compliance_status.unbound_attestations[0].reason).toMatch(
      /no artifact named 'app' with commit d{40}/,
    );
  });

  it('creates the flow and trail when attesting to ones that do not exist', async () => {
    const r = await cli.multipart('POST', '/api/v2/attestations/acme/auto-flow/trail/auto-trail/generic', [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'smoke', is_compliant: false }) },
    ]);
    expect(r.status).toBe(201);
    const trail = await cli.get('/api/v2/trails/acme/auto-flow/auto-trail');
    expect(trail.json.compliance_state).toBe('NON-COMPLIANT');
    expect(trail.json.compliance_status.attestations_statuses[0]).toMatchObject({
      unexpected: true,
      is_compliant: false,
    });
  });
});

describe('compliance over HTTP', () => {
  it('is INCOMPLETE while template slots are MISSING and NON-COMPLIANT as soon as one fails', async () => {
    const trail = await trailOf();
    expect(trail.compliance_state).toBe('INCOMPLETE');
    const r = await attest('junit', {
      attestation_name: 'tests',
      artifact_fingerprint: FP,
      junit_results: [{ name: 's', failures: 2, errors: 0, skipped: 0, total: 5, duration: 1 }],
    });
    expect(r.status).toBe(201);
    // The trail shows the latest build named 'app' (FP2), which still misses its tests.
    expect((await trailOf()).compliance_state).toBe('INCOMPLETE');
    const artifact = await cli.get(`/api/v2/artifacts/acme/f1/fingerprint/${FP}`);
    expect(artifact.json.state).toBe('NON-COMPLIANT');
    expect(artifact.json.state_info).toMatch(/non-compliant: tests/);
    const assert = await cli.get(`/api/v2/asserts/acme/fingerprint/${FP}`);
    expect(assert.json.compliant).toBe(false);
    await attest('junit', {
      attestation_name: 'tests',
      artifact_fingerprint: FP2,
      junit_results: [{ name: 's', failures: 0, errors: 1, skipped: 0, total: 5, duration: 1 }],
    });
    expect((await trailOf()).compliance_state).toBe('NON-COMPLIANT');
  });

  it('overrides a slot never reported, pointing nowhere, publishes it and marks where it changed', async () => {
    published.length = 0;
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    const r = await cli.json('POST', url('override'), {
      attestation_name: 'sign-off',
      reason: 'approved by phone',
      new_compliance_status: true,
      original_attestation_type: 'generic',
      user_data: {},
    });
    expect(r.status).toBe(200);
    const slot = (await trailOf()).compliance_status.attestations_statuses[0];
    expect(slot).toMatchObject({
      attestation_name: 'sign-off',
      status: 'COMPLETE',
      is_compliant: true,
      overridden_attestation_id: null,
    });
    // A trail-level slot is part of every artifact's evidence in the trail (a policy may require it).
    expect(published.map((e) => e.type)).toEqual(['attestation.reported']);
    expect(published[0]).toMatchObject({ attestationType: 'override', isCompliant: true, fingerprint: null });
    expect(markedBy(writes)).toEqual([FP, FP2]);
  });

  it('marks where the fingerprints whose compliance or trail changed run, with the write', async () => {
    published.length = 0;
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    await attest('junit', {
      attestation_name: 'tests',
      artifact_fingerprint: FP,
      junit_results: [{ name: 's', failures: 0, errors: 0, skipped: 0, total: 5, duration: 1 }],
    });
    expect(published.map((e) => e.type)).toEqual(['attestation.reported']);
    // FP's slot changed; the trail's own record (which shows FP2 as 'app') did not.
    expect(markedBy(writes)).toEqual([FP]);
    expect((await cli.get(`/api/v2/artifacts/acme/f1/fingerprint/${FP}`)).json.state).toBe('COMPLIANT');
  });

  it('publishes trail.started and artifact.reported', async () => {
    published.length = 0;
    await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
      { name: 'data_json', value: JSON.stringify({ name: 't2' }) },
    ]);
    await cli.json('POST', '/api/v2/artifacts/acme/f1', {
      fingerprint: 'e'.repeat(64),
      filename: 'x',
      build_url: 'b',
      commit_url: 'c',
      trail_name: 't2',
    });
    expect(published.map((e) => e.type)).toEqual([
      'trail.started',
      'artifact.reported',
      'artifact.compliance-changed',
    ]);
    expect(published[0]).toMatchObject({ flowName: 'f1', trailName: 't2' });
    expect(published[1]).toMatchObject({ fingerprint: 'e'.repeat(64), artifactName: 'x' });
  });
});

describe('fingerprint prefixes', () => {
  it('answers one match, 400 naming the candidates when ambiguous, 404 when none or the flow is missing', async () => {
    expect((await cli.get(`/api/v2/artifacts/acme/f1/fingerprint/${FP.slice(0, 6)}`)).json.fingerprint).toBe(
      FP,
    );
    const many = await cli.get('/api/v2/artifacts/acme/f1/fingerprint/abcde');
    expect(many.status).toBe(400);
    expect(many.json.message).toBe(`Fingerprint prefix 'abcde' is ambiguous: it matches ${FP2}, ${FP}`);
    expect((await cli.get('/api/v2/artifacts/acme/f1/fingerprint/abcd')).status).toBe(400);
    const none = await cli.get('/api/v2/artifacts/acme/f1/fingerprint/0000000');
    expect(none.status).toBe(404);
    expect(none.json.message).toBe(
      "Artifact with fingerprint '0000000' does not exist in flow 'f1' belonging to organization 'acme'",
    );
    const noFlow = await cli.get(`/api/v2/artifacts/acme/ghost/fingerprint/${FP}`);
    expect(noFlow.status).toBe(404);
    expect(noFlow.json.message).toBe("Flow named 'ghost' does not exist for organization 'acme'");
    expect((await cli.get('/api/v2/artifacts/acme/f1/fingerprint/ABCDEF')).status).toBe(400);
  });
});

describe('evidence files', () => {
  it('serves a binary file byte for byte, every byte value included', async () => {
    // 0x00 to 0xff twice, then a zero run and a high run: what a gzip or a PDF may hold.
    const bytes = Buffer.concat([
      Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
      Buffer.alloc(64, 0),
      Buffer.alloc(64, 0xff),
    ]);
    const r = await attest('generic', { attestation_name: 'binary-evidence', is_compliant: true }, 't1', {
      filename: 'evidence.bin',
      content: bytes,
    });
    expect(r.status, r.body).toBe(201);
    const [latest] = (await cli.get('/api/v2/attestations/acme/f1/trail/t1/binary-evidence')).json;
    expect(latest.evidence_file.size).toBe(bytes.length);
    const download = await t.app.inject({
      url: new URL(latest.evidence_file.download_url).pathname,
      headers: { authorization: `Bearer ${await t.seedKey('acme', 'reader')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(bytes)).toBe(true);
    expect(download.headers['x-content-sha256']).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('stores the sha256 and serves the file with its content type and filename', async () => {
    const xml = '<testsuites><testsuite name="a" tests="1" failures="0" errors="0"/></testsuites>';
    const r = await attest(
      'junit',
      {
        attestation_name: 'tests',
        artifact_fingerprint: FP,
        junit_results: [{ name: 'a', failures: 0, errors: 0, skipped: 0, total: 1, duration: 0.1 }],
      },
      't1',
      { filename: 'report.xml', content: xml },
    );
    expect(r.status).toBe(201);
    const [latest] = (await cli.get(`/api/v2/attestations/acme/f1/artifact/${FP}/tests`)).json;
    expect(latest.evidence_file).toMatchObject({
      filename: 'report.xml',
      size: xml.length,
      content_type: 'application/xml',
    });
    const download = await t.app.inject({
      url: new URL(latest.evidence_file.download_url).pathname,
      headers: { authorization: `Bearer ${await t.seedKey('acme', 'reader')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/xml');
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="report\.xml"/);
    expect(download.body).toBe(xml);
    expect(download.headers['x-content-sha256']).toBe(latest.evidence_file.sha256);
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    expect(download.headers['content-security-policy']).toBe('sandbox');
    const noFile = (await cli.get(`/api/v2/attestations/acme/f1/trail/t1/sign-off`)).json[0];
    const missing = await cli.get(
      `/api/v2/attestations/acme/f1/trail/t1/attestation/${noFile.attestation_id}/evidence`,
    );
    expect(missing.status).toBe(404);
  });

  it('serves an uploaded HTML page as an inert download: no sniffing, no scripts', async () => {
    const html = '<script>fetch("/api/v2/organizations/acme")</script>';
    const r = await attest('generic', { attestation_name: 'sign-off', is_compliant: true }, 't1', {
      filename: 'x.html',
      content: html,
    });
    expect(r.status, r.body).toBe(201);
    const [page] = (await cli.get(`/api/v2/attestations/acme/f1/trail/t1/sign-off`)).json;
    const download = await t.app.inject({
      url: new URL(page.evidence_file.download_url).pathname,
      headers: { authorization: `Bearer ${await t.seedKey('acme', 'reader')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toMatch(/^text\/html/);
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    expect(download.headers['content-security-policy']).toBe('sandbox');
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="x\.html"/);
  });
});

describe('finding attestations across the organization', () => {
  const find = (query: string) => cli.get(`/api/v2/attestations/acme?${query}`);
  beforeAll(async () => {
    for (const [name, ok] of [
      ['srch-unit', true],
      ['srch-lint', false],
      ['other-srch', true],
    ] as const) {
      expect((await attest('generic', { attestation_name: name, is_compliant: ok }, 't-search')).status).toBe(
        201,
      );
    }
  });

  it('filters by exact name, name_regex, compliance and type, newest first', async () => {
    const names = async (query: string) => (await find(query)).json.data.map((a: any) => a.attestation_name);
    expect(await names('name=srch-unit')).toEqual(['srch-unit']);
    expect(await names('name_regex=^srch-')).toEqual(['srch-lint', 'srch-unit']);
    expect(await names('name_regex=srch&is_compliant=true')).toEqual(['other-srch', 'srch-unit']);
    expect(await names('name_regex=srch&is_compliant=false')).toEqual(['srch-lint']);
    expect(await names('name_regex=^srch-&type=junit')).toEqual([]);
    expect(await names('name_regex=^srch-&flow=f1')).toEqual(['srch-lint', 'srch-unit']);
    expect(await names('name_regex=^srch-&flow=ghost')).toEqual([]);
  });

  it('pages with a cursor link', async () => {
    const first = await find('name_regex=srch&per_page=2');
    expect(first.json.data).toHaveLength(2);
    const next = new URL(first.json._links.next.href);
    expect(next.searchParams.get('name_regex')).toBe('srch');
    const second = await cli.get(`${next.pathname}${next.search}`);
    expect(second.json.data.map((a: any) => a.attestation_name)).toEqual(['srch-unit']);
    expect(second.json._links).toEqual({});
  });

  it('says how many attestations one trail holds in all, on every page of it', async () => {
    const first = await find('flow=f1&trail=t-search&per_page=2');
    expect(first.json.data).toHaveLength(2);
    expect(first.json.total_count).toBe(3);
    const next = new URL(first.json._links.next.href);
    const second = await cli.get(`${next.pathname}${next.search}`);
    expect(second.json.data).toHaveLength(1);
    expect(second.json.total_count).toBe(3);
    // narrowed as the page is narrowed
    expect((await find('flow=f1&trail=t-search&is_compliant=true')).json.total_count).toBe(2);
    expect((await find('flow=f1&trail=nowhere')).json).toEqual({ data: [], _links: {}, total_count: 0 });
    // not counted without a trail (the organization's whole history), nor with a name pattern
    expect((await find('flow=f1&per_page=2')).json).not.toHaveProperty('total_count');
    expect((await find('flow=f1&trail=t-search&name_regex=srch')).json).not.toHaveProperty('total_count');
  });

  it('refuses an invalid regular expression with a field error', async () => {
    const r = await find(`name_regex=${encodeURIComponent('srch-(')}`);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual({ 'query.name_regex': 'is not a valid regular expression' });
  });

  it.each([
    ['(s)rch-\\1', 'invalid escape sequence'],
    ['^(?!other)srch', 'unsupported Perl syntax'],
    ['(?<=other-)srch', 'RE2 syntax'],
  ])('refuses %s, which has no linear-time form, with a field error', async (pattern, reason) => {
    const r = await find(`name_regex=${encodeURIComponent(pattern)}`);
    expect(r.status).toBe(400);
    expect(r.json.message).toContain(reason);
    expect(r.json.errors).toEqual({ 'query.name_regex': 'is not a valid regular expression' });
  });

  it('matches names in process with RE2, reading a bounded number of rows per request', async () => {
    const org = (await orgsRepository.findByName(t.db.db, 'acme'))!;
    const search = { nameMatches: (name: string) => /srch/.test(name) };
    const all = await attestationsRepository.search(t.db.db, org.id, search, 20);
    expect(all.rows.map((r) => r.name)).toEqual(['other-srch', 'srch-lint', 'srch-unit']);
    expect(all.resumeAfter).toBeNull();
    // One candidate read per call: each call answers what it found and where to go on.
    const seen: string[] = [];
    let after: number | undefined;
    for (let calls = 0; calls < 100; calls++) {
      const page = await attestationsRepository.search(
        t.db.db,
        org.id,
        { ...search, afterSeq: after },
        20,
        1,
      );
      seen.push(...page.rows.map((r) => r.name));
      if (page.resumeAfter === null) {
        break;
      }
      after = page.resumeAfter;
    }
    expect(seen).toEqual(['other-srch', 'srch-lint', 'srch-unit']);
  });
});
