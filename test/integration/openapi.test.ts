/** The OpenAPI document: valid 3.1, and every API route documented with its schemas. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let doc: any;

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ url: '/api/v2/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => t?.close());

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every API route with an operation id, path parameters and responses', () => {
    const routes = t.app.apiRoutes.filter((r) => !r.hidden);
    expect(routes.length).toBeGreaterThan(10);
    const missing: string[] = [];
    const ids = new Set<string>();
    for (const route of routes) {
      const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{*}');
      const op = doc.paths?.[path]?.[route.method.toLowerCase()];
      const label = `${route.method} ${route.url}`;
      if (!op) {
        missing.push(`${label}: not in the document`);
        continue;
      }
      if (!op.operationId) {
        missing.push(`${label}: no operationId`);
      } else if (ids.has(op.operationId)) {
        missing.push(`${label}: duplicate operationId ${op.operationId}`);
      }
      ids.add(op.operationId);
      if (!op.summary) {
        missing.push(`${label}: no summary`);
      }
      const successes = Object.keys(op.responses ?? {}).filter((s) => s.startsWith('2'));
      if (successes.length === 0) {
        missing.push(`${label}: no success response schema`);
      }
      if (!op.responses?.['401'] || !op.responses?.['400']) {
        missing.push(`${label}: error responses not documented`);
      }
      const pathParams = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
      const documented = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      for (const p of pathParams) {
        if (!documented.includes(p)) {
          missing.push(`${label}: path parameter ${p} undocumented`);
        }
      }
      const schema = route.schema as { body?: unknown; consumes?: string[] } | undefined;
      if (BODY_METHODS.has(route.method) && !schema?.body && !schema?.consumes) {
        missing.push(`${label}: no body schema`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares bearer auth globally', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('serves a docs page that loads its own scripts and may not be framed or sniffed', async () => {
    const page = await t.app.inject({ url: '/api/v2/doc/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/swagger/i);
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toContain('./static/swagger-ui-bundle.js');
    const assets = await Promise.all(
      scripts.map((src) => t.app.inject({ url: new URL(src, 'http://verity.test/api/v2/doc/').pathname })),
    );
    for (const res of [page, ...assets]) {
      expect(res.statusCode).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    // Without the trailing slash the page is the same, with the same headers.
    const bare = await t.app.inject({ url: '/api/v2/doc' });
    expect(bare.headers['x-frame-options']).toBe('DENY');
    expect(String(bare.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
  });
});
