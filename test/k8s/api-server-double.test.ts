/**
 * The double serves custom resources as the API server does, seen through the real
 * `@kubernetes/client-node` CustomObjectsApi: generation, the status subresource, both patch
 * formats, no-op writes and finalizers.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiServerDouble, ACTIONS, VERITY_KINDS } from './api-server-double.js';

let double: ApiServerDouble;
let api: CustomObjectsApi;
const ref = { group: 'verity.dev', version: 'v1alpha1', namespace: 'team', plural: 'actions' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const action = (spec: Record<string, unknown> = {}) => ({
  apiVersion: 'verity.dev/v1alpha1',
  kind: 'Action',
  metadata: { name: 'a', namespace: 'team' },
  spec: { type: 'env', triggers: ['ON_STARTED_ARTIFACT'], targets: [], ...spec },
  status: { actionNumber: 99 },
});

beforeEach(async () => {
  double = await new ApiServerDouble().start();
  for (const t of VERITY_KINDS) {
    double.register(t);
  }
  api = double.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterEach(() => double.close());

describe('custom resources in the API server double', () => {
  it('starts generation at 1, drops status on create, and bumps generation only for spec changes', async () => {
    const created = await api.createNamespacedCustomObject({ ...ref, body: action() });
    expect(created.metadata.generation).toBe(1);
    expect(created.status).toBeUndefined();

    const labelled = await api.patchNamespacedCustomObject(
      { ...ref, name: 'a', body: { metadata: { labels: { x: 'y' } }, status: { actionNumber: 5 } } },
      mergePatch,
    );
    expect(labelled.metadata.generation).toBe(1);
    expect(labelled.status).toBeUndefined();

    const edited = await api.patchNamespacedCustomObject({
      ...ref,
      name: 'a',
      body: [{ op: 'replace', path: '/spec/triggers', value: ['ON_EXITED_ARTIFACT'] }],
    });
    expect(edited.metadata.generation).toBe(2);
    expect(edited.spec.triggers).toEqual(['ON_EXITED_ARTIFACT']);
  });

  it('changes only status through /status (JSON patch as the client sends it, and merge patch)', async () => {
    await api.createNamespacedCustomObject({ ...ref, body: action() });
    const patched = await api.patchNamespacedCustomObjectStatus({
      ...ref,
      name: 'a',
      body: [
        { op: 'add', path: '/status', value: { actionNumber: 7 } },
        { op: 'replace', path: '/spec/triggers', value: [] },
      ],
    });
    expect(patched.status).toEqual({ actionNumber: 7 });
    expect(patched.spec.triggers).toEqual(['ON_STARTED_ARTIFACT']);
    expect(patched.metadata.generation).toBe(1);
    expect(double.writes.at(-1)).toMatchObject({
      subresource: 'status',
      contentType: 'application/json-patch+json',
      status: 200,
    });

    const merged = await api.patchNamespacedCustomObjectStatus(
      { ...ref, name: 'a', body: { status: { observedGeneration: 1 } } },
      mergePatch,
    );
    expect(merged.status).toEqual({ actionNumber: 7, observedGeneration: 1 });
    expect(double.writes.at(-1)!.contentType).toBe('application/merge-patch+json');
  });

  it('treats a write that changes nothing as a no-op: same resourceVersion, no watch event', async () => {
    await api.createNamespacedCustomObject({ ...ref, body: action() });
    const first = await api.patchNamespacedCustomObjectStatus(
      { ...ref, name: 'a', body: { status: { actionNumber: 1 } } },
      mergePatch,
    );
    const events: string[] = [];
    double.store.on('event', (e) => events.push(e.type));
    const again = await api.patchNamespacedCustomObjectStatus(
      { ...ref, name: 'a', body: { status: { actionNumber: 1 } } },
      mergePatch,
    );
    expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(events).toEqual([]);
  });

  it('refuses a patch whose resourceVersion is stale with 409', async () => {
    await api.createNamespacedCustomObject({ ...ref, body: action() });
    await expect(
      api.patchNamespacedCustomObject(
        { ...ref, name: 'a', body: { metadata: { resourceVersion: '1', finalizers: ['f'] } } },
        mergePatch,
      ),
    ).rejects.toMatchObject({ code: 409 });
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    await api.createNamespacedCustomObject({
      ...ref,
      body: { ...action(), metadata: { name: 'a', namespace: 'team', finalizers: ['verity.dev/finalizer'] } },
    });
    const events: string[] = [];
    double.store.on('event', (e) => events.push(e.type));
    await api.deleteNamespacedCustomObject({ ...ref, name: 'a' });
    const marked = double.store.get(ACTIONS, 'team', 'a')!;
    expect(marked.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(events).toEqual(['MODIFIED']);

    await expect(
      api.patchNamespacedCustomObject(
        { ...ref, name: 'a', body: { metadata: { finalizers: ['verity.dev/finalizer', 'other'] } } },
        mergePatch,
      ),
    ).rejects.toMatchObject({ code: 422 });

    await api.patchNamespacedCustomObject({
      ...ref,
      name: 'a',
      body: [{ op: 'remove', path: '/metadata/finalizers/0' }],
    });
    expect(double.store.get(ACTIONS, 'team', 'a')).toBeUndefined();
    expect(events).toEqual(['MODIFIED', 'DELETED']);
  });
});
