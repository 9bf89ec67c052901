/**
 * The transparency log as a client that knows only RFC 9162 and C2SP sees it
 * (test/helpers/tlog-client.ts, no server code): every kind of record is an entry whose leaf is
 * the JCS of its record, included in the signed checkpoint; two checkpoints are consistent; bad
 * ranges are 400 and sizes beyond the tree 404; tampering with a record is found by the
 * self-check; a rewritten entry breaks consistency with a checkpoint kept earlier.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { deployment, fp, putPolicy, POLICY_SCHEMA } from '../helpers/runtime.js';
import {
  jcs,
  openNote,
  parseCheckpoint,
  rfcLeafHash,
  verifyConsistency,
  verifyInclusion,
  type Checkpoint,
} from '../helpers/tlog-client.js';
import { onPostgres } from '../helpers/database.js';
import { withReplica } from '../helpers/replica.js';
import { until } from '../helpers/wait.js';
import { rewriteEntry } from '../helpers/tlog-tamper.js';
import * as m0430 from '../../services/api/src/storage/migrations/0430_log_leaves_and_tiles.js';

let t: TestApp;
let api: ReturnType<typeof client>;
let cli: ReturnType<typeof cliClient>;
let reader: ReturnType<typeof client>;
let adminKey: string;
const ORG = 'acme';
const FP = fp('a');

interface Entry {
  index: number;
  kind: string;
  resource: string | null;
  record: Record<string, unknown>;
}

const checkpointNow = async (): Promise<Checkpoint> => {
  const key = (await reader.get(`/api/v2/log/${ORG}/key`)).body.split('\n')[0]!;
  const note = await reader.get(`/api/v2/log/${ORG}/checkpoint`);
  expect(note.headers['content-type']).toMatch(/^text\/plain/);
  return parseCheckpoint(openNote(note.body, key));
};

const allEntries = async (size: number): Promise<Entry[]> => {
  const out: Entry[] = [];
  for (let from = 0; from < size; from += 100) {
    const page = await reader.get(`/api/v2/log/${ORG}/entries?from=${from}&to=${Math.min(size, from + 100)}`);
    expect(page.status).toBe(200);
    out.push(...(page.json.entries as Entry[]));
  }
  return out;
};

/** Waits until the signed checkpoint covers everything written so far (the queue is empty). */
const settled = async (): Promise<Checkpoint> =>
  until(async () => {
    const queued = await sql<{ n: number }>`select count(*)::int as n from log_queue`.execute(t.db.db);
    if (queued.rows[0]!.n > 0) {
      return undefined;
    }
    const cp = await checkpointNow();
    const head = await sql<{ size: string }>`select size from log_heads`.execute(t.db.db);
    return Number(head.rows[0]?.size ?? -1) === cp.size ? cp : undefined;
  });

/**
 * Writes once more, waits for the checkpoint that covers it, and says whether the server's
 * consistency proof shows that checkpoint extending the one kept (as a witness checks it).
 */
const extendsKept = async (kept: Checkpoint, description: string): Promise<boolean> => {
  await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description });
  const next = await until(async () => {
    const cp = await settled();
    return cp.size > kept.size ? cp : undefined;
  });
  const proof = await reader.get(`/api/v2/log/${ORG}/proof/consistency?from=${kept.size}&to=${next.size}`);
  const hashes = (proof.json.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
  return verifyConsistency(kept.size, next.size, kept.root, next.root, hashes);
};

