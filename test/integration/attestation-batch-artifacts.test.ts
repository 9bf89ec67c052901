/**
 * Attestations to trails that carry artifacts, stored together (storage/batching/attestation-batcher.ts)
 * as a client sees them: the batch writes the artifacts' states, planned each on the state the
 * attestations before it left, and only while no other writer moved an artifact since its read
 * (another replica included); and it marks the environments where a changed fingerprint runs,
 * as publishing the change would, waking the re-evaluation worker.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { onPostgres } from '../helpers/database.js';
import { withReplica } from '../helpers/replica.js';
import { fp, pod } from '../helpers/runtime.js';
import { attestationsRepository } from '../../services/api/src/storage/repositories/attestations.js';
import { flowsRepository } from '../../services/api/src/storage/repositories/flows.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { trailsRepository } from '../../services/api/src/storage/repositories/trails.js';
import { trailStore } from '../../services/api/src/storage/trail-store/index.js';
import { evaluateInputs } from '../../services/api/src/domain/trail-evaluation.js';

type Cli = ReturnType<typeof cliClient>;
let t: TestApp;
let cli: Cli;
const FLOW = 'ci';

const attest = (trail: string, name: string, extra: Record<string, unknown> = {}, client: Cli = cli) =>
  client.multipart('POST', `/api/v2/attestations/acme/${FLOW}/trail/${trail}/generic`, [
    { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: true, ...extra }) },
  ]);
/** An artifact-bound attestation as the CLI sends it (`--fingerprint`, `--name backend.<name>`). */
const onArtifact = (trail: string, fingerprint: string, name: string, client: Cli = cli, compliant = true) =>
  attest(
    trail,
    name,
    { artifact_fingerprint: fingerprint, target_artifacts: ['backend'], is_compliant: compliant },
    client,
  );
const reportArtifact = (trail: string, fingerprint: string, client: Cli = cli) =>
  client.json('POST', `/api/v2/artifacts/acme/${FLOW}`, {
    fingerprint,
    filename: 'backend',
    build_url: 'https://ci/1',
    commit_url: 'https://git/1',
    trail_name: trail,
  });
