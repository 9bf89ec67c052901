/**
 * Attestations stored together (storage/batching/attestation-batcher.ts), as a client sees them: many
 * concurrent attestations to a few trails all answer and all count, in the trail's evaluation,
 * event log and order; one that must take the lock, or that names an unknown artifact, does not
 * disturb the others in its batch; a failed batch statement leaves each to be stored on its own.
 * A trail the batcher wrote last is not read again, and what changed it since (another writer, an
 * artifact, a flow rename, a flow name taken by another flow) is still seen; on PostgreSQL, two
 * replicas reporting to the same trails at once lose and repeat nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { onPostgres } from '../helpers/database.js';
import { withReplica } from '../helpers/replica.js';
import { DatabaseTimeoutError } from '../../services/api/src/storage/errors.js';
import { trailStore } from '../../services/api/src/storage/trail-store/index.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const FP = 'ab'.repeat(32);
const TRAILS = ['b1', 'b2', 'b3', 'b4'];

/** A generic attestation as the CLI sends it, through `client` (another replica's, say). */
const attest = (
  flow: string,
  trail: string,
  name: string,
  extra: Record<string, unknown> = {},
  client: ReturnType<typeof cliClient> = cli,
) =>
  client.multipart('POST', `/api/v2/attestations/acme/${flow}/trail/${trail}/generic`, [
    { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true, ...extra }) },
  ]);
const report = (trail: string, name: string, extra: Record<string, unknown> = {}) =>
  attest('batched', trail, name, extra);
const trailOf = async (trail: string, flow = 'batched', client: ReturnType<typeof cliClient> = cli) =>
  (await client.get(`/api/v2/trails/acme/${flow}/${trail}`)).json as {
    compliance_state: string;
    compliance_status: { attestations_statuses: Array<{ attestation_name: string; attestation_id: string }> };
    events: Array<{ type: string }>;
  };
/** The trail's slots, by attestation name, in report order. */
const names = async (flow: string, trail: string) =>
  (await trailOf(trail, flow)).compliance_status.attestations_statuses.map((s) => s.attestation_name);

/** How many times `readTrailsForAttestations` (spied) read `trail`. */
const readsOf = (
  spy: { mock: { calls: Array<[unknown, ReadonlyArray<{ trailName: string }>]> } },
  trail: string,
) => spy.mock.calls.flatMap(([, keys]) => keys).filter((k) => k.trailName === trail).length;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  expect(
    (await cli.json('PUT', '/api/v2/flows/acme', { name: 'batched', description: '' })).status,
  ).toBeLessThan(300);
  for (const trail of [...TRAILS, 'with-artifact']) {
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: trail })).status).toBeLessThan(300);
  }
  expect(
    (
      await cli.json('POST', '/api/v2/artifacts/acme/batched', {
        fingerprint: FP,
        filename: 'app:1',
        build_url: 'https://ci/1',
        commit_url: 'https://git/1',
        trail_name: 'with-artifact',
      })
    ).status,
  ).toBe(201);
  // One report first, so the rest find the organization's settings known (the unlocked path).
  expect((await report('b1', 'warm')).status).toBe(201);
});
afterEach(() => vi.restoreAllMocks());
afterAll(async () => t?.close());

