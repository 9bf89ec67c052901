/**
 * Prometheus metrics on the app's own registry: requests by route pattern, method and status,
 * their latency, and process metrics. Other plugins add their own to `app.metrics.registry`.
 */
import fp from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: { registry: Registry };
  }
}

export default fp(
  (app, _opts, done) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({
      name: 'verity_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'verity_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    app.decorate('metrics', { registry });

    app.addHook('onResponse', (request, reply, next) => {
      // The pattern, never the raw URL: label values stay bounded.
      const route = request.routeOptions.url ?? 'unmatched';
      const labels = { route, method: request.method, status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
      next();
    });

    app.get(
      '/metrics',
      { config: { auth: 'public', rateLimit: false }, schema: { hide: true } },
      async (_request, reply) => {
        const body = await registry.metrics();
        return reply.type(registry.contentType).send(body);
      },
    );
    done();
  },
  { name: 'metrics' },
);
