/**
 * Reporting from a trail's facts (migration 0303) over HTTP: after a long mixed history of
 * reports and overrides, the trail's stored evaluation is what evaluating its whole history
 * gives. Facts are stored once every `FACTS_WRITTEN_EVERY` reports, and the reports after them are
 * read with them, whoever stored those (this version, or an older replica) and whether or not the
 * batcher remembers the trail.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { flowsRepository } from '../../services/api/src/storage/repositories/flows.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';
import { trailsRepository } from '../../services/api/src/storage/repositories/trails.js';
import { attestationsRepository } from '../../services/api/src/storage/repositories/attestations.js';
import { evaluateInputs, storedCompliance } from '../../services/api/src/domain/trail-evaluation.js';
import { FACTS_WRITTEN_EVERY } from '../../services/api/src/storage/batching/attestation-chain.js';
import { trailStore, type AttestationTrailRead } from '../../services/api/src/storage/trail-store/index.js';

let t: TestApp;
let cli: ReturnType<typeof cliClient>;
const FP = 'fa'.repeat(32);
const COMMIT = 'e'.repeat(40);
const url = (kind: string, trail: string) => `/api/v2/attestations/acme/f1/trail/${trail}/${kind}`;

beforeAll(async () => {
  t = await createTestApp();
  cli = cliClient(t.app, await t.seedKey('acme', 'admin'));
  await cli.multipart('PUT', '/api/v2/flows/acme/template_file', [
    { name: 'data_json', value: JSON.stringify({ name: 'f1', description: '' }) },
    {
      name: 'template_file',
      filename: 't.yml',
      content:
        'version: 1\ntrail:\n  attestations:\n  - name: sign-off\n    type: generic\n  artifacts:\n  - name: app\n    attestations:\n    - name: tests\n      type: generic\n',
    },
  ]);
  for (const trail of ['long', 'guarded']) {
    await cli.multipart('PUT', '/api/v2/trails/acme/f1', [
      { name: 'data_json', value: JSON.stringify({ name: trail }) },
    ]);
    // The guarded trail has no artifact: its trail-level reports never change an artifact's state.
    if (trail === 'guarded') {
      continue;
    }
    await cli.json('POST', '/api/v2/artifacts/acme/f1', {
      fingerprint: FP,
      filename: 'app:1',
      git_commit: COMMIT,
      build_url: 'https://ci/1',
      commit_url: 'https://git/1',
      template_reference_name: 'app',
      trail_name: trail,
    });
  }
});
afterAll(async () => t?.close());
afterEach(() => vi.restoreAllMocks());

/** What reports read of a trail (both paths) and how they stored it. */
function watchReports() {
  const read = vi.spyOn(trailStore, 'readTrailsForAttestations');
  const locked = vi.spyOn(trailStore, 'evaluationInputs');
  const write = vi.spyOn(trailStore, 'insertAttestationBatch');
  return {
    /** How many attestations each locked report's read handed the evaluation, in order. */
    lockedLengths: async () =>
      (await Promise.all(locked.mock.results.map((r) => r.value as ReturnType<typeof locked>))).map(
        (r) => r.attestations.length,
      ),
    /** How many attestations each unlocked read handed the evaluation, in order. */
    readLengths: async () =>
      (await Promise.all(read.mock.results.map((r) => r.value as ReturnType<typeof read>))).flatMap((r) =>
        r.flatMap((x) => (x ? [x.inputs.attestations.length] : [])),
      ),
    /** The facts each batch write stored for the trail `trailId` (null: left as stored), in order. */
    factsWritten: (trailId: string) =>
      write.mock.calls.flatMap((call) => call[1].filter((x) => x.trailId === trailId).map((x) => x.facts)),
    /** Reports stored without the trail's lock. */
    unlocked: async () => {
      let n = 0;
      for (const [i, call] of write.mock.calls.entries()) {
        const stored = await (write.mock.results[i]!.value as ReturnType<typeof write>);
        for (const t of call[1]) {
          if (t.ifUnchanged !== null && stored.has(`${t.orgId}:${t.trailId}`)) {
            n += t.attestations.length;
          }
        }
      }
      return n;
    },
    lastRead: async (): Promise<AttestationTrailRead> =>
      (await (read.mock.results[read.mock.results.length - 1]!.value as ReturnType<typeof read>))[0]!,
  };
}

