/**
 * A tenant's regular expression cannot stall the API process: a policy exception
 * `matches(artifact.name, "^(a+)+$")` (exponential in a backtracking engine) meets reported
 * image names of `"a" * n + "!"` up to the 2,048-character limit, on a real server over HTTP,
 * and the report and a concurrent `/healthz` both answer. Run as a separate process so a
 * stalled event loop fails this test by its deadline instead of freezing the test runner.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { fp, POLICY_SCHEMA } from '../helpers/runtime.js';

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const MAIN = join(process.cwd(), 'services', 'api', 'src', 'main.ts');
/** Generous: a linear engine answers in milliseconds, a backtracking one takes hours. */
const DEADLINE_MS = 5_000;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe.skipIf(onPostgres)('a policy regular expression on a running server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-redos-'));
  let child: ReturnType<typeof spawn> | undefined;
  let base = '';
  let adminKey = '';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(TSX, [MAIN], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        VERITY_DATA_DIR: dir,
        DATABASE_URL: '',
        LOG_LEVEL: 'info',
        VERITY_RATE_LIMIT_PER_MINUTE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the server tsx starts under it is killed with it.
      detached: true,
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 60_000;
    // The key is printed after the server listens, in its own write: wait for the key itself.
    while (!/API key: +vty_\S+\s/.test(out) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 100));
    }
    adminKey = /API key: +(vty_\S+)/.exec(out)?.[1] ?? '';
    expect(adminKey, out).not.toBe('');
  }, 90_000);

  afterAll(() => {
    // SIGKILL: a process stuck in a regular expression never handles SIGTERM.
    if (child?.pid) {
      process.kill(-child.pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, key: string, body?: unknown, contentType?: string) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': contentType ?? 'application/json' } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(DEADLINE_MS),
    });
    const text = await res.text();
    return { status: res.status, text };
  };

  it('answers the report and other requests promptly', { timeout: 60_000 }, async () => {
    const boundary = 'verity-redos';
    const payload = JSON.stringify({ name: 'redos', description: '', comment: '', type: 'env' });
    const policy =
      `${POLICY_SCHEMA}artifacts:\n  provenance:\n    required: true\n    exceptions:\n` +
      `      - if: \${{ matches(artifact.name, "^(a+)+$") }}\n`;
    const multipart =
      `--${boundary}\r\nContent-Disposition: form-data; name="payload"\r\n\r\n${payload}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="policy_file"; filename="p.yml"\r\n\r\n${policy}\r\n` +
      `--${boundary}--\r\n`;
    const org = '/default';
    expect(
      (
        await call(
          'PUT',
          `/api/v2/policies${org}`,
          adminKey,
          multipart,
          `multipart/form-data; boundary=${boundary}`,
        )
      ).status,
    ).toBe(201);
    expect(
      (await call('PUT', `/api/v2/environments${org}`, adminKey, { name: 'prod', type: 'K8S' })).status,
    ).toBe(201);
    expect(
      (await call('POST', `/api/v2/environments${org}/prod/policies`, adminKey, { policy_names: ['redos'] }))
        .status,
    ).toBe(200);
    expect(
      (
        await call('POST', `/api/v2/service-accounts${org}`, adminKey, {
          name: 'snap',
          privilege: 'snapshotter',
        })
      ).status,
    ).toBe(201);
    const created = await call('POST', `/api/v2/service-accounts${org}/snap/api-keys`, adminKey, {
      description: 'reporter',
    });
    const snapshotter = (JSON.parse(created.text) as { key: string }).key;

    const lengths = [40, 64, 512, 2047];
    const report = {
      artifacts: lengths.map((n, i) => ({
        podName: `pod-${i}`,
        namespace: 'prod',
        creationTimestamp: 1_700_000_000,
        digests: { [`${'a'.repeat(n)}!`]: fp(String(i + 1)) },
      })),
    };
    const [reported, health] = await Promise.all([
      call('PUT', `/api/v2/environments${org}/prod/report/K8S`, snapshotter, report),
      new Promise((r) => setTimeout(r, 50)).then(() =>
        fetch(`${base}/healthz`, { signal: AbortSignal.timeout(DEADLINE_MS) }),
      ),
    ]);
    expect(reported.status, reported.text).toBe(200);
    expect(health.status).toBe(200);

    // The exception did not apply to any name (each ends in '!'), so every artifact needs provenance.
    const latest = await call('GET', `/api/v2/snapshots${org}/prod/-1`, adminKey);
    const snapshot = JSON.parse(latest.text) as { compliant: boolean; artifacts: unknown[] };
    expect(snapshot.artifacts).toHaveLength(lengths.length);
    expect(snapshot.compliant).toBe(false);
  });
});
