/**
 * The OpenAPI 3.1 document, generated from the zod contract, at `/api/v2/openapi.json`, with a
 * docs page at `/api/v2/doc`. Every route is recorded in `app.apiRoutes` so tests can check that
 * each one is documented and authorized.
 *
 * The docs page shares the console's origin, where the console keeps its API key: it may run
 * only its own scripts, may not be framed, and its files are never sniffed into another type.
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifySchema, HTTPMethods } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { RouteAuth } from './auth.js';

export interface ApiRoute {
  method: HTTPMethods;
  url: string;
  auth: RouteAuth | undefined;
  schema: FastifySchema | undefined;
  hidden: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered under /api/v2, in registration order. */
    apiRoutes: ApiRoute[];
  }
}

const DOCS_PREFIX = '/api/v2/doc';

/** The Content-Security-Policy of the docs page; "try it out" may call the public URL too. */
function docsContentSecurityPolicy(publicUrl: string): string {
  return [
    "default-src 'self'",
    "base-uri 'self'",
    `connect-src 'self' ${new URL(publicUrl).origin}`,
    "font-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self' 'unsafe-inline'",
  ].join('; ');
}

export default fp(
  async (app) => {
    const routes: ApiRoute[] = [];
    app.decorate('apiRoutes', routes);
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/api/v2')) {
        return;
      }
      if (route.url.startsWith(DOCS_PREFIX)) {
        route.config = { ...route.config, auth: 'public' };
        return;
      }
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD') {
          continue;
        }
        routes.push({
          method: method,
          url: route.url,
          auth: route.config?.auth,
          schema: route.schema,
          hidden: route.schema?.hide === true,
        });
      }
    });

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Verity API',
          version: '2.0',
          description:
            'Software-delivery compliance evidence: flows, trails, artifacts, attestations, environments, snapshots, policies and actions. Speaks the v2 interface of the kosli CLI.',
        },
        servers: [{ url: app.config.publicUrl }],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description:
                "An API key, or a CI job's OIDC ID token that a service account trusts: `Authorization: Bearer <key or token>`",
            },
            basicAuth: { type: 'http', scheme: 'basic', description: 'The API key as username or password' },
          },
        },
        security: [{ bearerAuth: [] }],
      },
      transform: jsonSchemaTransform,
      transformObject: jsonSchemaTransformObject,
    });

    const csp = docsContentSecurityPolicy(app.config.publicUrl);
    app.addHook('onRequest', (request, reply, done) => {
      const path = request.url.split('?', 1)[0] ?? '';
      if (path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`)) {
        reply.header('content-security-policy', csp);
        reply.header('x-frame-options', 'DENY');
        reply.header('x-content-type-options', 'nosniff');
      }
      done();
    });
    await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });

    app.get('/api/v2/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () =>
      app.swagger(),
    );
  },
  { name: 'openapi', dependencies: ['db'] },
);
