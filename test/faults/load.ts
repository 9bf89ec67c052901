/**
 * Write load for fault tests: attestations and K8S reports in a few concurrent loops, each with
 * a name of its own, every answer recorded; and probes of /readyz and /healthz.
 */
import {
  attest,
  call,
  fingerprint,
  report,
  sleep,
  storedAttestations,
  ORG,
  type Answer,
} from './api-process.js';

export interface Load {
  attestations: Array<{ name: string; answer: Answer }>;
  reports: Array<{ n: number; answer: Answer }>;
  probes: Array<{ path: '/readyz' | '/healthz'; answer: Answer }>;
  stop(): Promise<void>;
}

/** Starts `writers` attestation loops and `reporters` report loops against `base()` (it may change). */
export function startLoad(
  base: () => string,
  options: {
    /** Where reports go, when not to `base()`. */
    reportBase?: () => string;
    flow: string;
    env: string;
    writers?: number;
    reporters?: number;
    pauseMs?: number;
    timeoutMs?: number;
  },
): Load {
  const load: Load = { attestations: [], reports: [], probes: [], stop: async () => undefined };
  let running = true;
  let next = 0;
  const pause = options.pauseMs ?? 30;
  const loops: Array<Promise<void>> = [];
  for (let w = 0; w < (options.writers ?? 3); w++) {
    loops.push(
      (async () => {
        while (running) {
          const name = `a${next++}`;
          load.attestations.push({
            name,
            answer: await attest(base(), options.flow, name, options.timeoutMs),
          });
          await sleep(pause);
        }
      })(),
    );
  }
  for (let r = 0; r < (options.reporters ?? 1); r++) {
    loops.push(
      (async () => {
        while (running) {
          const n = 1 + next++;
          load.reports.push({
            n,
            answer: await report((options.reportBase ?? base)(), options.env, n, options.timeoutMs),
          });
          await sleep(pause);
        }
      })(),
    );
  }
  loops.push(
    (async () => {
      while (running) {
        for (const path of ['/readyz', '/healthz'] as const) {
          load.probes.push({ path, answer: await call(base(), 'GET', path, undefined, options.timeoutMs) });
        }
        await sleep(200);
      }
    })(),
  );
  load.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return load;
}

/** Every answer of the load. */
export const answers = (load: Load): Answer[] => [
  ...load.attestations.map((a) => a.answer),
  ...load.reports.map((r) => r.answer),
];

/** Acknowledged writes that cannot be read back: attestation names and report numbers. */
export async function lostWrites(base: string, load: Load, flow: string, env: string): Promise<string[]> {
  const lost: string[] = [];
  const stored = await storedAttestations(base, flow);
  for (const { name, answer } of load.attestations) {
    if (answer.status === 201 && !stored.has(name)) {
      lost.push(`attestation ${name}`);
    }
  }
  for (const { n, answer } of load.reports) {
    if (answer.status !== 200) {
      continue;
    }
    const index = /#(\d+)/.exec(String(answer.json))?.[1];
    if (!index) {
      lost.push(`report ${n}: answer ${JSON.stringify(answer.json)}`);
      continue;
    }
    const snap = await call(base, 'GET', `/api/v2/snapshots/${ORG}/${env}/${index}`);
    const running = (snap.json?.artifacts ?? []) as Array<{
      fingerprint: string;
      annotation: { now: number };
    }>;
    if (!running.some((a) => a.fingerprint === fingerprint(n) && a.annotation.now > 0)) {
      lost.push(`report ${n} (snapshot #${index})`);
    }
  }
  return lost;
}

/** Time from `since` to the first success of the load at or after it (ms), or undefined. */
export function recoveredAfter(load: Load, since: number): number | undefined {
  const ok = answers(load)
    .filter((a) => a.at >= since && (a.status === 200 || a.status === 201))
    .map((a) => a.at + a.ms);
  return ok.length > 0 ? Math.min(...ok) - since : undefined;
}

/** Waits until a write issued after `since` succeeded, for at most `ms`. */
export async function untilRecovered(load: Load, since: number, ms: number): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const r = recoveredAfter(load, since);
    if (r !== undefined) {
      return r;
    }
    await sleep(100);
  }
  return undefined;
}
