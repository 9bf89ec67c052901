/**
 * Custom-type evaluation is shared fairly: organizations queue apart and are served in turn, so
 * one organization's looping rules do not hold another's attestations, and an organization whose
 * queue is full is told to retry (429 with Retry-After).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliClient } from '../helpers/cli.js';

const TIMEOUT_MS = 2000;
let t: TestApp;
let a: ReturnType<typeof cliClient>;
let b: ReturnType<typeof cliClient>;

const createType = (cli: typeof a, org: string, name: string, rules: string[]) =>
  cli.multipart('POST', `/api/v2/custom-attestation-types/${org}`, [
    { name: 'data_json', value: JSON.stringify({ name, evaluator: { content_type: 'jq', rules } }) },
  ]);
const attestCustom = (cli: typeof a, org: string, typeName: string, name: string) =>
  cli.multipart('POST', `/api/v2/attestations/${org}/f/trail/t/custom`, [
    {
      name: 'data_json',
      value: JSON.stringify({ attestation_name: name, type_name: typeName, attestation_data: { n: 1 } }),
    },
  ]);

beforeAll(async () => {
  t = await createTestApp({
    env: {
      VERITY_JQ_TIMEOUT_MS: String(TIMEOUT_MS),
      VERITY_JQ_WORKERS: '2',
      VERITY_JQ_QUEUE_PER_ORG: '2',
    },
  });
  a = cliClient(t.app, await t.seedKey('org-a', 'admin'));
  b = cliClient(t.app, await t.seedKey('org-b', 'admin'));
  expect((await createType(a, 'org-a', 'loop', ['until(false; .)'])).status).toBe(201);
  expect((await createType(b, 'org-b', 'count', ['.n == 1'])).status).toBe(201);
});
afterAll(async () => t?.close());

describe('custom-type evaluation across organizations', () => {
  it("answers another organization within about one time bound while one floods with looping rules, and refuses the flood's overflow with 429", async () => {
    const flood = Array.from({ length: 5 }, (_, i) => attestCustom(a, 'org-a', 'loop', `loop-${i}`));
    // Let the flood reach the evaluator first.
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const res = await attestCustom(b, 'org-b', 'count', 'count');
    const took = Date.now() - started;
    expect(res.status).toBe(201);
    // About one time bound (plus a worker start on a busy machine); in one first-come queue it
    // would wait for all five looping evaluations.
    expect(took).toBeLessThan(3 * TIMEOUT_MS);
    const got = (await b.get('/api/v2/attestations/org-b/f/trail/t/count')).json[0];
    expect(got.is_compliant).toBe(true);

    const answers = await Promise.all(flood);
    const refused = answers.filter((r) => r.status === 429);
    // One running and two waiting; the rest are refused.
    expect(refused).toHaveLength(2);
    expect(refused[0]!.headers['retry-after']).toBe('2');
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    // The five arrive in no fixed order, so read back one that was accepted.
    const accepted = answers.findIndex((r) => r.status === 201);
    const looped = (await a.get(`/api/v2/attestations/org-a/f/trail/t/loop-${accepted}`)).json[0];
    expect(looped.evaluation.rule_results[0].error).toBe(
      `evaluation exceeded its time bound of ${TIMEOUT_MS} ms`,
    );
  });
});
