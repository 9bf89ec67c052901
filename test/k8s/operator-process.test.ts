/**
 * The operator process as `npm run operator` starts it: bad configuration exits 1 listing every
 * problem; a good one reads KUBECONFIG and the key file, reconciles, serves /healthz /readyz
 * /metrics, and exits 0 on SIGTERM.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client, createTestApp } from '../helpers/app.js';
import { ApiServerDouble, POLICIES, VERITY_KINDS } from './api-server-double.js';

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const MAIN = join(process.cwd(), 'services', 'operator', 'src', 'main.ts');
const dir = mkdtempSync(join(tmpdir(), 'verity-operator-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the operator process', () => {
  it('exits 1 at once listing every configuration problem', () => {
    const result = spawnSync(TSX, [MAIN], {
      env: {
        PATH: process.env.PATH,
        VERITY_API_URL: 'verity',
        VERITY_API_TOKEN_FILE: join(dir, 'missing-token'),
        VERITY_OPERATOR_PORT: '99999',
        VERITY_REQUEUE_INTERVAL_SECONDS: 'soon',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(lines.map((l) => l.slice(4).split(':')[0])).toEqual([
      'VERITY_API_URL',
      'VERITY_ORG',
      'VERITY_REQUEUE_INTERVAL_SECONDS',
      'VERITY_OPERATOR_PORT',
      'VERITY_API_TOKEN_FILE',
    ]);
  }, 60_000);

  it('reconciles, answers /healthz /readyz /metrics, and exits 0 on SIGTERM', async () => {
    const t = await createTestApp();
    const key = await t.seedKey('acme', 'admin');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const double = await new ApiServerDouble().start();
    for (const type of VERITY_KINDS) {
      double.register(type);
    }
    writeFileSync(join(dir, 'kubeconfig'), double.kubeconfigYaml());
    writeFileSync(join(dir, 'token'), `${key}\n`);
    const child = spawn(TSX, [MAIN], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: join(dir, 'kubeconfig'),
        VERITY_API_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
        VERITY_ORG: 'acme',
        VERITY_API_TOKEN_FILE: join(dir, 'token'),
        VERITY_OPERATOR_PORT: '0',
        VERITY_OPERATOR_HOST: '127.0.0.1',
        VERITY_WATCH_NAMESPACES: 'team-a',
        LOG_LEVEL: 'info',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const logs: Array<Record<string, any>> = [];
    const waiters: Array<() => void> = [];
    let buffer = '';
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        try {
          logs.push(JSON.parse(line) as Record<string, any>);
        } catch {
          continue;
        }
        for (const w of waiters.splice(0)) {
          w();
        }
      }
    });
    const logged = (predicate: (e: Record<string, any>) => boolean) =>
      new Promise<Record<string, any>>((resolve, reject) => {
        const check = () => {
          const hit = logs.find(predicate);
          if (hit) {
            return resolve(hit);
          }
          waiters.push(check);
        };
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${JSON.stringify(logs)}`)));
        check();
      });
    try {
      const listening = await logged((e) => e.msg === 'ops server listening');
      const ops = `http://127.0.0.1:${listening.port}`;
      expect((await fetch(`${ops}/healthz`)).status).toBe(200);
      await logged((e) => e.msg === 'resources listed' && e.kind === 'Action');
      await logged(() => logs.filter((x) => x.msg === 'resources listed').length === 3);
      expect((await fetch(`${ops}/readyz`)).status).toBe(200);

      double.store.apply(POLICIES, {
        apiVersion: 'verity.dev/v1alpha1',
        kind: 'Policy',
        metadata: { name: 'baseline', namespace: 'team-a' },
        spec: { content: { _schema: 'https://kosli.com/schemas/policy/environment/v1' } },
      });
      const line = await logged((e) => e.msg === 'reconciled' && e.name === 'baseline');
      expect(line).toMatchObject({ kind: 'Policy', namespace: 'team-a', generation: 1, result: 'success' });
      expect(double.store.get(POLICIES, 'team-a', 'baseline')!.status.policyVersion).toBe(1);
      expect((await client(t.app, key).get('/api/v2/policies/acme/baseline')).status).toBe(200);
      const metrics = await (await fetch(`${ops}/metrics`)).text();
      expect(metrics).toContain('verity_operator_reconcile_total{kind="Policy",result="success"} 1');

      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await double.close();
      await t.close();
    }
  }, 60_000);
});
