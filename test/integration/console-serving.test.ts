/** The API serving the built console: deep links, caching, CSP, and the API paths left alone. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../services/api/src/app.js';
import type { DatabaseHandle } from '../../services/api/src/storage/create-db.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const INDEX =
  '<!doctype html><html><head><title>Verity</title></head><body><div id="root"></div></body></html>';

async function appWith(consoleDir: string): Promise<{ app: FastifyInstance; db: DatabaseHandle }> {
  const db = await createTestDatabase();
  const app = await buildApp({ config: testConfig(), database: db, logger: false, consoleDir });
  await app.ready();
  return { app, db };
}

describe('console served by the API', () => {
  let dir: string;
  let app: FastifyInstance;
  let db: DatabaseHandle;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verity-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    ({ app, db } = await appWith(dir));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    '/',
    '/sign-in',
    '/acme/environments',
    '/acme/environments/prod/snapshots/12',
    '/acme/flows/web/trails/main-1',
    '/acme/flows/web/artifacts/' + 'a'.repeat(64) + '?artifact_id=0123abcd-0123-0123-0123-0123abcd',
    '/acme/search?q=abcdef',
  ])('opens %s as the console page, not cached, under a strict CSP', async (url) => {
    const res = await app.inject({ url, headers: HTML });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe-inline');
  });

  it('serves hashed assets with a year of immutable caching', async () => {
    const res = await app.inject({ url: '/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('console.log(1)');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  });

  it('answers a missing asset with the JSON 404', async () => {
    const res = await app.inject({ url: '/assets/nope.js', headers: HTML });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: 'Not found: GET /assets/nope.js' });
  });

  it('leaves API and operations paths to the API, even for a browser', async () => {
    const unknown = await app.inject({ url: '/api/v2/nope', headers: HTML });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ message: 'Not found: GET /api/v2/nope' });
    const unauth = await app.inject({ url: '/api/v2/environments/acme', headers: HTML });
    expect(unauth.statusCode).toBe(401);
    expect((await app.inject({ url: '/healthz', headers: HTML })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ url: '/ready', headers: HTML })).body).toBe('OK');
    // metrics have a port of their own: on this one, a browser gets the JSON 404, not a page
    const metrics = await app.inject({ url: '/metrics', headers: HTML });
    expect(metrics.statusCode).toBe(404);
    expect(metrics.json()).toEqual({ message: 'Not found: GET /metrics' });
    const openapi = await app.inject({ url: '/api/v2/openapi.json', headers: HTML });
    expect(openapi.json()).toHaveProperty('openapi', '3.1.0');
  });

  it('keeps the JSON 404 for clients that do not ask for HTML, and for other methods', async () => {
    const json = await app.inject({ url: '/acme/environments', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(404);
    expect(json.json()).toEqual({ message: 'Not found: GET /acme/environments' });
    const post = await app.inject({ method: 'POST', url: '/acme/environments', headers: HTML });
    expect(post.statusCode).toBe(404);
  });
});

describe('console not built', () => {
  it('answers pages with a 503 HTML note, keeps the API working, and serves a later build', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'verity-console-empty-'));
    const { app, db } = await appWith(empty);
    try {
      const page = await app.inject({ url: '/acme/environments', headers: HTML });
      expect(page.statusCode).toBe(503);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('npm run build:console');
      expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
      expect((await app.inject({ url: '/assets/index-abc123.js' })).statusCode).toBe(404);

      // Built while the API runs: served without a restart.
      mkdirSync(join(empty, 'assets'));
      writeFileSync(join(empty, 'index.html'), INDEX);
      writeFileSync(join(empty, 'assets', 'index-abc123.js'), 'console.log(2)');
      const later = await app.inject({ url: '/acme/environments', headers: HTML });
      expect(later.statusCode).toBe(200);
      expect(later.body).toBe(INDEX);
      expect((await app.inject({ url: '/assets/index-abc123.js' })).body).toBe('console.log(2)');
    } finally {
      await app.close();
      await db.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