const KINDS = [
  'flow',
  'trail',
  'artifact',
  'attestation',
  'environment',
  'snapshot',
  'policy',
  'policy_version',
  'policy_attachment',
];

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_LOG_SEQUENCE_MS: '20' } });
  adminKey = await t.seedKey(ORG, 'admin');
  api = client(t.app, adminKey);
  cli = cliClient(t.app, adminKey);
  reader = client(t.app, await t.seedKey(ORG, 'reader'));
  await cli.multipart('PUT', '/api/v2/flows/acme/template_file', [
    { name: 'data_json', value: JSON.stringify({ name: 'f1', description: '' }) },
    {
      name: 'template_file',
      filename: 't.yml',
      content: 'version: 1\ntrail:\n  attestations:\n  - name: sign-off\n    type: generic\n',
    },
  ]);
  await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
    { name: 'data_json', value: JSON.stringify({ name: 't1' }) },
  ]);
  await cli.json('POST', '/api/v2/artifacts/acme/f1', {
    fingerprint: FP,
    filename: 'app',
    git_commit: 'c'.repeat(40),
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: 't1',
  });
  const attested = await cli.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
    { name: 'data_json', value: JSON.stringify({ attestation_name: 'sign-off', is_compliant: true }) },
    { name: 'attachment_file', filename: 'e.txt', content: 'evidence' },
  ]);
  expect(attested.status).toBe(201);
  await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S', description: '' });
  await putPolicy(
    t.app,
    adminKey,
    ORG,
    'prod-policy',
    `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`,
  );
  await api.post(`/api/v2/environments/${ORG}/prod/policies`, { policy_names: ['prod-policy'] });
  const reported = await api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, {
    artifacts: deployment('web', 'web', FP, 1),
  });
  expect(reported.status).toBeLessThan(300);
});
afterAll(async () => t?.close());

