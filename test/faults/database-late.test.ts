/**
 * The API started before its database: it stays alive, `/healthz` answers 200 and `/readyz` 503
 * with the reason, each retry is logged, and once PostgreSQL answers it migrates and serves
 * without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/wait.js';
import { call, ORG, spawnApi, type ApiProcess } from './api-process.js';
import { Clusters } from './cluster.js';

let clusters: Clusters;
const apis: ApiProcess[] = [];

beforeAll(() => {
  clusters = new Clusters();
});

afterAll(async () => {
  await Promise.all(apis.map((a) => a.kill('SIGKILL')));
  clusters?.removeAll();
});

async function spawn(url: string): Promise<ApiProcess> {
  const api = await spawnApi(url);
  apis.push(api);
  return api;
}

/**
 * The answer of `path` once it has the wanted status and, when given, a body that `matches` (the
 * port opens a moment after the spawn, and the first attempt takes a moment too).
 */
function untilStatus(api: ApiProcess, path: string, status: number, matches?: (json: any) => boolean) {
  return until(async () => {
    const r = await call(api.base, 'GET', path, undefined, 5_000);
    return r.status === status && (!matches || matches(r.json)) ? r : undefined;
  }, 30_000);
}

const FIRST = 'waiting for the database: first attempt under way';
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('the API started while PostgreSQL is down', () => {
  it('waits, says why on /readyz, and serves once PostgreSQL is up, without a restart', async () => {
    const pg = await clusters.primary();
    pg.stop('fast');
    const api = await spawn(pg.url);

    const waiting = await untilStatus(api, '/readyz', 503, (j) => j.reason !== FIRST);
    expect(waiting.json).toEqual({
      status: 'unavailable',
      reason: 'database not reachable yet: connection refused; retrying',
    });
    expect(Number(waiting.retryAfter)).toBeGreaterThan(0);
    const health = await call(api.base, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const request = await call(api.base, 'GET', `/api/v2/flows/${ORG}`);
    expect(request.status).toBe(503);
    expect(request.json.message).toMatch(/^Verity is starting: database not reachable yet/);

    // Every attempt is logged, and the process goes on retrying.
    await until(() => (count(api.output(), 'database not reachable yet') >= 3 ? true : undefined), 30_000);
    expect(api.output()).toContain('ECONNREFUSED');
    expect(api.alive(), api.output()).toBe(true);

    pg.start();
    const ready = await untilStatus(api, '/readyz', 200);
    expect(ready.json).toEqual({ status: 'ok' });
    expect(api.alive()).toBe(true);

    // Migrated and bootstrapped: the configured key writes and reads.
    const created = await call(api.base, 'PUT', `/api/v2/flows/${ORG}`, {
      json: { name: 'late', description: 'created after a late database' },
    });
    expect(created.status).toBe(201);
    const flows = await call(api.base, 'GET', `/api/v2/flows/${ORG}`);
    expect(flows.status).toBe(200);
    expect((flows.json as Array<{ name: string }>).map((f) => f.name)).toContain('late');
  }, 120_000);

  it('logs a refused connection as an error on each retry and goes on once it is fixed', async () => {
    const pg = await clusters.primary();
    const api = await spawn(pg.url.replace(/\/postgres$/, '/verity_late'));

    const waiting = await untilStatus(api, '/readyz', 503, (j) => j.reason !== FIRST);
    expect(waiting.json.reason).toMatch(
      /^the database refuses the connection: .*verity_late.*SQLSTATE 3D000/,
    );
    await until(() => (count(api.output(), 'check DATABASE_URL') >= 2 ? true : undefined), 30_000);
    const errors = api
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((entry) => entry.level === 50);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors[0]!.msg).toContain('database "verity_late" does not exist');
    expect(api.alive()).toBe(true);

    pg.sql('CREATE DATABASE verity_late');
    await untilStatus(api, '/readyz', 200);
    const flows = await call(api.base, 'GET', `/api/v2/flows/${ORG}`);
    expect(flows.status).toBe(200);
  }, 120_000);

  it('stops at once on SIGTERM while waiting', async () => {
    const pg = await clusters.primary();
    pg.stop('fast');
    const api = await spawn(pg.url);
    await untilStatus(api, '/readyz', 503);
    const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
    api.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
