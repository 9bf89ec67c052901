/**
 * The reporter end to end: the real client-node informers against the API server double over
 * HTTP, reports delivered to a recording receiver that validates them with the K8sReport schema.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnvironmentsFile } from '../../services/reporter/src/config.js';
import type { ApiServerDouble } from './api-server-double.js';
import { digestsOf, environment, KEY, startScenario, type Scenario } from './harness.js';
import { deploymentPods, digestOf, makePod } from './pods.js';

const WEB1 = 'ghcr.io/acme/web:1';
const WEB2 = 'ghcr.io/acme/web:2';
const WEB3 = 'ghcr.io/acme/web:3';
const API = 'ghcr.io/acme/api:7';

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

function cluster(double: ApiServerDouble) {
  for (const p of deploymentPods('prod', 'web', WEB1, 3)) {
    double.putPod(p);
  }
  for (const p of deploymentPods('prod', 'api', API, 2)) {
    double.putPod(p);
  }
}

/** A Deployment rollout done at once: the new ReplicaSet's pods run, the old ones are gone. */
function rollout(double: ApiServerDouble, from: string, to: string, replicas = 3) {
  for (const p of deploymentPods('prod', 'web', from, replicas)) {
    double.deletePod('prod', p.metadata.name);
  }
  for (const p of deploymentPods('prod', 'web', to, replicas)) {
    double.putPod(p);
  }
}

const prodOnly = () => [environment('prod', { namespaces: ['prod'] })];