describe('the log as an RFC 9162 / C2SP client sees it', () => {
  it('holds every kind of record, each included in the signed checkpoint', async () => {
    const cp = await settled();
    expect(cp.origin).toBe(`verity.test/${ORG}`);
    const entries = await allEntries(cp.size);
    expect(entries.map((e) => e.index)).toEqual([...Array(cp.size).keys()]);
    expect(new Set(entries.map((e) => e.kind))).toEqual(new Set(KINDS));
    for (const kind of KINDS) {
      const e = entries.find((x) => x.kind === kind)!;
      expect(e.record.kind).toBe(kind);
      const proof = await reader.get(
        `/api/v2/log/${ORG}/proof/inclusion?index=${e.index}&tree_size=${cp.size}`,
      );
      expect(proof.status).toBe(200);
      const leaf = rfcLeafHash(Buffer.from(jcs(e.record)));
      const hashes = (proof.json.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
      expect(verifyInclusion(e.index, cp.size, leaf, hashes, cp.root), `${kind} included`).toBe(true);
      // A changed record is not included.
      const forged = rfcLeafHash(Buffer.from(jcs({ ...e.record, id: 'x' })));
      expect(verifyInclusion(e.index, cp.size, forged, hashes, cp.root)).toBe(false);
    }
    const attestation = entries.find((e) => e.kind === 'attestation')!;
    expect(attestation.record).toMatchObject({
      name: 'sign-off',
      is_compliant: true,
      evidence_filename: 'e.txt',
    });
    expect(attestation.record.evidence_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(attestation.resource).toBe('http://verity.test/api/v2/attestations/acme/f1/trail/t1/sign-off');
    const one = await reader.get(`/api/v2/log/${ORG}/entries/${attestation.index}`);
    expect(one.json).toEqual(attestation);
  });

  it("shows each record's latest log index on the reads of artifacts, attestations, trails, snapshots and policies", async () => {
    const cp = await settled();
    const entries = await allEntries(cp.size);
    const latest = (kind: string) => Math.max(...entries.filter((e) => e.kind === kind).map((e) => e.index));
    const artifact = await reader.get(`/api/v2/artifacts/${ORG}/f1/fingerprint/${FP}`);
    expect(artifact.json.log_index).toBe(latest('artifact'));
    const trail = await reader.get(`/api/v2/trails/${ORG}/f1/t1`);
    expect(trail.json.log_index).toBe(latest('trail'));
    const attestations = await reader.get(`/api/v2/attestations/${ORG}/f1`);
    expect(attestations.json.data[0].log_index).toBe(latest('attestation'));
    const snapshot = await reader.get(`/api/v2/snapshots/${ORG}/prod/1`);
    const snapshotEntry = entries.find((e) => e.kind === 'snapshot' && e.record.index === 1)!;
    expect(snapshot.json.log_index).toBe(snapshotEntry.index);
    const policy = await reader.get(`/api/v2/policies/${ORG}/prod-policy`);
    expect(policy.status).toBe(200);
    expect(policy.json.log_index).toBe(latest('policy'));
  });

  it('proves two checkpoints consistent, and an update of an audited field is a new entry', async () => {
    const before = await settled();
    const renamed = await api.put(`/api/v2/environments/${ORG}`, {
      name: 'prod',
      type: 'K8S',
      description: 'changed',
    });
    expect(renamed.status).toBe(200);
    const after = await settled();
    expect(after.size).toBeGreaterThan(before.size);
    const last = (await allEntries(after.size)).slice(before.size);
    expect(last.map((e) => [e.kind, e.record.description])).toContainEqual(['environment', 'changed']);
    const proof = await reader.get(
      `/api/v2/log/${ORG}/proof/consistency?from=${before.size}&to=${after.size}`,
    );
    const hashes = (proof.json.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(verifyConsistency(before.size, after.size, before.root, after.root, hashes)).toBe(true);
    expect(verifyConsistency(before.size, after.size, Buffer.alloc(32), after.root, hashes)).toBe(false);
    for (let m = 1; m <= after.size; m += 1) {
      const p = await reader.get(`/api/v2/log/${ORG}/proof/consistency?from=${m}&to=${after.size}`);
      expect(p.status).toBe(200);
    }
  });

  it('answers 400 for bad ranges and 404 beyond the tree', async () => {
    const cp = await settled();
    const cases: Array<[string, number]> = [
      [`/api/v2/log/${ORG}/entries/${cp.size}`, 404],
      [`/api/v2/log/${ORG}/entries/-1`, 400],
      [`/api/v2/log/${ORG}/entries?from=5&to=2`, 400],
      [`/api/v2/log/${ORG}/entries?from=0&to=101`, 400],
      [`/api/v2/log/${ORG}/entries?from=0&to=${cp.size + 1}`, 404],
      [`/api/v2/log/${ORG}/proof/inclusion?index=3&tree_size=3`, 400],
      [`/api/v2/log/${ORG}/proof/inclusion?index=x&tree_size=3`, 400],
      [`/api/v2/log/${ORG}/proof/inclusion?index=0&tree_size=${cp.size + 1}`, 404],
      [`/api/v2/log/${ORG}/proof/consistency?from=3&to=2`, 400],
      [`/api/v2/log/${ORG}/proof/consistency?from=1&to=${cp.size + 1}`, 404],
    ];
    for (const [url, status] of cases) {
      const r = await reader.get(url);
      expect([url, r.status]).toEqual([url, status]);
      expect(typeof r.json.message).toBe('string');
    }
    expect((await client(t.app).get(`/api/v2/log/${ORG}/checkpoint`)).status).toBe(401);
  });
});

describe.runIf(onPostgres)('two replicas on one database', () => {
  it('sequence every write once, without gaps, under one signed tree', async () => {
    await withReplica(t, async (replica) => {
      const other = cliClient(replica, adminKey);
      const attest = (c: ReturnType<typeof cliClient>, name: string) =>
        c.multipart('POST', '/api/v2/attestations/acme/f1/trail/t1/generic', [
          { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
        ]);
      let writing = true;
      const sequencing = (async () => {
        while (writing) {
          await Promise.all([t.app.transparencyLog.sequence(), replica.transparencyLog.sequence()]);
        }
      })();
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => attest(i % 2 === 0 ? cli : other, `replicated-${i}`)),
      );
      writing = false;
      await sequencing;
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));
      const cp = await settled();
      const entries = await allEntries(cp.size);
      expect(entries.map((e) => e.index)).toEqual([...Array(cp.size).keys()]);
      const logged = entries.filter((e) => String(e.record.name).startsWith('replicated-'));
      expect(logged.map((e) => e.record.name).sort()).toEqual(
        Array.from({ length: 30 }, (_, i) => `replicated-${i}`).sort(),
      );
      const last = entries[cp.size - 1]!;
      const proof = await reader.get(
        `/api/v2/log/${ORG}/proof/inclusion?index=${last.index}&tree_size=${cp.size}`,
      );
      const hashes = (proof.json.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
      expect(
        verifyInclusion(last.index, cp.size, rfcLeafHash(Buffer.from(jcs(last.record))), hashes, cp.root),
      ).toBe(true);
    });
  });
  it('keeps its roots and proofs when migrated to stored tiles (migration 0430 down, then up)', async () => {
    const kept = await settled();
    const proofs = async () => {
      const out: unknown[] = [];
      for (const i of [0, 1, Math.floor(kept.size / 2), kept.size - 1]) {
        out.push(
          (await reader.get(`/api/v2/log/${ORG}/proof/inclusion?index=${i}&tree_size=${kept.size}`)).json,
        );
      }
      out.push((await reader.get(`/api/v2/log/${ORG}/proof/consistency?from=3&to=${kept.size}`)).json);
      return out;
    };
    const before = await proofs();
    await m0430.down(t.db.db as unknown as Kysely<unknown>);
    // As before the migration: every level stored, the leaves among them.
    const levels = await sql<{ level: number; n: number }>`select level, count(*)::int as n from log_nodes
      group by level order by level`.execute(t.db.db);
    expect(levels.rows.slice(0, 2)).toEqual([
      { level: 0, n: kept.size },
      { level: 1, n: Math.floor(kept.size / 2) },
    ]);
    await m0430.up(t.db.db as unknown as Kysely<unknown>);
    const stored = await sql<{ level: number }>`select distinct level from log_nodes`.execute(t.db.db);
    expect(stored.rows.every((r) => r.level > 0 && r.level % 4 === 0)).toBe(true);
    expect(await proofs()).toEqual(before);
    expect(await t.app.transparencyLog.selfCheck()).toEqual([]);
    expect(await extendsKept(kept, 'after tiles')).toBe(true);
  });
});

describe('tampering', () => {
  it('the self-check names an attestation whose result was changed in the database', async () => {
    await settled();
    expect(await t.app.transparencyLog.selfCheck()).toEqual([]);
    const row = await sql<{ id: string }>`update attestations set is_compliant = false
      where name = 'sign-off' returning id`.execute(t.db.db);
    const id = row.rows[0]!.id;
    const failures = await t.app.transparencyLog.selfCheck();
    expect(failures).toEqual([
      expect.objectContaining({
        kind: 'attestation',
        id,
        reason: 'the stored record differs from its log entry',
      }),
    ]);
    const metrics = await t.app.metrics.registry.getSingleMetricAsString(
      'verity_log_self_check_failures_total',
    );
    expect(metrics).toMatch(/verity_log_self_check_failures_total\{kind="attestation"\} [1-9]/);
    await sql`update attestations set is_compliant = true where id = ${id}`.execute(t.db.db);
    expect(await t.app.transparencyLog.selfCheck()).toEqual([]);
  });

  it('a rewritten log entry makes the next checkpoint inconsistent with one a witness kept', async () => {
    const kept = await settled();
    // Whoever runs the database rewrites entry 0 and every hash above it, then signs on.
    await rewriteEntry(t.db.db, 0, { name: 'rewritten' });
    expect(await extendsKept(kept, 'again')).toBe(false);
    const failures = await t.app.transparencyLog.selfCheck();
    expect(failures.map((f) => f.index)).toContain(0);
  });
});
