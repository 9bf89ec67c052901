/**
 * Audit packages that prove themselves, and witnesses, as an auditor runs them: `npm run verify`
 * (the script, in a child process) on a package of each kind verifies; after an attestation's
 * result is changed in the database, a new package fails naming the attestation; a package with
 * a changed file fails naming it; `verify watch` keeps checkpoints and fails when the log's
 * history is rewritten.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp } from '../helpers/runtime.js';
import { tgz, untar } from '../helpers/tar.js';
import { until } from '../helpers/wait.js';
import { rewriteEntry } from '../helpers/tlog-tamper.js';

let t: TestApp;
let api: ReturnType<typeof client>;
let cli: ReturnType<typeof cliClient>;
let key: string;
let dir: string;
let baseUrl: string;
const ORG = 'acme';
const FP = fp('b');

function runVerify(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'node_modules/.bin/tsx',
      ['services/api/src/verify/main.ts', ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, out: `${stdout}${stderr}` });
      },
    );
  });
}

const settled = () =>
  until(async () => {
    const q = await sql<{ n: number }>`select count(*)::int as n from log_queue`.execute(t.db.db);
    return q.rows[0]!.n === 0 ? true : undefined;
  });

async function download(url: string, name: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  expect([url, res.statusCode, res.statusCode === 200 ? '' : res.body]).toEqual([url, 200, '']);
  const file = join(dir, name);
  await writeFile(file, res.rawPayload);
  return file;
}

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_LOG_SEQUENCE_MS: '20' } });
  key = await t.seedKey(ORG, 'admin');
  api = client(t.app, key);
  cli = cliClient(t.app, key);
  dir = await mkdtemp(join(tmpdir(), 'verity-verify-'));
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  await cli.multipart('PUT', '/api/v2/flows/acme/template_file', [
    { name: 'data_json', value: JSON.stringify({ name: 'f1', description: '' }) },
    {
      name: 'template_file',
      filename: 't.yml',
      content:
        'version: 1\ntrail:\n  attestations:\n  - name: tests\n    type: generic\n  - name: review\n    type: generic\n',
    },
  ]);
  await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
    { name: 'data_json', value: JSON.stringify({ name: 't1' }) },
  ]);
  const made = await cli.json('POST', '/api/v2/artifacts/acme/f1', {
    fingerprint: FP,
    filename: 'app',
    git_commit: 'c'.repeat(40),
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: 't1',
  });
  expect(made.status).toBe(201);
  for (const name of ['tests', 'review']) {
    const r = await cli.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
      { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
      { name: 'attachment_file', filename: `${name}.txt`, content: `evidence of ${name}` },
    ]);
    expect(r.status).toBe(201);
  }
  await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
  await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
    artifacts: deployment('web', 'web', FP, 1),
  });
  await settled();
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('npm run verify on audit packages', () => {
  it('verifies untouched packages of an artifact, a trail and a snapshot', async () => {
    const files = [
      await download(`/api/v2/artifacts/${ORG}/f1/${FP}/audit_package`, 'artifact.tgz'),
      await download(`/api/v2/trails/${ORG}/f1/t1/audit_package`, 'trail.tgz'),
      await download(`/api/v2/snapshots/${ORG}/prod/-1/audit_package`, 'snapshot.tgz'),
    ];
    const members = await untar(gunzipSync(await readFile(files[2]!)));
    expect(
      [...members.keys()]
        .filter((n) => n.startsWith('log/records/'))
        .map((n) => n.split('/')[2]!.split('-')[0]),
    ).toEqual(
      expect.arrayContaining(['environment', 'snapshot', 'flow', 'trail', 'artifact', 'attestation']),
    );
    for (const file of files) {
      const r = await runVerify([file]);
      expect(r.out).toContain('records match their log entries');
      expect(r.out).toMatch(
        /ok {2}[1-9]\d* record files and [1-9]\d* evidence files match the records the log proves/,
      );
      expect(r.out).toMatch(/ok {2}checkpoint of verity\.test\/acme at size \d+ signed/);
      expect([file, r.code]).toEqual([file, 0]);
    }
    const pinned = (await api.get(`/api/v2/log/${ORG}/key`)).body.split('\n')[0]!;
    expect((await runVerify([files[0]!, '--key', pinned])).code).toBe(0);
  });

  it('fails naming a changed file, and a checkpoint not signed by the pinned key', async () => {
    const file = await download(`/api/v2/artifacts/${ORG}/f1/${FP}/audit_package`, 'a.tgz');
    const members = await untar(gunzipSync(await readFile(file)));
    const name = [...members.keys()].find((n) => n.endsWith('attestation.json'))!;
    members.set(name, Buffer.from('{"is_compliant": false}\n'));
    const changed = join(dir, 'changed.tgz');
    await writeFile(changed, await tgz(members));
    const r = await runVerify([changed]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`FAILED: ${name}: its SHA-256 differs from MANIFEST.sha256`);
    const other = 'other.example/acme+01020304+AR' + 'A'.repeat(42) + '=';
    const wrongKey = await runVerify([file, '--key', other]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toContain(
      'FAILED: log/checkpoint: the checkpoint carries no valid signature by the verifier key',
    );
  });

  it('fails naming a record or evidence file edited together with MANIFEST.sha256', async () => {
    const file = await download(`/api/v2/artifacts/${ORG}/f1/${FP}/audit_package`, 'edit.tgz');
    const members = await untar(gunzipSync(await readFile(file)));
    const attestation = [...members.keys()].find((n) => n.endsWith('-tests/attestation.json'))!;
    const evidence = [...members.keys()].find((n) => n.includes('-tests/evidence/'))!;
    // What someone who edits a file does next: the manifest is not signed, so it is rewritten too.
    const edited = async (name: string, edit: (json: any) => unknown) => {
      const copy = new Map(members);
      const content =
        name === evidence
          ? Buffer.from('other evidence')
          : Buffer.from(`${JSON.stringify(edit(JSON.parse(members.get(name)!.toString())), null, 2)}\n`);
      copy.set(name, content);
      const manifest = members
        .get('MANIFEST.sha256')!
        .toString()
        .split('\n')
        .map((l) =>
          l.endsWith(`  ${name}`) ? `${createHash('sha256').update(content).digest('hex')}  ${name}` : l,
        )
        .join('\n');
      copy.set('MANIFEST.sha256', Buffer.from(manifest));
      const out = join(dir, 'edited.tgz');
      await writeFile(out, await tgz(copy));
      return runVerify([out]);
    };
    const untouched = await runVerify([file]);
    expect(untouched.out).toMatch(
      /ok {2}\d+ record files and 2 evidence files match the records the log proves/,
    );
    expect(untouched.code).toBe(0);

    const flipped = await edited(attestation, (a) => ({ ...a, is_compliant: false }));
    expect(flipped.out).toContain(`FAILED: ${attestation}: is_compliant is false, its log entry`);
    expect(flipped.code).toBe(1);
    const renamed = await edited(attestation, (a) => ({
      ...a,
      evidence_file: { ...a.evidence_file, sha256: 'f'.repeat(64) },
    }));
    expect(renamed.out).toContain(
      `FAILED: ${attestation}: evidence_file.sha256 is "${'f'.repeat(64)}", its log entry`,
    );
    expect(renamed.code).toBe(1);
    // A retention rule removes evidence files and keeps their attestations: an absent file is noted.
    const without = new Map([...members].filter(([n]) => n !== evidence));
    without.set(
      'MANIFEST.sha256',
      Buffer.from(
        members
          .get('MANIFEST.sha256')!
          .toString()
          .split('\n')
          .filter((l) => !l.endsWith(`  ${evidence}`))
          .join('\n'),
      ),
    );
    await writeFile(join(dir, 'without.tgz'), await tgz(without));
    const removed = await runVerify([join(dir, 'without.tgz')]);
    expect(removed.out).toContain(
      `note  ${attestation}: its evidence file is not in the package (removed by a retention rule, or missing)`,
    );
    expect(removed.out).toMatch(/ok {2}\d+ record files and 1 evidence files match/);
    expect(removed.code).toBe(0);
    const swapped = await edited(evidence, (x) => x);
    expect(swapped.out).toContain(
      `FAILED: ${evidence}: its SHA-256 is not the evidence_sha256 of attestation`,
    );
    expect(swapped.code).toBe(1);
    const rebuilt = await edited('artifact.json', (a) => ({ ...a, git_commit: 'd'.repeat(40) }));
    expect(rebuilt.out).toContain('FAILED: artifact.json: git_commit is "dddd');
    expect(rebuilt.code).toBe(1);
    const other = await edited(attestation, (a) => ({ ...a, attestation_id: 'not-an-attestation' }));
    expect(other.out).toContain(
      `FAILED: ${attestation}: shows attestation not-an-attestation, which the package's log records do not prove`,
    );
    expect(other.code).toBe(1);

    const logged = [...members.keys()].find((n) => n.startsWith('log/records/attestation-'))!;
    const record = await edited(logged, (r) => ({ ...r, record: { ...r.record, is_compliant: false } }));
    expect(record.out).toMatch(
      new RegExp(`FAILED: attestation \\S+ \\(${logged}\\): the record does not match its log entry \\d+`),
    );
    expect(record.code).toBe(1);

    const trail = await download(`/api/v2/trails/${ORG}/f1/t1/audit_package`, 'trail-edit.tgz');
    members.clear();
    for (const [k, v] of await untar(gunzipSync(await readFile(trail)))) {
      members.set(k, v);
    }
    const described = await edited('trail.json', (tr) => ({ ...tr, description: 'rewritten' }));
    expect(described.out).toContain('FAILED: trail.json: description is "rewritten", its log entry');
    expect(described.code).toBe(1);

    const snapshot = await download(`/api/v2/snapshots/${ORG}/prod/-1/audit_package`, 'snapshot-edit.tgz');
    members.clear();
    for (const [k, v] of await untar(gunzipSync(await readFile(snapshot)))) {
      members.set(k, v);
    }
    const verdict = await edited('snapshot.json', (sn) => ({ ...sn, compliant: !sn.compliant }));
    expect(verdict.out).toMatch(
      /FAILED: snapshot\.json: compliant is (true|false), its log entry \d+ \(snapshot \d+\)/,
    );
    expect(verdict.code).toBe(1);
  });

  it('fails naming the attestation whose result was changed in the database', async () => {
    const row = await sql<{ id: string }>`update attestations set is_compliant = false
      where name = 'tests' returning id`.execute(t.db.db);
    const id = row.rows[0]!.id;
    try {
      const file = await download(`/api/v2/artifacts/${ORG}/f1/${FP}/audit_package`, 'tampered.tgz');
      const r = await runVerify([file]);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(
        new RegExp(
          `FAILED: attestation ${id} \\(log/records/attestation-${id}\\.json\\): the record does not match its log entry \\d+`,
        ),
      );
      const failures = await t.app.transparencyLog.selfCheck();
      expect(failures).toContainEqual(expect.objectContaining({ kind: 'attestation', id }));
    } finally {
      await sql`update attestations set is_compliant = true where id = ${id}`.execute(t.db.db);
    }
  });
});

describe('npm run verify -- watch', () => {
  it('keeps checkpoints, accepts a consistent next one and fails on a rewritten history', async () => {
    const state = join(dir, 'witness.json');
    const args = ['watch', '--url', baseUrl, '--org', ORG, '--state', state, '--once'];
    const env = { VERITY_API_KEY: key };
    const first = await runVerify(args, env);
    expect(first.out).toMatch(/checkpoint of verity\.test\/acme at size \d+: signature ok/);
    expect(first.code).toBe(0);
    await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: 'v2' });
    await settled();
    const second = await runVerify(args, env);
    expect(second.out).toMatch(/consistent with the one kept at size \d+/);
    expect(second.code).toBe(0);
    // Whoever runs the database rewrites entry 0 and the hashes above it.
    await rewriteEntry(t.db.db, 0, { name: 'rewritten' });
    await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: 'v3' });
    await settled();
    const third = await runVerify(args, env);
    expect(third.code).toBe(1);
    expect(third.out).toMatch(
      /FAILED: inconsistent: the checkpoint at size \d+ does not extend the one kept at size \d+/,
    );
  });
});