describe('the reporter against the API server double', () => {
  it('sends the first report after the first full list, and is ready only then', async () => {
    s = await startScenario({
      environments: prodOnly(),
      setup: (d) => {
        cluster(d);
        d.putPod(makePod({ namespace: 'prod', name: 'starting', phase: 'Pending' }));
        d.putPod(makePod({ namespace: 'other', name: 'elsewhere' }));
      },
    });
    expect(s.reporter.ready).toBe(true);
    const [first] = s.receiver.reports('prod');
    expect(first!.body.artifacts.map((a) => a.podName)).toEqual([
      ...deploymentPods('prod', 'api', API, 2).map((p) => p.metadata.name),
      ...deploymentPods('prod', 'web', WEB1, 3).map((p) => p.metadata.name),
    ]);
    expect(first!.body.artifacts[0]).toEqual({
      podName: deploymentPods('prod', 'api', API, 2)[0]!.metadata.name,
      namespace: 'prod',
      digests: { [API]: digestOf(API) },
      creationTimestamp: Date.parse('2026-11-01T12:00:00Z') / 1000,
      owners: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `api-${digestOf(API).slice(0, 10)}`,
          uid: digestOf(`api-${digestOf(API).slice(0, 10)}`).slice(0, 32),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(s.receiver.reportRequests()[0]!.authorization).toBe(`Bearer ${KEY}`);
  });

  it('sends one PUT with the new digest on a rollout, and none for scaling or restarts', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    const { double, receiver } = s;

    const accepted = s.delivered((d) => d.result === 'accepted');
    rollout(double, WEB1, WEB2);
    expect(await accepted).toMatchObject({ environment: 'prod', reason: 'change' });
    expect(receiver.reports()).toHaveLength(2);
    const digests = digestsOf(receiver.reports()[1]!.body);
    expect(digests).toContain(`${WEB2}@${digestOf(WEB2)}`);
    expect(digests).not.toContain(`${WEB1}@${digestOf(WEB1)}`);

    // Scale 3 -> 5: two more pods of the same ReplicaSet.
    const scaled = s.evaluated((e) => e.pods === 7);
    for (const p of deploymentPods('prod', 'web', WEB2, 5).slice(3)) {
      double.putPod(p);
    }
    expect(await scaled).toMatchObject({ decision: 'unchanged' });

    // A container restart: the pod object changes, its image and digest do not.
    const restarted = s.evaluated();
    const pod = deploymentPods('prod', 'web', WEB2, 1)[0]!;
    pod.status.containerStatuses[0].restartCount = 3;
    double.putPod(pod);
    expect(await restarted).toMatchObject({ decision: 'unchanged', pods: 7 });

    // Scale 5 -> 2.
    const down = s.evaluated((e) => e.pods === 4);
    for (const p of deploymentPods('prod', 'web', WEB2, 5).slice(2)) {
      double.deletePod('prod', p.metadata.name);
    }
    expect(await down).toMatchObject({ decision: 'unchanged' });
    expect(receiver.reportRequests()).toHaveLength(2);
    // What a scrape of /metrics shows.
    const scraped = await s.reporter.metrics.registry.metrics();
    expect(scraped).toContain(
      'verity_reporter_skipped_reports_total{environment="prod",reason="unchanged"} 3\n',
    );
  });

  it('leaves out a pod whose image id is not known yet, reports the rest, and adds it once known', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    const waiting = makePod({
      namespace: 'prod',
      name: 'worker-0',
      containers: [{ image: 'ghcr.io/acme/worker:1', digest: null }],
      owner: { kind: 'StatefulSet', name: 'worker' },
    });
    const seen = s.evaluated((e) => e.leftOut === 1);
    s.double.putPod(waiting);
    expect(await seen).toMatchObject({ decision: 'unchanged', pods: 5 });
    expect(
      await s.reporter.metrics.registry.getSingleMetricAsString('verity_reporter_pods_left_out'),
    ).toContain('verity_reporter_pods_left_out{environment="prod"} 1');

    const accepted = s.delivered((d) => d.result === 'accepted');
    s.double.putPod(
      makePod({
        namespace: 'prod',
        name: 'worker-0',
        image: 'ghcr.io/acme/worker:1',
        owner: { kind: 'StatefulSet', name: 'worker' },
      }),
    );
    await accepted;
    const last = s.receiver.reports().at(-1)!.body;
    expect(last.artifacts.map((a) => a.podName)).toContain('worker-0');
    expect(last.artifacts).toHaveLength(6);
  });

  it('relists after a dropped watch and 410 Gone, and misses no change', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    const { double, receiver } = s;
    await double.waitForWatches(1);
    const listsBefore = double.counts.list;

    double.dropWatches();
    rollout(double, WEB1, WEB2);
    double.expireHistory();

    await s.delivered((d) => d.result === 'accepted');
    expect(double.counts.expired).toBeGreaterThanOrEqual(1);
    expect(double.counts.list).toBe(listsBefore + 1);
    expect(digestsOf(receiver.reports().at(-1)!.body)).toEqual(
      [`${API}@${digestOf(API)}`, `${WEB2}@${digestOf(WEB2)}`].sort(),
    );
    const restarts = await s.reporter.metrics.registry.getSingleMetricAsString(
      'verity_reporter_watch_restarts_total',
    );
    expect(restarts).toMatch(/verity_reporter_watch_restarts_total\{scope="prod\|"\} [1-9]/);
  });

  it('keeps only the newest state while the API is down, and sends it once when it is back', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    const { double, receiver } = s;
    await receiver.stop();

    const failed = s.delivered((d) => d.result === 'retried');
    rollout(double, WEB1, WEB2);
    expect(await failed).toMatchObject({ reason: 'change', status: 0 });
    const failedAgain = s.delivered((d) => d.result === 'retried');
    const evaluated = s.evaluated((e) => e.decision === 'change');
    rollout(double, WEB2, WEB3);
    await evaluated;
    await failedAgain;

    const accepted = s.delivered((d) => d.result === 'accepted');
    await receiver.start();
    await accepted;
    await s.reporter.loops[0]!.idle();
    expect(receiver.reports()).toHaveLength(2);
    const digests = digestsOf(receiver.reports()[1]!.body);
    expect(digests).toContain(`${WEB3}@${digestOf(WEB3)}`);
    expect(digests).not.toContain(`${WEB2}@${digestOf(WEB2)}`);
  });

  it('does not retry a 400 nor resend the rejected state on later events, but sends the next change', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    const { double, receiver } = s;
    receiver.respondNext({ status: 400, message: 'Input payload validation failed' });
    const rejected = s.delivered();
    rollout(double, WEB1, WEB2);
    expect(await rejected).toMatchObject({ result: 'rejected', status: 400 });
    expect(s.logs.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({
        environment: 'prod',
        status: 400,
        msg: expect.stringContaining('report rejected'),
      }),
    ]);

    // Restarts after the rejection re-evaluate the same state: skipped, not resent.
    for (let restarts = 1; restarts <= 3; restarts++) {
      const skipped = s.evaluated();
      const pod = deploymentPods('prod', 'web', WEB2, 1)[0]!;
      pod.status.containerStatuses[0].restartCount = restarts;
      double.putPod(pod);
      expect(await skipped).toMatchObject({ decision: 'rejected' });
    }
    expect(receiver.reportRequests()).toHaveLength(2);

    // A new workload is a new state: sent.
    const accepted = s.delivered((d) => d.result === 'accepted');
    double.putPod(makePod({ namespace: 'prod', name: 'debug', image: WEB2, owner: null }));
    await accepted;
    expect(receiver.reportRequests().map((r) => r.status)).toEqual([200, 400, 200]);
    const rejectedCount = await s.reporter.metrics.registry.getSingleMetricAsString(
      'verity_reporter_reports_total',
    );
    expect(rejectedCount).toContain('verity_reporter_reports_total{environment="prod",result="rejected"} 1');
  });

  it('retries 409, 429 and 5xx, then delivers', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster });
    s.receiver.respondNext(503, { status: 429, retryAfter: 0 }, 409);
    const accepted = s.delivered((d) => d.result === 'accepted');
    rollout(s.double, WEB1, WEB2);
    await accepted;
    expect(s.receiver.reportRequests().map((r) => r.status)).toEqual([200, 503, 429, 409, 200]);
    expect(s.logs.filter((l) => l.msg.startsWith('report failed')).map((l) => l.status)).toEqual([
      503, 429, 409,
    ]);
  });

  it('sends the full state on the heartbeat even when nothing changed', async () => {
    s = await startScenario({ environments: prodOnly(), setup: cluster, config: { heartbeatMs: 150 } });
    const beat = await s.delivered((d) => d.result === 'accepted');
    expect(beat.reason).toBe('heartbeat');
    const [first, second] = s.receiver.reports();
    expect(second!.body).toEqual(first!.body);
  });

  it('routes each namespace set of the multi-environment file to its environment', async () => {
    const text = readFileSync(
      join(import.meta.dirname, '..', 'unit', 'fixtures', 'k8s-config', 'valid-multi.yaml'),
      'utf8',
    );
    const { environments } = parseEnvironmentsFile(text);
    const image = (ns: string) => `ghcr.io/acme/${ns}:1`;
    const namespaces = ['prod-ns1', 'prod-ns2', 'staging-a', 'staging-b', 'default', 'kube-system'];
    s = await startScenario({
      environments,
      setup: (d) => {
        for (const ns of namespaces) {
          for (const p of deploymentPods(ns, 'app', image(ns), 1)) {
            d.putPod(p);
          }
        }
      },
    });
    const namespacesOf = (env: string) => [
      ...new Set(s!.receiver.reports(env)[0]!.body.artifacts.map((a) => a.namespace)),
    ];
    expect(namespacesOf('prod-env')).toEqual(['prod-ns1', 'prod-ns2']);
    expect(namespacesOf('staging-env')).toEqual(['staging-a', 'staging-b']);
    expect(namespacesOf('infra-env')).toEqual(['kube-system', 'staging-a', 'staging-b']);
    // prod-env names only literal namespaces, but shares the cluster-wide watch the others need.
    expect(s.double.counts.watch).toBe(1);

    // A rollout in staging-b reaches staging-env and infra-env, not prod-env.
    const staging = s.delivered((d) => d.environment === 'staging-env' && d.result === 'accepted');
    const infra = s.delivered((d) => d.environment === 'infra-env' && d.result === 'accepted');
    for (const p of deploymentPods('staging-b', 'app', image('staging-b'), 1)) {
      s.double.deletePod('staging-b', p.metadata.name);
    }
    for (const p of deploymentPods('staging-b', 'app', 'ghcr.io/acme/staging-b:2', 1)) {
      s.double.putPod(p);
    }
    await Promise.all([staging, infra]);
    expect(s.receiver.reports('prod-env')).toHaveLength(1);
    expect(s.receiver.reports('staging-env')).toHaveLength(2);
  });

  it('watches only the pods of a label selector', async () => {
    s = await startScenario({
      environments: [environment('web-only', { labelSelector: 'app=web' })],
      setup: cluster,
    });
    expect(s.receiver.reports()[0]!.body.artifacts.map((a) => a.podName)).toEqual(
      deploymentPods('prod', 'web', WEB1, 3).map((p) => p.metadata.name),
    );
  });

  it('creates a missing environment (type K8S) before its first report when auto-creation is on', async () => {
    s = await startScenario({
      environments: [environment('fresh'), environment('wrong-type'), environment('grouping')],
      setup: cluster,
      config: { autoCreateEnvironments: true, environmentDescription: 'made by the reporter' },
      knownEnvironments: { 'wrong-type': 'ECS', grouping: 'logical' },
      waitForFirst: false,
    });
    const accepted = s.delivered((d) => d.environment === 'fresh' && d.result === 'accepted');
    const rejected = [
      s.delivered((d) => d.environment === 'wrong-type'),
      s.delivered((d) => d.environment === 'grouping'),
    ];
    s.reporter.start();
    await accepted;
    expect((await Promise.all(rejected)).map((d) => d.result)).toEqual(['rejected', 'rejected']);
    const fresh = s.receiver.received.filter((r) => r.environment === 'fresh');
    expect(fresh.map((r) => `${r.method} ${r.status}`)).toEqual(['GET 404', 'PUT 201', 'PUT 200']);
    expect(fresh[1]!.body).toEqual({ name: 'fresh', type: 'K8S', description: 'made by the reporter' });
    expect(s.receiver.reportRequests('wrong-type')).toEqual([]);
    expect(s.logs.find((l) => l.environment === 'wrong-type' && l.level === 'error')?.err).toBe(
      'environment wrong-type already exists with type ECS, which does not match the snapshot type K8S',
    );
    expect(s.logs.find((l) => l.environment === 'grouping' && l.level === 'error')?.err).toBe(
      'cannot report a snapshot to the logical environment grouping',
    );
  });

  it('does not create environments when auto-creation is off: a 404, logged with a hint', async () => {
    s = await startScenario({
      environments: prodOnly(),
      setup: cluster,
      knownEnvironments: {},
      waitForFirst: false,
    });
    const rejected = s.delivered();
    s.reporter.start();
    expect(await rejected).toMatchObject({ result: 'rejected', status: 404 });
    expect(s.receiver.received.map((r) => r.method)).toEqual(['PUT']);
    expect(s.logs.find((l) => l.level === 'error')?.hint).toContain('VERITY_AUTO_CREATE_ENVIRONMENTS');
  });

  it('reads the key file on every request, so a rotated Secret works without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-key-'));
    const file = join(dir, 'key');
    writeFileSync(file, `${KEY}\n`);
    try {
      s = await startScenario({
        environments: prodOnly(),
        setup: cluster,
        config: { token: { kind: 'file', path: file } },
      });
      writeFileSync(file, 'rotated-key-000000000000000');
      s.receiver.key = 'rotated-key-000000000000000';
      const accepted = s.delivered((d) => d.result === 'accepted');
      rollout(s.double, WEB1, WEB2);
      await accepted;
      expect(s.receiver.reportRequests().map((r) => r.authorization)).toEqual([
        `Bearer ${KEY}`,
        'Bearer rotated-key-000000000000000',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
