/**
 * The process the README starts: first start prints an org and an admin key that work at once;
 * a restart prints nothing new; SIGTERM shuts down cleanly; bad configuration exits listing problems.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';

const MAIN = join(process.cwd(), 'services', 'api', 'src', 'main.ts');
// node itself runs main.ts (tsx only as its loader), so a signal reaches the API process directly:
// the `tsx` command relays signals to its child and kills it when it does not answer in 30 ms.
const NODE_ARGS = ['--import', 'tsx', MAIN];
const dir = mkdtempSync(join(tmpdir(), 'verity-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function start(port: number, metricsPort = 0, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, NODE_ARGS, {
    env: {
      ...process.env,
      PORT: String(port),
      VERITY_METRICS_PORT: String(metricsPort),
      HOST: '127.0.0.1',
      VERITY_DATA_DIR: dir,
      DATABASE_URL: '',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  while (!out.includes('metrics listening') && Date.now() < deadline && child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 300));
  /** SIGTERM, sent while the process cannot run for a moment, as on a loaded machine. */
  const stop = async () => {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGSTOP');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGCONT');
    return exited;
  };
  return { output: () => out, stop };
}

describe.skipIf(onPostgres)('the API process', () => {
  it('prints a working admin key on first start only, and exits cleanly on SIGTERM', async () => {
    const port = await freePort();
    const first = await start(port);
    const key = /API key: +(vty_\S+)/.exec(first.output())?.[1];
    expect(key, first.output()).toBeDefined();
    expect(first.output()).toContain(
      `curl -H 'Authorization: Bearer ${key}' http://localhost:${port}/api/v2/organizations/default`,
    );
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/organizations/default`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe('default');
    expect(await first.stop()).toBe(0);

    const second = await start(port);
    expect(second.output()).not.toContain('API key:');
    const again = await fetch(`http://127.0.0.1:${port}/api/v2/organizations/default`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(200);
    expect(await second.stop()).toBe(0);
  }, 240_000);

  it('serves /metrics on its own port only, never to clients of the API port', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const server = await start(port, metricsPort);
    const onApi = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(onApi.status).toBe(404);
    expect(await onApi.text()).not.toContain('verity_');
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('verity_database_available 1');
    // A clean exit is the first test's subject.
    await server.stop();
  }, 240_000);

  it('binds /metrics to VERITY_METRICS_HOST with the token of VERITY_METRICS_TOKEN_FILE', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const tokenFile = join(dir, 'metrics-token');
    writeFileSync(tokenFile, 'metrics-token-0123456789\n');
    const server = await start(port, metricsPort, {
      VERITY_METRICS_HOST: '127.0.0.2',
      VERITY_METRICS_TOKEN_FILE: tokenFile,
      VERITY_TRUST_PROXY: 'true',
    });
    try {
      // Not on HOST: only on the metrics host.
      await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
      expect((await fetch(`http://127.0.0.2:${metricsPort}/metrics`)).status).toBe(401);
      const scraped = await fetch(`http://127.0.0.2:${metricsPort}/metrics`, {
        headers: { authorization: 'Bearer metrics-token-0123456789' },
      });
      expect(scraped.status).toBe(200);
      // The legacy trust-proxy value is said to be one hop, never every hop.
      expect(server.output()).toContain('VERITY_TRUST_PROXY=true is taken as 1 hop');
    } finally {
      await server.stop();
    }
  }, 240_000);

  it('exits with every configuration problem listed', () => {
    const result = spawnSync(process.execPath, NODE_ARGS, {
      env: { ...process.env, PORT: 'x', LOG_LEVEL: 'loud', DATABASE_URL: 'ftp://nope' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration:');
    for (const name of ['PORT', 'LOG_LEVEL', 'DATABASE_URL']) {
      expect(result.stderr).toContain(`- ${name}:`);
    }
  }, 60_000);
});
