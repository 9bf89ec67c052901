/**
 * The reporter process as `npm run reporter` starts it: bad configuration exits 1 listing every
 * problem; a good one reads KUBECONFIG, reports, serves /healthz /readyz /metrics, and exits 0
 * on SIGTERM.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiServerDouble } from './api-server-double.js';
import { KEY } from './harness.js';
import { deploymentPods } from './pods.js';
import { RecordingReceiver } from './receiver.js';
import { nextEvent } from './wait.js';

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const MAIN = join(process.cwd(), 'services', 'reporter', 'src', 'main.ts');
const dir = mkdtempSync(join(tmpdir(), 'verity-reporter-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resolves with the first JSON log line whose msg is `msg`. */
function logLine(child: ChildProcessWithoutNullStreams, msg: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer) => {
      buffer += d.toString();
      for (const line of buffer.split('\n')) {
        try {
          const entry = JSON.parse(line) as Record<string, any>;
          if (entry.msg === msg) {
            child.stdout.off('data', onData);
            return resolve(entry);
          }
        } catch {
          // a partial line
        }
      }
    };
    child.stdout.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited ${code} before '${msg}': ${buffer}`)));
  });
}

describe('the reporter process', () => {
  it('exits 1 at once listing every configuration problem', () => {
    const result = spawnSync(TSX, [MAIN], {
      env: {
        PATH: process.env.PATH,
        VERITY_API_URL: 'verity',
        VERITY_REPORTER_CONFIG: join(
          process.cwd(),
          'test',
          'unit',
          'fixtures',
          'k8s-config',
          'conflicting-filters.yaml',
        ),
        VERITY_REPORTER_PORT: '99999',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(lines.map((l) => l.slice(4).split(':')[0])).toEqual([
      'VERITY_API_URL',
      'VERITY_ORG',
      'VERITY_API_TOKEN',
      expect.stringContaining('conflicting-filters.yaml'),
      'VERITY_REPORTER_PORT',
    ]);
    expect(result.stderr).toContain(
      "environments[0] ('bad-env'): excludeNamespaces: cannot be combined with namespaces",
    );
  }, 60_000);

  it('reports, answers /healthz /readyz /metrics, and exits 0 on SIGTERM', async () => {
    const double = await new ApiServerDouble().start();
    for (const p of deploymentPods('prod', 'web', 'ghcr.io/acme/web:1', 2)) {
      double.putPod(p);
    }
    // Lists fail until the test has seen the process not ready.
    double.failNext('list', 500, 1_000_000);
    const receiver = await new RecordingReceiver('acme', KEY).start();
    receiver.environments.set('prod', 'K8S');
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, double.kubeconfigYaml());
    const child = spawn(TSX, [MAIN], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: kubeconfig,
        VERITY_API_URL: receiver.url,
        VERITY_ORG: 'acme',
        VERITY_API_TOKEN: KEY,
        VERITY_ENVIRONMENT: 'prod',
        VERITY_NAMESPACES: 'prod',
        VERITY_REPORTER_PORT: '0',
        VERITY_REPORTER_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      const listening = await logLine(child, 'ops server listening');
      const ops = `http://127.0.0.1:${listening.port}`;
      expect((await fetch(`${ops}/healthz`)).status).toBe(200);
      // The first list failed: not ready until the restarted informer lists.
      const notReady = await fetch(`${ops}/readyz`);
      expect([notReady.status, await notReady.text()]).toEqual([503, 'not ready: pods not listed yet\n']);
      double.clearFailures();

      await nextEvent(receiver, 'request', (r) => r.status === 200, 30_000);
      expect((await fetch(`${ops}/readyz`)).status).toBe(200);
      expect(receiver.reports('prod')[0]!.body.artifacts).toHaveLength(2);
      const metrics = await (await fetch(`${ops}/metrics`)).text();
      expect(metrics).toContain('verity_reporter_reports_total{environment="prod",result="accepted"} 1');
      expect(metrics).toContain('verity_reporter_pods_watched 2');
      expect(metrics).toMatch(/verity_reporter_watch_restarts_total\{scope="prod\|"\} [1-9]\d*\n/);
      expect(metrics).toMatch(/verity_reporter_seconds_since_last_accepted_report\{environment="prod"\} \d/);
      expect(metrics).toContain('process_resident_memory_bytes');

      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await receiver.stop();
      await double.close();
    }
  }, 60_000);
});
