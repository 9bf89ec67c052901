/**
 * A delivery history whose answers are worked out by hand (test/integration/deployments.test.ts
 * and dora.test.ts check them): built with `kosli attest artifact` requests and K8S reports as the
 * CLI sends them, on the app clock. Hours from T, the clock's start (Sunday 2026-11-01 12:00 UTC):
 *  T     A1 built from C1 (committed at T-2h)
 *  T+1   A1 starts in prod (2 pods): deployment prod#1, the first
 *  T+2   A1 scaled to 3 pods: no snapshot, no deployment
 *  T+3   A2 (C2, T+2h; never deployed) and A3 (C3, T+2.5h) built
 *  T+3.5 A3 starts in staging: deployment staging#1 (no policies: compliance unknown)
 *  T+4   A3 replaces A1 in prod: deployment prod#2, bringing C2 and C3
 *  T+5   X, an image nobody reported, starts in prod: deployment prod#3, prod non-compliant
 *  T+6   X gone: prod compliant again (restored after 1 h)
 *  T+7   A1 back in place of A3: deployment prod#5, a rollback (A3's deployment failed)
 *  T+8   prod scaled to nothing; T+9 A1 back alone: a restart, no deployment
 */
import { expect } from 'vitest';
import { createTestApp, type TestApp } from './app.js';
import { cliClient } from './cli.js';
import { deployment, fp, POLICY_SCHEMA, putPolicy } from './runtime.js';

export const ORG = 'acme';
export const OTHER = 'globex';
export const FLOW = 'shop';
export const REPO = 'acme/shop';
export const A1 = fp('a1');
export const A2 = fp('a2');
export const A3 = fp('a3');
export const X = fp('e9');
export const sha = (c: string): string => c.repeat(40).slice(0, 40);
export const C1 = sha('c1');
export const C2 = sha('c2');
export const C3 = sha('c3');

type Cli = ReturnType<typeof cliClient>;

export interface DeliveryHistory {
  t: TestApp;
  cli: Cli;
  reader: Cli;
  other: Cli;
  /** Epoch seconds `hours` after T. */
  at: (hours: number) => number;
  advanceTo: (hours: number) => void;
  attestArtifact: (
    fingerprint: string,
    commit: string,
    commitAt: number,
    trail: string,
    image: string,
  ) => Promise<void>;
  report: (env: string, artifacts: unknown[], expected: string | null) => Promise<void>;
  shop: (tag: string, fingerprint: string, replicas: number) => unknown[];
}

/** The app (with `env` added to its configuration) with the history above recorded. */
export async function deliveryHistory(env: Record<string, string> = {}): Promise<DeliveryHistory> {
  const t = await createTestApp({ env });
  const T = t.clock.seconds();
  const cli = cliClient(t.app, await t.seedKey(ORG, 'admin'));
  const reader = cliClient(t.app, await t.seedKey(ORG, 'reader'));
  const other = cliClient(t.app, await t.seedKey(OTHER, 'admin'));
  const at = (hours: number) => T + hours * 3600;
  const h: DeliveryHistory = {
    t,
    cli,
    reader,
    other,
    at,
    advanceTo: (hours) => t.clock.advance(at(hours) * 1000 - t.clock.now().getTime()),
    attestArtifact: async (fingerprint, commit, commitAt, trail, image) => {
      const r = await cli.json('POST', `/api/v2/artifacts/${ORG}/${FLOW}`, {
        fingerprint,
        filename: image,
        git_commit: commit,
        git_commit_info: {
          sha1: commit,
          message: `change ${commit.slice(0, 2)}\n\nbody`,
          author: 'Dev <dev@example.com>',
          branch: 'main',
          timestamp: commitAt,
        },
        repo_info: { name: REPO, url: 'https://github.com/acme/shop', id: '42', provider: 'github' },
        build_url: 'https://ci.example/1',
        commit_url: `https://github.com/acme/shop/commit/${commit}`,
        repo_url: 'https://github.com/acme/shop',
        template_reference_name: 'shop',
        trail_name: trail,
      });
      expect(r.status, r.body).toBe(201);
    },
    report: async (env, artifacts, expected) => {
      const r = await cli.json('PUT', `/api/v2/environments/${ORG}/${env}/report/K8S`, { artifacts });
      expect(r.status, r.body).toBe(200);
      if (expected !== null) {
        expect(r.json).toBe(expected);
      }
    },
    shop: (tag, f, replicas) => deployment('shop', `registry.example/shop:${tag}`, f, replicas),
  };
  for (const env of ['prod', 'staging']) {
    const r = await cli.json('PUT', `/api/v2/environments/${ORG}`, {
      name: env,
      type: 'K8S',
      description: '',
    });
    expect(r.status, r.body).toBe(201);
  }
  const policy = await putPolicy(
    t.app,
    await t.seedKey(ORG, 'admin'),
    ORG,
    'prov',
    `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n`,
  );
  expect(policy.status).toBe(201);
  const attach = await cli.json('POST', `/api/v2/environments/${ORG}/prod/policies`, {
    policy_names: ['prov'],
  });
  expect(attach.status).toBe(200);

  const { advanceTo, attestArtifact, report, shop } = h;
  await attestArtifact(A1, C1, at(-2), 'b1', 'registry.example/shop:1');
  advanceTo(1);
  await report('prod', shop('1', A1, 2), 'Snapshot #1 created');
  advanceTo(2);
  await report('prod', shop('1', A1, 3), null);
  advanceTo(3);
  await attestArtifact(A2, C2, at(2), 'b2', 'registry.example/shop:2');
  await attestArtifact(A3, C3, at(2.5), 'b3', 'registry.example/shop:3');
  advanceTo(3.5);
  await report('staging', shop('3', A3, 1), 'Snapshot #1 created');
  advanceTo(4);
  await report('prod', shop('3', A3, 3), 'Snapshot #2 created');
  advanceTo(5);
  await report(
    'prod',
    [...shop('3', A3, 3), ...deployment('debug', 'registry.example/debug:1', X, 1)],
    'Snapshot #3 created',
  );
  advanceTo(6);
  await report('prod', shop('3', A3, 3), 'Snapshot #4 created');
  advanceTo(7);
  await report('prod', shop('1', A1, 3), 'Snapshot #5 created');
  advanceTo(8);
  await report('prod', [], 'Snapshot #6 created');
  advanceTo(9);
  await report('prod', shop('1', A1, 2), 'Snapshot #7 created');
  return h;
}
