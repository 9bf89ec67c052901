/**
 * One organization's expensive CEL expressions do not hold another organization's evaluation
 * beyond one evaluation's time bound: with a single engine worker, organization A queues three
 * expressions that would run for minutes, then organization B queues a trivial one. B's
 * evaluation finishes before A's second and third even finish (asserted on the order in which
 * evaluations become terminal, not on times), and each of A's fails with the time bound.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';
import { until } from '../helpers/wait.js';

const BOUND_MS = 1_000;
let t: TestApp;
const clients: Record<string, ReturnType<typeof cliClient>> = {};

/** Six nested comprehensions over 50 elements: about 15 billion steps. */
const LIST = `[${Array.from({ length: 50 }, (_, i) => i).join(',')}]`;
const EXPENSIVE = ['a', 'b', 'c', 'd', 'e', 'f'].reduceRight(
  (inner, v) => `${LIST}.all(${v}, ${inner})`,
  'a + b + c + d + e + f >= 0',
);

async function setUp(org: string) {
  const cli = cliClient(t.app, await t.seedKey(org, 'admin'));
  clients[org] = cli;
  expect((await cli.json('PUT', `/api/v2/flows/${org}`, { name: 'release', description: '' })).status).toBe(
    201,
  );
  expect((await cli.json('PUT', `/api/v2/trails/${org}/release`, { name: 'one' })).status).toBe(201);
}

async function request(org: string, source: string): Promise<string> {
  const r = await clients[org]!.json('POST', `/api/v2/evaluations/${org}`, {
    context: { trails: [{ flow: 'release', trail: 'one' }] },
    policy: { files: { 'policy.cel': source } },
    params: {},
  });
  expect(r.status, r.body).toBe(201);
  return r.json.id as string;
}

beforeAll(async () => {
  t = await createTestApp({
    env: { VERITY_CEL_WORKERS: '1', VERITY_CEL_TIMEOUT_MS: String(BOUND_MS) },
  });
  await setUp('hog');
  await setUp('fair');
});
afterAll(async () => t?.close());

it("one organization's looping expressions hold another's evaluation for at most one bound", async () => {
  const hog = [
    await request('hog', EXPENSIVE),
    await request('hog', EXPENSIVE),
    await request('hog', EXPENSIVE),
  ];
  const fair = await request('fair', 'input.trail.trail_name == "one"');
  const all = [...hog.map((id) => ['hog', id] as const), ['fair', fair] as const];
  // The order in which the evaluations are first seen terminal.
  const finished: string[] = [];
  const outcomes = new Map<string, Record<string, any>>();
  await until(async () => {
    for (const [org, id] of all) {
      if (outcomes.has(id)) {
        continue;
      }
      const r = await clients[org]!.get(`/api/v2/evaluations/${org}/${id}`);
      expect(r.status).toBe(200);
      if (r.json.status !== 'pending') {
        outcomes.set(id, r.json);
        finished.push(id);
      }
    }
    return outcomes.size === all.length ? true : undefined;
  }, 60_000);
  expect(outcomes.get(fair)).toMatchObject({ status: 'completed', result: { allow: true, violations: [] } });
  // The fair organization's evaluation waited for at most the one expression already running.
  expect(finished.indexOf(fair)).toBeLessThan(finished.indexOf(hog[1]!));
  expect(finished.indexOf(fair)).toBeLessThan(finished.indexOf(hog[2]!));
  for (const id of hog) {
    expect(outcomes.get(id)).toMatchObject({
      status: 'failed',
      error: { kind: 'evaluate', message: `evaluation exceeded its time bound of ${BOUND_MS} ms` },
    });
    expect(outcomes.get(id)).not.toHaveProperty('result');
  }
});