const newTrail = async (trail: string, fingerprint: string) => {
  expect((await cli.json('PUT', `/api/v2/trails/acme/${FLOW}`, { name: trail })).status).toBe(201);
  expect((await reportArtifact(trail, fingerprint)).status).toBe(201);
};
const artifactOf = async (fingerprint: string) =>
  (await cli.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${fingerprint}`)).json as {
    state: string;
    evidence: Record<string, unknown>;
  };

/** The artifact's stored state and compliance, and those a fresh evaluation of its whole trail gives. */
async function storedAndFresh(trailName: string, fingerprint: string) {
  const org = (await orgsRepository.findByName(t.db.db, 'acme'))!;
  const flow = (await flowsRepository.findByName(t.db.db, org.id, FLOW))!;
  const trail = (await trailsRepository.find(t.db.db, org.id, flow.id, trailName))!;
  const history = await attestationsRepository.factsForTrail(t.db.db, org.id, trail.id);
  const { artifacts } = await trailStore.evaluationInputs(t.db.db, org.id, trail.id);
  const inputs = { artifacts, attestations: history.map((a) => ({ ...a, seq: Number(a.seq) })) };
  const whole = evaluateInputs({ flow, trail, inputs, now: new Date() }).evaluation;
  const artifact = artifacts.find((a) => a.fingerprint === fingerprint)!;
  const fresh = whole.byArtifactId[artifact.id]!;
  const noTime = (c: unknown) =>
    JSON.parse(JSON.stringify(c, (k, v: unknown) => (k === 'evaluated_at' ? undefined : v))) as unknown;
  return {
    stored: { state: artifact.state, compliance: noTime(artifact.compliance) },
    fresh: { state: fresh.status === 'MISSING' ? 'INCOMPLETE' : fresh.status, compliance: noTime(fresh) },
    attestations: history.length,
  };
}

/** Attestations the batch stored (not under the trail's lock), per write call, from a spy. */
async function batched(spy: { mock: { calls: unknown[][]; results: Array<{ value: unknown }> } }) {
  let n = 0;
  for (const [i, call] of spy.mock.calls.entries()) {
    const stored = await (spy.mock.results[i]!.value as Promise<Map<string, string>>);
    for (const w of call[1] as Array<{
      orgId: string;
      trailId: string;
      ifUnchanged: unknown;
      attestations: [];
    }>) {
      if (w.ifUnchanged !== null && stored.has(`${w.orgId}:${w.trailId}`)) {
        n += w.attestations.length;
      }
    }
  }
  return n;
}

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  expect((await cli.json('PUT', '/api/v2/flows/acme', { name: FLOW, description: '' })).status).toBeLessThan(
    300,
  );
});
afterEach(() => vi.restoreAllMocks());
afterAll(async () => t?.close());

describe('artifact states stored with the batch', () => {
  it('stores 64 concurrent attestations to one artifact, all in its state and evidence', async () => {
    const F = fp('a1');
    await newTrail('many', F);
    expect((await onArtifact('many', F, 'warm')).status).toBe(201);
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    // Artifact-bound, one in four non-compliant, with a trail-level one after every fourth: those
    // leave the artifact as they find it, so a batch's last attestation may change no artifact.
    const sent = Array.from({ length: 64 }, (_, i) => `unit-${i}`);
    const results = await Promise.all(
      sent.flatMap((name, i) => [
        onArtifact('many', F, name, cli, i % 4 !== 1),
        ...(i % 4 === 3 ? [attest('many', `trail-level-${i}`)] : []),
      ]),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    expect(await batched(writes)).toBeGreaterThan(0);
    const shown = await artifactOf(F);
    expect(Object.keys(shown.evidence)).toEqual(expect.arrayContaining(['warm', ...sent]));
    expect(shown.state).toBe('NON-COMPLIANT');
    const { stored, fresh, attestations } = await storedAndFresh('many', F);
    expect(attestations).toBe(1 + 64 + 16);
    expect(stored).toEqual(fresh);
  });

  it('writes nothing when an artifact moved since a remembered read, and stores it on a new read', async () => {
    const F = fp('a2');
    await newTrail('moved', F);
    expect((await onArtifact('moved', F, 'first')).status).toBe(201);
    // Another writer's change to the artifact row alone (not its trail's): a new row version.
    await sql`update artifacts set state = 'NON-COMPLIANT' where fingerprint = ${F}`.execute(t.db.db);
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    expect((await onArtifact('moved', F, 'second')).status).toBe(201);
    const outcomes = await Promise.all(
      writes.mock.results.map((r) => r.value as Promise<Map<string, string>>),
    );
    expect(outcomes.map((o) => o.size)).toEqual([0, 1]);
    const { stored, fresh } = await storedAndFresh('moved', F);
    expect(stored).toEqual(fresh);
    expect((await artifactOf(F)).state).toBe('COMPLIANT');
  });
});

describe('re-evaluation marks made by the batch', () => {
  it('marks the environment running a fingerprint whose trail a batched attestation changes', async () => {
    const F = fp('a3');
    await newTrail('running', F);
    const snapshotter = cliClient(t.app, await t.seedKey('acme', 'snapshotter'));
    const env = { name: 'prod', type: 'K8S', description: '' };
    expect((await snapshotter.json('PUT', '/api/v2/environments/acme', env)).status).toBe(201);
    const pods = { artifacts: [pod('backend-1', { backend: F })] };
    expect((await snapshotter.json('PUT', '/api/v2/environments/acme/prod/report/K8S', pods)).status).toBe(
      200,
    );
    expect((await attest('running', 'warm')).status).toBe(201);
    await t.app.runtime.processMarks();
    const marks = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from reevaluation_marks`.execute(t.db.db))
          .rows[0]!.n,
      );
    expect(await marks()).toBe(0);
    const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
    const committed = vi.spyOn(t.app.domainEvents, 'committed');
    // Trail-level and non-compliant: the trail's compliance, and so the artifact's, changes.
    expect((await attest('running', 'sign-off', { is_compliant: false })).status).toBe(201);
    expect(await batched(writes)).toBe(1);
    expect(await marks()).toBe(1);
    // Announced after its commit, which wakes the re-evaluation worker.
    expect(committed).toHaveBeenCalledWith([{ type: 'reevaluation.marked', count: 1 }]);
    // The worker claims it (no policy here, so the verdict and its snapshot stay as they were).
    await t.app.runtime.processMarks();
    expect(await marks()).toBe(0);
  });
});

describe.runIf(onPostgres)('two replicas changing one artifact', () => {
  it('loses no update: the stored artifact state is what its whole trail gives', async () => {
    await withReplica(t, async (replica) => {
      const other = cliClient(replica, await t.seedKey('acme', 'admin'));
      const F = fp('a4');
      await newTrail('shared', F);
      const writes = vi.spyOn(trailStore, 'insertAttestationBatch');
      const sent: string[] = [];
      for (let wave = 0; wave < 8; wave++) {
        const a = `main-${wave}`;
        const b = `other-${wave}`;
        sent.push(a, b);
        // One replica attests to the artifact while the other reports it again and attests to it.
        const results = await Promise.all([
          onArtifact('shared', F, a, cli, wave % 3 !== 2),
          reportArtifact('shared', F, other),
          onArtifact('shared', F, b, other, wave % 3 !== 1),
        ]);
        // Reported again: 200.
        expect(results.map((r) => r.status)).toEqual([201, 200, 201]);
        const { stored, fresh } = await storedAndFresh('shared', F);
        expect(stored, `wave ${wave}`).toEqual(fresh);
      }
      expect(await batched(writes)).toBeGreaterThan(0);
      for (const client of [cli, other]) {
        const shown = (await client.get(`/api/v2/artifacts/acme/${FLOW}/fingerprint/${F}`)).json as {
          evidence: Record<string, unknown>;
        };
        expect(Object.keys(shown.evidence)).toEqual(expect.arrayContaining(sent));
      }
    });
  });
});

