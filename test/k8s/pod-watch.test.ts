/**
 * The real @kubernetes/client-node informer (through PodWatch) against the API server double over
 * HTTP: paged lists, watch events, bookmarks, dropped connections, 410 Gone and failed requests.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PodWatch } from '../../services/reporter/src/pod-watch.js';
import { planWatches } from '../../services/reporter/src/watch-plan.js';
import { ApiServerDouble } from './api-server-double.js';
import { deploymentPods, makePod } from './pods.js';
import { nextEvent } from './wait.js';

const quiet = { warn: () => {}, info: () => {} };
let double: ApiServerDouble;
let watch: PodWatch | undefined;

beforeEach(async () => {
  double = await new ApiServerDouble().start();
});
afterEach(async () => {
  await watch?.stop();
  watch = undefined;
  await double.close();
});

function startWatch(scopes = planWatches([env('all')]).scopes) {
  watch = new PodWatch(double.kubeConfig(), scopes, { log: quiet, restartBaseMs: 10, restartMaxMs: 50 });
  const synced = nextEvent(watch, 'synced');
  watch.start();
  return { watch, synced };
}

function env(name: string, extra: Partial<ReturnType<typeof base>> = {}) {
  return { ...base(name), ...extra };
}
function base(name: string) {
  return {
    name,
    namespaces: [] as string[],
    namespacesRegex: [] as string[],
    excludeNamespaces: [] as string[],
    excludeNamespacesRegex: [] as string[],
    labelSelector: undefined as string | undefined,
  };
}

const names = (w: PodWatch, scope: string) =>
  w
    .pods(scope)
    .map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`)
    .sort();

describe('PodWatch against the API server double', () => {
  it('lists page by page, syncs, then follows adds, updates and deletes from the watch', async () => {
    for (let i = 0; i < 1200; i++) {
      double.putPod(makePod({ namespace: `ns-${i % 7}`, name: `p-${i}` }));
    }
    const { watch, synced } = startWatch();
    const [scope] = await synced;
    expect(watch.synced).toBe(true);
    expect(watch.size).toBe(1200);
    expect(double.counts.list).toBe(3); // 500 + 500 + 200
    await double.waitForWatches(1);

    const added = nextEvent(watch, 'change', (ns) => ns === 'fresh');
    double.putPod(makePod({ namespace: 'fresh', name: 'new', image: 'acme/new:1' }));
    await added;
    expect(watch.pods(scope).find((p) => p.metadata!.name === 'new')).toMatchObject({
      metadata: { namespace: 'fresh', creationTimestamp: new Date('2026-11-01T12:00:00Z') },
      status: { phase: 'Running', containerStatuses: [{ image: 'acme/new:1' }] },
    });
    // Only the fields a report reads are cached.
    expect(Object.keys(watch.pods(scope)[0]!)).toEqual(['metadata', 'status']);

    const deleted = nextEvent(watch, 'change', (ns) => ns === 'fresh');
    double.deletePod('fresh', 'new');
    await deleted;
    expect(watch.size).toBe(1200);
  });

  it('watches literal namespaces one by one and applies label selectors on the server', async () => {
    double.putPod(makePod({ namespace: 'a', name: 'web', labels: { app: 'web' } }));
    double.putPod(makePod({ namespace: 'a', name: 'db', labels: { app: 'db' } }));
    double.putPod(makePod({ namespace: 'b', name: 'web', labels: { app: 'web' } }));
    double.putPod(makePod({ namespace: 'c', name: 'web', labels: { app: 'web' } }));
    const plan = planWatches([env('e', { namespaces: ['a', 'b'], labelSelector: 'app=web' })]);
    expect(plan.scopes.map((s) => s.key)).toEqual(['a|app=web', 'b|app=web']);
    const { watch } = startWatch(plan.scopes);
    await nextEvent(watch, 'synced', () => watch.synced);
    expect([...names(watch, 'a|app=web'), ...names(watch, 'b|app=web')]).toEqual(['a/web', 'b/web']);
    await double.waitForWatches(2);

    // A label change moves a pod out of the selection: the watch sees it deleted.
    const gone = nextEvent(watch, 'change', (ns) => ns === 'a');
    double.putPod(makePod({ namespace: 'a', name: 'web', labels: { app: 'other' } }));
    await gone;
    expect(names(watch, 'a|app=web')).toEqual([]);
  });

  it('resumes after a dropped connection without a relist, bookmarks keeping its place', async () => {
    double.putPod(makePod({ namespace: 'a', name: 'p0' }));
    const { watch, synced } = startWatch();
    const [scope] = await synced;
    await double.waitForWatches(1);
    double.sendBookmarks();
    expect(double.counts.bookmarks).toBe(1);
    const lists = double.counts.list;

    double.dropWatches();
    // A change while no watch is open arrives once the watch resumes from its resourceVersion.
    double.putPod(makePod({ namespace: 'a', name: 'p1' }));
    await nextEvent(watch, 'change', () => names(watch, scope).includes('a/p1'));
    expect(double.counts.list).toBe(lists);
  });

  it('relists after 410 Gone and misses no change: deletes and adds of the gap both arrive', async () => {
    for (const p of deploymentPods('prod', 'web', 'acme/web:1', 3)) {
      double.putPod(p);
    }
    const { watch, synced } = startWatch();
    const [scope] = await synced;
    await double.waitForWatches(1);

    double.dropWatches();
    for (const p of deploymentPods('prod', 'web', 'acme/web:1', 3)) {
      double.deletePod('prod', p.metadata.name);
    }
    for (const p of deploymentPods('prod', 'web', 'acme/web:2', 2)) {
      double.putPod(p);
    }
    double.expireHistory();

    await nextEvent(watch, 'change', () => names(watch, scope).length === 2 && double.counts.expired > 0);
    expect(names(watch, scope)).toEqual(
      deploymentPods('prod', 'web', 'acme/web:2', 2).map((p) => `prod/${p.metadata.name}`),
    );
    expect(double.counts.list).toBe(2);
  });

  it('restarts itself after failed lists and watches', async () => {
    double.failNext('list', 500, 2);
    double.putPod(makePod({ namespace: 'a', name: 'p0' }));
    const { watch, synced } = startWatch();
    const restarts: string[] = [];
    watch.on('restart', (_scope, error) => restarts.push(error));
    await synced;
    expect(restarts).toHaveLength(2);

    await double.waitForWatches(1);
    double.failNext('watch', 503, 1);
    double.dropWatches();
    await nextEvent(watch, 'restart');
    await double.waitForWatches(1);
    const seen = nextEvent(watch, 'change', (ns) => ns === 'late');
    double.putPod(makePod({ namespace: 'late', name: 'p' }));
    await seen;
  });
});