describe('reports stored together', () => {
  it('stores 120 concurrent reports to four trails, in batches, each counted once', async () => {
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    const sent = TRAILS.flatMap((trail) => Array.from({ length: 30 }, (_, i) => ({ trail, name: `n-${i}` })));
    const results = await Promise.all(sent.map((r) => report(r.trail, r.name)));
    expect(results.map((r) => r.status)).toEqual(sent.map(() => 201));
    // Shared statements: fewer writes than reports, and some with several trails or reports.
    expect(writes.mock.calls.length).toBeLessThan(120);
    const largest = Math.max(
      ...writes.mock.calls.map(([, trails]) => trails.reduce((n, x) => n + x.attestations.length, 0)),
    );
    expect(largest).toBeGreaterThan(1);
    for (const trail of TRAILS) {
      const shown = await trailOf(trail);
      const slots = shown.compliance_status.attestations_statuses.map((s) => s.attestation_name);
      expect(slots.filter((n) => n.startsWith('n-')).sort()).toEqual(
        Array.from({ length: 30 }, (_, i) => `n-${i}`).sort(),
      );
      expect(shown.events.filter((e) => e.type === 'trail_attestation_reported')).toHaveLength(
        trail === 'b1' ? 31 : 30,
      );
    }
    // Attestation order is the order the trail's attestations list them, with no gaps or repeats:
    // the flow's listing (newest first, over two pages) holds each of the 121 once, and each
    // trail's share of it, oldest first, is the order of that trail's slots.
    const listed: Array<{ attestation_id: string; attestation_name: string; trail_name: string }> = [];
    for (const page of [1, 2]) {
      const body = (await cli.get(`/api/v2/attestations/acme/batched?per_page=100&page=${page}`)).json as {
        data: typeof listed;
        pagination: { total: number };
      };
      expect(body.pagination.total).toBe(121);
      listed.push(...body.data);
    }
    expect(new Set(listed.map((a) => a.attestation_id)).size).toBe(121);
    expect(listed.map((a) => `${a.trail_name}/${a.attestation_name}`).sort()).toEqual(
      ['b1/warm', ...sent.map((r) => `${r.trail}/${r.name}`)].sort(),
    );
    for (const trail of TRAILS) {
      const oldestFirst = listed
        .filter((a) => a.trail_name === trail)
        .reverse()
        .map((a) => a.attestation_name);
      expect(oldestFirst).toEqual(await names('batched', trail));
    }
  });

  it('stores a batch that spans two organizations, each report in its own', async () => {
    // The batch write names one organization as a scalar and several as an array: this is the second.
    const other = cliClient(t.app, await t.seedKey('globex', 'admin'));
    const globexReport = (name: string) =>
      other.multipart('POST', '/api/v2/attestations/globex/batched/trail/g1/generic', [
        { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true }) },
      ]);
    expect(
      (await other.json('PUT', '/api/v2/flows/globex', { name: 'batched', description: '' })).status,
    ).toBeLessThan(300);
    expect((await other.json('PUT', '/api/v2/trails/globex/batched', { name: 'g1' })).status).toBeLessThan(
      300,
    );
    expect((await globexReport('warm')).status).toBe(201);
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: 'b-orgs' })).status).toBeLessThan(
      300,
    );
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    const sent = Array.from({ length: 10 }, (_, i) => i);
    const results = await Promise.all(
      sent.flatMap((i) => [report('b-orgs', `orgs-${i}`), globexReport(`orgs-${i}`)]),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    // A statement with both organizations' trails wrote both: nothing went back to be stored alone.
    const spanning = writes.mock.calls.flatMap(([, trails], i) =>
      new Set(trails.map((x) => x.orgId)).size > 1 ? [{ trails, stored: writes.mock.results[i]!.value }] : [],
    );
    expect(spanning.length).toBeGreaterThan(0);
    for (const { trails, stored } of spanning) {
      const written = await (stored as ReturnType<typeof trailStore.insertAttestationBatch>);
      expect(new Set([...written.keys()].map((k) => k.split(':')[0])).size).toBe(2);
      expect(written.size).toBe(trails.length);
    }
    const globex = (await other.get('/api/v2/trails/globex/batched/g1')).json as Awaited<
      ReturnType<typeof trailOf>
    >;
    const slots = (shown: Awaited<ReturnType<typeof trailOf>>) =>
      shown.compliance_status.attestations_statuses
        .map((s) => s.attestation_name)
        .filter((n) => n.startsWith('orgs-'));
    const expected = sent.map((i) => `orgs-${i}`).sort();
    expect(slots(globex).sort()).toEqual(expected);
    expect(slots(await trailOf('b-orgs')).sort()).toEqual(expected);
  });

  it('starts a second batch while one is written only once half a batch waits, and answers every report', async () => {
    // 33 trails, so no report waits for a trail a batch holds.
    const trails = Array.from({ length: 33 }, (_, i) => `half-${i}`);
    for (const trail of trails) {
      expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: trail })).status).toBe(201);
    }
    const insert = trailStore.insertAttestationBatch.bind(trailStore);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    writes.mockImplementation(async (...args) => {
      if (writes.mock.calls.length === 1) {
        await held;
      }
      return insert(...args);
    });
    const submitted = vi.spyOn(t.app.services.batcher, 'submit');
    const slow = { timeout: 10_000 };
    const first = report(trails[0]!, 'half');
    await vi.waitFor(() => expect(writes).toHaveBeenCalledTimes(1), slow);
    // 31 waiting, fewer than half of a batch of 64: once all are in, nothing starts for them.
    const waiting = trails.slice(1, 32).map((trail) => report(trail, 'half'));
    await vi.waitFor(() => expect(submitted).toHaveBeenCalledTimes(32), slow);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(writes).toHaveBeenCalledTimes(1);
    // The 32nd starts the next batch while the first is still being written.
    const last = report(trails[32]!, 'half');
    await vi.waitFor(() => expect(writes).toHaveBeenCalledTimes(2), slow);
    expect(writes.mock.calls[1]![1].map((x) => x.attestations.length).reduce((a, b) => a + b, 0)).toBe(32);
    release();
    const results = await Promise.all([first, ...waiting, last]);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    for (const trail of [trails[0]!, trails[1]!, trails[32]!]) {
      expect(await names('batched', trail)).toEqual(['half']);
    }
  });

  it('keeps report order: the slot shows the latest stored of 30 concurrent reports of one name', async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => report('b1', 'flip', { is_compliant: i % 2 === 0 })),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const latest = (
      await sql<{ id: string; is_compliant: boolean }>`select id, is_compliant from attestations
        where name = 'flip' order by seq desc limit 1`.execute(t.db.db)
    ).rows[0]!;
    const shown = (await cli.get('/api/v2/trails/acme/batched/b1')).json as {
      compliance_state: string;
      compliance_status: {
        attestations_statuses: Array<{
          attestation_name: string;
          attestation_id: string;
          is_compliant: boolean;
        }>;
      };
    };
    const slot = shown.compliance_status.attestations_statuses.find((s) => s.attestation_name === 'flip')!;
    expect(slot.attestation_id).toBe(latest.id);
    expect(slot.is_compliant).toBe(latest.is_compliant);
    expect(shown.compliance_state).toBe(latest.is_compliant ? 'COMPLIANT' : 'NON-COMPLIANT');
  });

  it('answers a report whose artifact is unknown with a 404, and stores the others of its batch', async () => {
    const results = await Promise.all([
      report('b2', 'fine-1'),
      report('b2', 'lost', { artifact_fingerprint: 'cd'.repeat(32) }),
      report('b2', 'fine-2'),
      report('b3', 'fine-3'),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 404, 201, 201]);
    const slots = (await trailOf('b2')).compliance_status.attestations_statuses.map(
      (s) => s.attestation_name,
    );
    expect(slots).toEqual(expect.arrayContaining(['fine-1', 'fine-2']));
    expect(slots).not.toContain('lost');
  });

  it('stores a report that must take the lock alongside others that need not', async () => {
    const results = await Promise.all([
      report('with-artifact', 'on-artifact', { artifact_fingerprint: FP }),
      report('with-artifact', 'trail-level'),
      report('b4', 'plain'),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    const slots = (await trailOf('with-artifact')).compliance_status.attestations_statuses.map(
      (s) => s.attestation_name,
    );
    expect(slots).toContain('trail-level');
    const artifact = (await cli.get(`/api/v2/artifacts/acme/batched/fingerprint/${FP}`)).json as {
      evidence: Record<string, unknown>;
    };
    expect(artifact.evidence).toHaveProperty('on-artifact');
  });

  it('holds back reports to a trail while an attestation is written under its lock', async () => {
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: 'held' })).status).toBe(201);
    expect((await report('held', 'first')).status).toBe(201);
    const reads = vi.spyOn(trailStore, 'readTrailsForAttestations');
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    // Under the lock, a report to the same trail arrives; what the batcher did with it in the
    // next 100 ms is noted before the locked write goes on.
    let during: Promise<{ status: number }> | undefined;
    let batchedDuring = -1;
    const lockWithFlow = trailStore.lockWithFlow.bind(trailStore);
    vi.spyOn(trailStore, 'lockWithFlow').mockImplementation(async (...args) => {
      const found = await lockWithFlow(...args);
      if (args[3] === 'held' && !during) {
        during = report('held', 'plain');
        await new Promise((resolve) => setTimeout(resolve, 100));
        batchedDuring = readsOf(reads, 'held') + writes.mock.calls.length;
      }
      return found;
    });
    // An SBOM is indexed under the trail's lock.
    const sbom = JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.5', components: [] });
    const locked = await cli.multipart('POST', '/api/v2/attestations/acme/batched/trail/held/generic', [
      { name: 'data_json', value: JSON.stringify({ attestation_name: 'sbom', is_compliant: true }) },
      { name: 'attachment_file', filename: 'sbom.json', content: sbom },
    ]);
    expect(locked.status).toBe(201);
    // Planned then, it would have met the locked write (and, meeting such writes twice, taken
    // the lock itself): it waited, and was stored in a batch after it.
    expect(batchedDuring).toBe(0);
    expect((await during!).status).toBe(201);
    expect(writes).toHaveBeenCalled();
    expect(await names('batched', 'held')).toEqual(['first', 'sbom', 'plain']);
  });

  it('stores every report on its own when the shared read or write fails', async () => {
    vi.spyOn(trailStore, 'readTrailsForAttestations').mockImplementationOnce(async (db, keys) => {
      void db;
      void keys;
      throw new Error('connection lost');
    });
    const first = await Promise.all([
      report('b3', 'after-read-failure-1'),
      report('b4', 'after-read-failure-2'),
    ]);
    expect(first.map((r) => [r.status, r.status === 201 ? '' : JSON.stringify(r.json)])).toEqual([
      [201, ''],
      [201, ''],
    ]);
    // The batch's write fails once; stored under the lock, each report writes alone. Only a
    // batch write fails: a report may take the lock from the start (when the action settings
    // were just forgotten, say), and its own write must not be the one that fails.
    const insert = trailStore.insertAttestationBatch.bind(trailStore);
    let failedBatches = 0;
    const spy = vi.spyOn(trailStore, 'insertAttestationBatch').mockImplementation(async (db, trails) => {
      if (failedBatches === 0 && trails.some((t) => t.ifUnchanged !== null)) {
        failedBatches += 1;
        throw new Error('connection lost');
      }
      return insert(db, trails);
    });
    let second;
    try {
      second = await Promise.all([
        report('b3', 'after-write-failure-1'),
        report('b4', 'after-write-failure-2'),
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(second.map((r) => r.status)).toEqual([201, 201]);
    const b3 = (await trailOf('b3')).compliance_status.attestations_statuses.map((s) => s.attestation_name);
    expect(b3).toEqual(expect.arrayContaining(['after-read-failure-1', 'after-write-failure-1']));
    const b4 = (await trailOf('b4')).compliance_status.attestations_statuses.map((s) => s.attestation_name);
    expect(b4).toEqual(expect.arrayContaining(['after-read-failure-2', 'after-write-failure-2']));
  });
});

describe('a database that stops answering under a batch', () => {
  /**
   * Holds the first batch write 300 ms and fails it with `failure`, sends a second attestation
   * to the same trail meanwhile (it waits behind the batch), and returns both answers and how
   * many batch writes were attempted.
   */
  async function underFailedBatch(trail: string, failure: () => Error) {
    const insert = trailStore.insertAttestationBatch.bind(trailStore);
    let batchWrites = 0;
    const spy = vi.spyOn(trailStore, 'insertAttestationBatch').mockImplementation(async (db, trails) => {
      if (!trails.some((tr) => tr.ifUnchanged !== null)) {
        return insert(db, trails);
      }
      batchWrites += 1;
      if (batchWrites > 1) {
        return insert(db, trails);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      throw failure();
    });
    try {
      const first = report(trail, `${trail}-during-1`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = report(trail, `${trail}-during-2`);
      return { statuses: (await Promise.all([first, second])).map((r) => r.status), batchWrites };
    } finally {
      spy.mockRestore();
    }
  }

  it('answers the attestations waiting behind the batch at once, without sending them again', async () => {
    // The query deadline gave up on a connection that stopped answering.
    const r = await underFailedBatch('b1', () => new DatabaseTimeoutError(300));
    expect(r).toEqual({ statuses: [503, 503], batchWrites: 1 });
    expect(await names('batched', 'b1')).not.toContain('b1-during-2');
    expect((await report('b1', 'once-it-answers-again')).status).toBe(201);
    expect(await names('batched', 'b1')).toContain('once-it-answers-again');
  });

  it('tries the waiting attestations when only a statement ran out of time', async () => {
    const timedOut = () =>
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const r = await underFailedBatch('b2', timedOut);
    // The waiting attestation is tried again, not failed with the first. Which path stores it is
    // not the point: a batch usually, the trail's lock when this replica must first learn its
    // organization's settings again (seen once in CI under load).
    expect(r.statuses).toEqual([503, 201]);
    expect(await names('batched', 'b2')).toContain('b2-during-2');
  });
});

describe('trails remembered from their last write', () => {
  it('reads a trail once while only this batcher writes it', async () => {
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: 'r1' })).status).toBe(201);
    const reads = vi.spyOn(trailStore, 'readTrailsForAttestations');
    for (let i = 0; i < 5; i++) {
      expect((await attest('batched', 'r1', `step-${i}`)).status).toBe(201);
    }
    expect(readsOf(reads, 'r1')).toBe(1);
    expect(await names('batched', 'r1')).toEqual(['step-0', 'step-1', 'step-2', 'step-3', 'step-4']);
  });

  it('writes nothing on a remembered trail another writer changed, and stores the report on a new read', async () => {
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: 'r2' })).status).toBe(201);
    expect((await attest('batched', 'r2', 'first')).status).toBe(201);
    // Another replica's write: the trail row gets a new version.
    await sql`update trails set last_modified_at = last_modified_at where name = 'r2'`.execute(t.db.db);
    const reads = vi.spyOn(trailStore, 'readTrailsForAttestations');
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    expect((await attest('batched', 'r2', 'second')).status).toBe(201);
    const outcomes = await Promise.all(
      writes.mock.results.map((r) => r.value as Promise<Map<string, string>>),
    );
    expect(outcomes.map((o) => o.size)).toEqual([0, 1]);
    expect(readsOf(reads, 'r2')).toBe(1);
    expect(await names('batched', 'r2')).toEqual(['first', 'second']);
  });

  it('answers a report naming an artifact reported to a remembered trail since, instead of a 404', async () => {
    expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: 'r3' })).status).toBe(201);
    expect((await attest('batched', 'r3', 'before-artifact')).status).toBe(201);
    const fp = 'ef'.repeat(32);
    const artifact = await cli.json('POST', '/api/v2/artifacts/acme/batched', {
      fingerprint: fp,
      filename: 'app:3',
      build_url: 'https://ci/3',
      commit_url: 'https://git/3',
      trail_name: 'r3',
    });
    expect(artifact.status).toBe(201);
    const results = await Promise.all([
      attest('batched', 'r3', 'on-artifact', { artifact_fingerprint: fp }),
      attest('batched', 'r3', 'after-artifact'),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 201]);
    const shown = (await cli.get(`/api/v2/artifacts/acme/batched/fingerprint/${fp}`)).json as {
      evidence: Record<string, unknown>;
    };
    expect(shown.evidence).toHaveProperty('on-artifact');
    expect(await names('batched', 'r3')).toEqual(
      expect.arrayContaining(['before-artifact', 'after-artifact']),
    );
  });

  it('follows a flow rename, and a flow name another flow takes', async () => {
    expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'before', description: '' })).status).toBe(
      201,
    );
    expect((await cli.json('PUT', '/api/v2/trails/acme/before', { name: 'x' })).status).toBe(201);
    expect((await attest('before', 'x', 'first')).status).toBe(201);
    expect((await cli.json('PUT', '/api/v2/flows/acme/before/rename', { new_name: 'after' })).status).toBe(
      200,
    );
    // The old name still answers: the same trail.
    expect((await attest('before', 'x', 'second')).status).toBe(201);
    expect(await names('after', 'x')).toEqual(['first', 'second']);
    // Another flow takes the old name: reports to it go to its own trail.
    expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'taker', description: '' })).status).toBe(
      201,
    );
    expect((await cli.json('PUT', '/api/v2/trails/acme/taker', { name: 'x' })).status).toBe(201);
    expect((await cli.json('PUT', '/api/v2/flows/acme/taker/rename', { new_name: 'before' })).status).toBe(
      200,
    );
    expect((await attest('before', 'x', 'third')).status).toBe(201);
    expect(await names('before', 'x')).toEqual(['third']);
    expect(await names('after', 'x')).toEqual(['first', 'second']);
  });

  it("plans on the flow's new template once it changes", async () => {
    expect((await cli.json('PUT', '/api/v2/flows/acme', { name: 'templated', description: '' })).status).toBe(
      201,
    );
    expect((await cli.json('PUT', '/api/v2/trails/acme/templated', { name: 't' })).status).toBe(201);
    expect((await attest('templated', 't', 'first')).status).toBe(201);
    const template = 'version: 1\ntrail:\n  attestations:\n  - name: needed\n    type: generic\n';
    const updated = await cli.multipart('PUT', '/api/v2/flows/acme/template_file', [
      { name: 'data_json', value: JSON.stringify({ name: 'templated', description: '' }) },
      { name: 'template_file', filename: 'template.yml', content: template },
    ]);
    expect(updated.status).toBe(200);
    expect((await attest('templated', 't', 'second')).status).toBe(201);
    const shown = (await cli.get('/api/v2/trails/acme/templated/t')).json as {
      compliance_state: string;
      compliance_status: { attestations_statuses: Array<{ attestation_name: string; status?: string }> };
    };
    expect(shown.compliance_status.attestations_statuses.map((s) => s.attestation_name)).toContain('needed');
    expect(shown.compliance_state).not.toBe('COMPLIANT');
  });
});

