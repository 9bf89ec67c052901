/**
 * The evaluation queue is durable and bounded: with no worker running, evaluations stay pending
 * and run once a worker comes; an evaluation whose worker died is claimed again when its lease
 * lapses and given up after three claims; an organization with 100 evaluations waiting is refused
 * with 429; and a decision whose destination went away meanwhile fails the evaluation, writing
 * nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { evaluationsRepository } from '../../services/api/src/storage/repositories/evaluations.js';
import { orgsRepository } from '../../services/api/src/storage/repositories/orgs.js';

const ORG = 'acme';
let t: TestApp;
let cli: ReturnType<typeof cliClient>;

const request = (extra: Record<string, unknown> = {}, trail = 'one') =>
  cli.json('POST', `/api/v2/evaluations/${ORG}`, {
    context: { trails: [{ flow: 'release', trail }] },
    policy: { files: { 'policy.cel': 'true' } },
    params: {},
    ...extra,
  });
const read = async (id: string) => (await cli.get(`/api/v2/evaluations/${ORG}/${id}`)).json;
/** Another replica claims the queue's heads and dies with them. */
const deadClaim = () => evaluationsRepository.claim(t.db.db, t.clock.now(), 60_000, 100, []);

beforeAll(async () => {
  t = await createTestApp({ env: { VERITY_EVALUATIONS_ENABLED: 'false' } });
  cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  expect(
    (
      await cli.json('PUT', `/api/v2/organizations/${ORG}/experimental_features`, {
        experimental_features_enabled: true,
      })
    ).status,
  ).toBe(200);
  expect((await cli.json('POST', `/api/v2/controls/${ORG}`, { identifier: 'CTL-1', name: 'c' })).status).toBe(
    201,
  );
  for (const flow of ['release', 'legacy']) {
    expect((await cli.json('PUT', `/api/v2/flows/${ORG}`, { name: flow, description: '' })).status).toBe(201);
    expect((await cli.json('PUT', `/api/v2/trails/${ORG}/${flow}`, { name: 'one' })).status).toBe(201);
  }
});
afterAll(async () => t?.close());

it('stays pending with no worker, and runs when one comes', async () => {
  const created = await request();
  expect(created.status).toBe(201);
  expect(await read(created.json.id)).toEqual({
    id: created.json.id,
    status: 'pending',
    requested_at: created.json.requested_at,
    recorded_at: created.json.recorded_at,
    policy_digest: expect.stringMatching(/^sha256:/),
  });
  await t.app.evaluations.process();
  expect(await read(created.json.id)).toMatchObject({
    status: 'completed',
    result: { allow: true, violations: [] },
  });
});

it("a dead worker's evaluation runs again once its lease lapses", async () => {
  const { json } = await request();
  expect((await deadClaim()).map((r) => r.id)).toEqual([json.id]);
  await t.app.evaluations.process();
  expect((await read(json.id)).status).toBe('pending');
  t.clock.advance(61_000);
  await t.app.evaluations.process();
  expect(await read(json.id)).toMatchObject({ status: 'completed', result: { allow: true, violations: [] } });
});

it('is given up after three claims', async () => {
  const { json } = await request();
  for (let i = 0; i < 3; i++) {
    expect((await deadClaim()).map((r) => r.id)).toEqual([json.id]);
    t.clock.advance(61_000);
  }
  await t.app.evaluations.process();
  expect(await read(json.id)).toMatchObject({
    status: 'failed',
    error: { kind: 'evaluate', message: 'the evaluation did not finish in 3 attempts' },
  });
});

it('a decision whose flow was archived meanwhile fails the evaluation and writes nothing', async () => {
  const { json } = await request(
    { decision: { control: 'CTL-1', name: 'late-decision', flow: 'legacy', trail: 'one' } },
    'one',
  );
  expect((await cli.json('PUT', `/api/v2/flows/${ORG}/legacy/archive`)).status).toBe(200);
  await t.app.evaluations.process();
  const e = await read(json.id);
  expect(e.status).toBe('failed');
  expect(e.error.kind).toBe('decision');
  expect(e).not.toHaveProperty('decision_attestation_id');
  expect(e).not.toHaveProperty('result');
  const written = await cli.get(`/api/v2/attestations/${ORG}/legacy/trail/one/late-decision`);
  expect(written.status === 404 || (written.status === 200 && written.json.length === 0)).toBe(true);
});

it('refuses with 429 while 100 evaluations of the organization wait', async () => {
  const waiting: string[] = [];
  for (let i = 0; i < 100; i++) {
    const r = await request();
    expect(r.status, r.body).toBe(201);
    waiting.push(r.json.id);
  }
  const refused = await request();
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toBeDefined();
  // Drained (a round runs one evaluation of the organization), the queue takes requests again.
  const org = (await orgsRepository.findByName(t.db.db, ORG))!;
  while ((await evaluationsRepository.unfinished(t.db.db, org.id)) > 0) {
    await t.app.evaluations.process();
  }
  expect((await read(waiting[0]!)).status).toBe('completed');
  expect((await read(waiting[99]!)).status).toBe('completed');
  expect((await request()).status).toBe(201);
});