async function trailRows(name: string) {
  const org = (await orgsRepository.findByName(t.db.db, 'acme'))!;
  const flow = (await flowsRepository.findByName(t.db.db, org.id, 'f1'))!;
  const trail = (await trailsRepository.find(t.db.db, org.id, flow.id, name))!;
  return { org, flow, trail };
}

const withoutTime = (c: unknown) =>
  JSON.parse(JSON.stringify(c, (k, v: unknown) => (k === 'evaluated_at' ? undefined : v))) as unknown;

describe('trail facts', () => {
  it('store, after 120 mixed reports, the evaluation of the whole history', async () => {
    const names = ['sign-off', 'tests', 'lint'];
    const watch = watchReports();
    for (let i = 0; i < 120; i++) {
      // As another replica's write: the batcher reads the trail again, with a long history.
      if (i === 80 || i === 100) {
        await sql`update trails set last_modified_at = last_modified_at where name = 'long'`.execute(t.db.db);
      }
      const name = names[i % 3]!;
      const onArtifact = name === 'tests' ? { artifact_fingerprint: FP } : {};
      const res =
        i % 7 === 6
          ? await cli.json('POST', url('override', 'long'), {
              attestation_name: name,
              ...onArtifact,
              reason: `override ${i}`,
              new_compliance_status: i % 2 === 0,
              original_attestation_type: 'generic',
            })
          : await cli.multipart('POST', url('generic', 'long'), [
              {
                name: 'data_json',
                value: JSON.stringify({ attestation_name: name, ...onArtifact, is_compliant: i % 5 !== 0 }),
              },
            ]);
      expect(res.status, `report ${i}`).toBeLessThan(300);
    }
    // Every report is stored once, with the batch (its artifact states too) or under the trail's
    // lock; the last forty, with a history of 80 and more, read the trail's facts and the reports
    // after them, not its history.
    expect((await watch.lockedLengths()).length + (await watch.unlocked())).toBe(120);
    const reads = [...(await watch.lockedLengths()), ...(await watch.readLengths())];
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...reads.slice(-2))).toBeLessThanOrEqual(9 + FACTS_WRITTEN_EVERY - 1);
    const { org, flow, trail } = await trailRows('long');
    const facts = (
      await sql<{ n: number }>`select jsonb_array_length(facts)::int as n from trail_facts
        where org_id = ${org.id} and trail_id = ${trail.id}`.execute(t.db.db)
    ).rows[0]!.n;
    expect(facts).toBeLessThanOrEqual(9);
    // The whole history, as the trail holds it.
    const history = await attestationsRepository.factsForTrail(t.db.db, org.id, trail.id);
    expect(history).toHaveLength(120);
    const inputs = {
      artifacts: (await trailStore.evaluationInputs(t.db.db, org.id, trail.id)).artifacts,
      attestations: history.map((a) => ({ ...a, seq: Number(a.seq) })),
    };
    const whole = evaluateInputs({ flow, trail, inputs, now: new Date() });
    expect(withoutTime(trail.compliance)).toEqual(withoutTime(storedCompliance(whole.evaluation)));
    expect(trail.compliance_state).toBe(whole.evaluation.status);
    const shown = (await cli.get('/api/v2/trails/acme/f1/long')).json as { compliance_state: string };
    expect(shown.compliance_state).toBe(whole.evaluation.status);
  });

  it('are stored once every FACTS_WRITTEN_EVERY reports, and read with the reports after them', async () => {
    const report = (name: string, compliant: boolean) =>
      cli.multipart('POST', url('generic', 'guarded'), [
        { name: 'data_json', value: JSON.stringify({ attestation_name: name, is_compliant: compliant }) },
      ]);
    const { org, flow, trail } = await trailRows('guarded');
    const storedFacts = async () =>
      (
        await sql<{ name: string }>`select f ->> 'name' as name
          from trail_facts, jsonb_array_elements(facts) f where org_id = ${org.id} and trail_id = ${trail.id}`.execute(
          t.db.db,
        )
      ).rows.map((r) => r.name);
    let watch = watchReports();
    for (let i = 0; i < FACTS_WRITTEN_EVERY; i++) {
      expect((await report('sign-off', true)).status).toBe(201);
      // Not stored until the facts would leave out FACTS_WRITTEN_EVERY reports.
      expect(await storedFacts(), `after report ${i + 1}`).toEqual(
        i + 1 < FACTS_WRITTEN_EVERY ? [] : ['sign-off', 'sign-off'],
      );
    }
    expect((await report('tests', true)).status).toBe(201);
    expect(await watch.unlocked()).toBe(FACTS_WRITTEN_EVERY + 1);
    // Written by the batch once, with the last report that made them due: its first and latest sign-off.
    const written = watch.factsWritten(trail.id);
    expect(written.flatMap((f) => (f ? [f.attestations.map((a) => a.name)] : []))).toEqual([
      ['sign-off', 'sign-off'],
    ]);
    expect(written).toHaveLength(FACTS_WRITTEN_EVERY + 1);
    vi.restoreAllMocks();
    // As a replica of an older version stores a report: the attestation row and the trail's
    // evaluation (every version rewrites the trail row), but not the facts.
    await t.db.db.transaction().execute(async (trx) => {
      await sql`insert into attestations (org_id, id, flow_id, trail_id, name, type, kind, is_compliant,
          payload, description, origin_url, created_by, created_at)
        values (${org.id}, 'older0-0000-0000-0000-replica00000', ${flow.id}, ${trail.id}, 'lint', 'generic',
          'generic', false, '{}'::jsonb, '', '', 'older', now())`.execute(trx);
      await sql`update trails set last_modified_at = now() where id = ${trail.id}`.execute(trx);
    });
    watch = watchReports();
    expect((await report('sign-off', true)).status).toBe(201);
    // Read afresh (the trail changed elsewhere): the facts, then the reports stored after them,
    // by this version (tests) and by the older replica (lint).
    expect((await watch.lastRead()).inputs.attestations.map((a) => a.name)).toEqual([
      'sign-off',
      'sign-off',
      'tests',
      'lint',
    ]);
    expect((await watch.lastRead()).factsBehind).toBe(2);
    expect(await watch.unlocked()).toBe(1);
    const shown = (await cli.get('/api/v2/trails/acme/f1/guarded')).json as {
      compliance_state: string;
      compliance_status: {
        attestations_statuses: Array<{ attestation_name: string; is_compliant: boolean }>;
      };
    };
    expect(shown.compliance_state).toBe('NON-COMPLIANT');
    expect(shown.compliance_status.attestations_statuses.map((s) => s.attestation_name)).toContain('lint');
  });

  it('are read whole, with every report, where none are stored', async () => {
    const { org, trail } = await trailRows('guarded');
    await sql`delete from trail_facts where org_id = ${org.id} and trail_id = ${trail.id}`.execute(t.db.db);
    const inputs = await trailStore.evaluationInputs(t.db.db, org.id, trail.id);
    const history = await attestationsRepository.factsForTrail(t.db.db, org.id, trail.id);
    expect(inputs.attestations.map((a) => a.id)).toEqual(history.map((a) => a.id));
    expect(history.length).toBe(FACTS_WRITTEN_EVERY + 3);
  });
});
