/**
 * The runtime writes a report's rows as SQL arrays: names and pod details with the characters an
 * array literal quotes (quotes, backslashes, commas, braces, spaces, the word NULL) come back in
 * snapshots exactly as reported, through a start, a scaling recorded at a snapshot, and an exit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, type TestApp } from '../helpers/app.js';
import { deployment, fp, pod } from '../helpers/runtime.js';
import type { SnapshotArtifact } from '../suite/wire.js';

const ORG = 'acme';
const AWKWARD = 'registry.example/a"b\\c,{d} NULL:1';
const PLAIN = 'registry.example/plain:1';
const NEXT = 'registry.example/next:1';
let t: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp();
  api = client(t.app, await t.seedKey(ORG, 'snapshotter'));
  expect((await api.put(`/api/v2/environments/${ORG}`, { name: 'prod', type: 'K8S' })).status).toBe(201);
});
afterAll(async () => t?.close());

const report = (artifacts: unknown[]) =>
  api.put(`/api/v2/environments/${ORG}/prod/report/K8S`, { artifacts });
const snapshot = async (index: number) =>
  Object.fromEntries(
    (await api.get(`/api/v2/snapshots/${ORG}/prod/${index}`)).json.artifacts.map((a: SnapshotArtifact) => [
      a.fingerprint,
      a,
    ]),
  ) as Record<string, SnapshotArtifact>;

describe('report rows with text an array literal quotes', () => {
  it('start, scale and exit keep every name and pod as reported', async () => {
    const awkwardPod = pod('p"o\\d,{1} NULL', { [AWKWARD]: fp('a') });
    expect((await report([awkwardPod, ...deployment('plain', PLAIN, fp('b'), 1)])).json).toBe(
      'Snapshot #1 created',
    );
    const first = await snapshot(1);
    expect(first[fp('a')]).toMatchObject({ name: AWKWARD, annotation: { type: 'started-unknown', now: 1 } });
    expect(Object.keys(first[fp('a')]!.pods ?? {})).toEqual(['p"o\\d,{1} NULL']);

    // The plain image scales to 3 (recorded at the next snapshot) while a new image starts.
    const second = [
      awkwardPod,
      ...deployment('plain', PLAIN, fp('b'), 3),
      ...deployment('next', NEXT, fp('c'), 1),
    ];
    expect((await report(second)).json).toBe('Snapshot #2 created');
    const two = await snapshot(2);
    expect(two[fp('b')]!.annotation).toEqual({ type: 'unchanged', was: 1, now: 3 });
    expect(two[fp('c')]!.annotation).toMatchObject({ type: 'started-unknown', was: 0, now: 1 });

    // The awkward image exits with the count it last ran with.
    expect((await report(second.slice(1))).json).toBe('Snapshot #3 created');
    const three = await snapshot(3);
    expect(three[fp('a')]).toMatchObject({ name: AWKWARD, annotation: { type: 'exited', was: 1, now: 0 } });
    expect(three[fp('b')]!.annotation).toEqual({ type: 'unchanged', was: 3, now: 3 });
    expect((await report(second.slice(1))).json).toBe('No new snapshots to create');
  });
});