/**
 * A trail's artifact rows as stored, with what differs between twin trails (ids, fingerprints,
 * evaluation times) named by role: the same reports to twins then read the same.
 */
async function artifactRows(trailName: string) {
  const rows = (
    await sql<{ id: string; fingerprint: string; state: string; compliance: unknown; trail_id: string }>`
      select a.id, a.fingerprint, a.state, a.compliance, a.trail_id from artifacts a
      join trails t on t.org_id = a.org_id and t.id = a.trail_id where t.name = ${trailName}
      order by a.seq`.execute(t.db.db)
  ).rows;
  const reports = (
    await sql<{
      id: string;
    }>`select id from attestations where trail_id = ${rows[0]!.trail_id} order by seq`.execute(t.db.db)
  ).rows;
  const names: Array<[string, string]> = [
    ...rows.flatMap((r, i): Array<[string, string]> => [
      [r.id, `artifact-${i}`],
      [r.fingerprint, `fingerprint-${i}`],
    ]),
    ...reports.map((r, i): [string, string] => [r.id, `report-${i}`]),
    [rows[0]!.trail_id, 'trail'],
  ];
  const text = JSON.stringify(
    rows.map((r) => ({ state: r.state, compliance: r.compliance })),
    (k, v: unknown) => (k === 'evaluated_at' ? undefined : v),
  );
  return names.reduce((out, [value, role]) => out.split(value).join(role), text);
}

describe("an attestation stored under the trail's lock", () => {
  it('marks the environment where its artifact runs once, and stores the artifact as a batch does', async () => {
    const [L, B] = [fp('b1'), fp('b2')];
    await newTrail('locked', L);
    await newTrail('unlocked', B);
    const snapshotter = cliClient(t.app, await t.seedKey('acme', 'snapshotter'));
    const env = { name: 'twins', type: 'K8S', description: '' };
    expect((await snapshotter.json('PUT', '/api/v2/environments/acme', env)).status).toBe(201);
    const pods = { artifacts: [pod('locked-1', { backend: L }), pod('unlocked-1', { backend: B })] };
    const report = await snapshotter.json('PUT', '/api/v2/environments/acme/twins/report/K8S', pods);
    expect(report.status).toBe(200);
    for (const trail of ['locked', 'unlocked']) {
      expect((await attest(trail, 'warm')).status).toBe(201);
    }
    await t.app.runtime.processMarks();
    const marks = async () =>
      (
        await sql<{ environment: string }>`
          select e.name as environment from reevaluation_marks m
          join environments e on e.org_id = m.org_id and e.id = m.environment_id`.execute(t.db.db)
      ).rows.map((r) => r.environment);
    expect(await marks()).toEqual([]);

    // Every batch write of the trail meets a conflict: the attestation takes the trail's lock.
    const insert = trailStore.insertAttestationBatch.bind(trailStore);
    const writes = vi
      .spyOn(trailStore, 'insertAttestationBatch')
      .mockImplementation(async (db, trails) =>
        trails.some((w) => w.ifUnchanged !== null)
          ? Object.assign(new Map<string, string>(), { marks: 0 })
          : insert(db, trails),
      );
    const committed = vi.spyOn(t.app.domainEvents, 'committed');
    // Non-compliant: the artifact's compliance changes.
    expect((await onArtifact('locked', L, 'scan', cli, false)).status).toBe(201);
    expect(writes.mock.calls.filter(([, trails]) => trails[0]!.ifUnchanged === null)).toHaveLength(1);
    expect(await marks()).toEqual(['twins']);
    // Announced after its commit, which wakes the re-evaluation worker.
    expect(committed).toHaveBeenCalledWith([{ type: 'reevaluation.marked', count: 1 }]);
    vi.restoreAllMocks();
    await t.app.runtime.processMarks();

    const batchWrites = vi.spyOn(trailStore, 'insertAttestationBatch');
    expect((await onArtifact('unlocked', B, 'scan', cli, false)).status).toBe(201);
    expect(await batched(batchWrites)).toBe(1);
    expect(await marks()).toEqual(['twins']);
    await t.app.runtime.processMarks();

    expect((await artifactOf(L)).state).toBe('NON-COMPLIANT');
    expect(await artifactRows('locked')).toEqual(await artifactRows('unlocked'));
  });
});