describe.runIf(onPostgres)('two replicas reporting to the same trails', () => {
  it('stores every report of both once, in one order, and evaluates the whole of it', async () => {
    await withReplica(t, async (replica) => {
      const other = cliClient(replica, await t.seedKey('acme', 'admin'));
      const trails = ['m1', 'm2', 'm3'];
      for (const trail of trails) {
        expect((await cli.json('PUT', '/api/v2/trails/acme/batched', { name: trail })).status).toBe(201);
      }
      const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
      // Waves: within one, both replicas write the same trails at once; between two, each finds
      // the trails it remembers written by the other.
      const sent: string[] = [];
      for (let wave = 0; wave < 8; wave++) {
        const results = await Promise.all(
          trails.flatMap((trail) =>
            [0, 1].flatMap((i) => {
              const a = `main-${wave}-${i}`;
              const b = `other-${wave}-${i}`;
              sent.push(`${trail}/${a}`, `${trail}/${b}`);
              return [attest('batched', trail, a), attest('batched', trail, b, {}, other)];
            }),
          ),
        );
        expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
      }
      // Some writes met the other replica's and wrote nothing: the path under test ran.
      const outcomes = await Promise.all(
        writes.mock.results.map((r) => r.value as Promise<Map<string, string>>),
      );
      const refused = writes.mock.calls.filter(([, asked], i) => outcomes[i]!.size < asked.length);
      expect(refused.length).toBeGreaterThan(0);
      for (const trail of trails) {
        const stored = (
          await sql<{ name: string }>`select a.name from attestations a join trails t
            on t.org_id = a.org_id and t.id = a.trail_id where t.name = ${trail} order by a.seq`.execute(
            t.db.db,
          )
        ).rows.map((r) => `${trail}/${r.name}`);
        expect([...stored].sort()).toEqual(sent.filter((n) => n.startsWith(`${trail}/`)).sort());
        for (const client of [cli, other]) {
          const shown = await trailOf(trail, 'batched', client);
          expect(shown.compliance_state).toBe('COMPLIANT');
          expect(
            shown.compliance_status.attestations_statuses.map((s) => `${trail}/${s.attestation_name}`),
          ).toEqual(stored);
          expect(shown.events.filter((e) => e.type === 'trail_attestation_reported')).toHaveLength(
            stored.length,
          );
        }
      }
    });
  });
});
