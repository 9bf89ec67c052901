/**
 * The environments' history: what runs where, reported as `kosli snapshot k8s` does, with every
 * build rolled out to dev (and the build whose tests failed rolled back there), some promoted to
 * staging and prod, redis appearing without provenance, and the reporter's beats in between.
 */
import { recordBuild } from './builds.js';
import { REDIS, type Build } from './plan.js';
import { DAY, HOUR, MINUTE, seconds, sha, type Wire } from './wire.js';

interface Running {
  image: string;
  fingerprint: string;
  replicas: number;
  since: number;
  name: string;
  namespace: string;
}

const REPLICAS: Record<string, number> = { dev: 1, staging: 2, prod: 3 };

/** The three K8S environments' workloads, and the snapshots their reports made. */
export class DemoRuntime {
  readonly state: Record<string, Map<string, Running>> = {
    dev: new Map(),
    staging: new Map(),
    prod: new Map(),
  };
  readonly snapshots: Record<string, number> = { dev: 0, staging: 0, prod: 0 };

  constructor(private readonly w: Wire) {}

  /** Reports what runs in `env` now: one pod per replica. */
  async report(env: string): Promise<void> {
    const artifacts = [...this.state[env]!.values()].flatMap((r) =>
      Array.from({ length: r.replicas }, (_, i) => ({
        podName: `${r.name}-${r.fingerprint.slice(0, 10)}-${sha(env, r.fingerprint, i).slice(0, 5)}`,
        namespace: r.namespace,
        digests: { [r.image]: r.fingerprint },
        creationTimestamp: seconds(r.since) + i,
        owners: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: `${r.name}-${r.fingerprint.slice(0, 10)}`,
            uid: sha('uid', env, r.fingerprint).replace(
              /^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/,
              '$1-$2-$3-$4-$5',
            ),
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      })),
    );
    const answer = await this.w.json('PUT', `/environments/${this.w.org}/${env}/report/K8S`, { artifacts });
    if (typeof answer === 'string' && /created/i.test(answer)) {
      this.snapshots[env]! += 1;
    }
  }

  /** Deploys a build to `env` at `when`: a rolling update when an older one runs. */
  async rollOut(env: string, b: Build, when: number): Promise<void> {
    const key = b.service.templateName;
    const next: Running = {
      image: `${b.service.image}:${b.version}`,
      fingerprint: b.fingerprint,
      replicas: REPLICAS[env]!,
      since: when,
      name: key,
      namespace: b.service.namespace,
    };
    const current = this.state[env]!;
    if (current.has(key)) {
      // a rolling update: old and new side by side, then only the new one
      current.set(`${key}@next`, next);
      this.w.at(when);
      await this.report(env);
      current.delete(`${key}@next`);
    }
    current.set(key, next);
    this.w.at(when + 4 * MINUTE);
    await this.report(env);
  }

  /** Starts redis in `env` at `when`. */
  async runRedis(env: string, when: number): Promise<void> {
    this.state[env]!.set('redis', {
      image: REDIS.image,
      fingerprint: REDIS.fingerprint,
      replicas: 1,
      since: when,
      name: 'redis',
      namespace: 'data',
    });
    this.w.at(when);
    await this.report(env);
  }

  /** The reporters' latest beat: nothing changed, only the last report time moves. */
  async beat(when: number): Promise<void> {
    this.w.at(when);
    for (const env of Object.keys(this.state)) {
      await this.report(env);
    }
  }
}

type Step = { at: number; run: () => Promise<void> };

/** Builds and deployments from `start` to `end`, in the order they happened. */
export async function seedHistory(
  w: Wire,
  runtime: DemoRuntime,
  plan: { builds: Build[]; start: number; end: number; days: number },
): Promise<void> {
  const steps = [
    ...buildSteps(w, runtime, plan.builds),
    ...redisSteps(w, runtime, plan),
    ...scalingSteps(w, runtime, plan),
  ];
  steps.sort((a, b) => a.at - b.at);
  for (const step of steps) {
    await step.run();
  }
}

function buildSteps(w: Wire, runtime: DemoRuntime, builds: Build[]): Step[] {
  const steps: Step[] = [];
  const previous = new Map<Build['service'], Build>();
  for (const b of builds) {
    steps.push({ at: b.at, run: () => recordBuild(w, b) });
    steps.push({ at: b.at + HOUR, run: () => runtime.rollOut('dev', b, b.at + HOUR) });
    const before = previous.get(b.service);
    previous.set(b.service, b);
    if (b.failingTests && before) {
      // its tests failed: dev goes back to the build before it, a rollback
      steps.push({ at: b.at + 3 * HOUR, run: () => runtime.rollOut('dev', before, b.at + 3 * HOUR) });
    }
    if (b.promote.staging) {
      steps.push({ at: b.at + 18 * HOUR, run: () => runtime.rollOut('staging', b, b.at + 18 * HOUR) });
    }
    if (b.promote.prod) {
      steps.push({
        at: b.at + 2 * DAY + 5 * HOUR,
        run: () => runtime.rollOut('prod', b, b.at + 2 * DAY + 5 * HOUR),
      });
    }
  }
  return steps;
}

/** Redis runs in dev from the start; in prod someone ran it for two days without provenance. */
function redisSteps(w: Wire, runtime: DemoRuntime, plan: { start: number; days: number }): Step[] {
  const { start, days } = plan;
  const redisProd = start + Math.floor(days * 0.35) * DAY + 15 * HOUR;
  return [
    { at: start + 2 * HOUR, run: () => runtime.runRedis('dev', start + 2 * HOUR) },
    { at: redisProd, run: () => runtime.runRedis('prod', redisProd) },
    {
      at: redisProd + 2 * DAY,
      run: async () => {
        runtime.state.prod!.delete('redis');
        w.at(redisProd + 2 * DAY);
        await runtime.report('prod');
      },
    },
  ];
}

/** The reporter runs every few minutes; scaling alone makes no snapshot. */
function scalingSteps(w: Wire, runtime: DemoRuntime, plan: { start: number; end: number }): Step[] {
  const steps: Step[] = [];
  for (let t = plan.start + 12 * HOUR; t < plan.end; t += 3 * DAY) {
    steps.push({
      at: t,
      run: async () => {
        const web = runtime.state.prod!.get('web');
        if (!web) {
          return;
        }
        web.replicas = web.replicas === 3 ? 5 : 3;
        w.at(t);
        await runtime.report('prod');
      },
    });
  }
  return steps;
}
