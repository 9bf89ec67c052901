/**
 * Prometheus metrics on the app's own registry: requests by route pattern, method and status,
 * their latency, database availability and process metrics. Other plugins add their own to
 * `app.metrics.registry`.
 *
 * The series name organizations and environments, so they are never served on the API port:
 * `app.metrics.server` is a separate fastify instance answering only `GET /metrics`, which
 * main.ts listens on at `VERITY_METRICS_HOST`:`VERITY_METRICS_PORT` (a port the Service of the
 * API does not expose). With `VERITY_METRICS_TOKEN` set, a scrape without that bearer token gets 401.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ping } from '../storage/probe.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: { registry: Registry; server: FastifyInstance };
  }
}

/** How long the database gets to answer `select 1` during a scrape before it counts as unavailable. */
export const DATABASE_PROBE_TIMEOUT_MS = 1000;

/** Resolves true when `probe` settles successfully within `ms`, false otherwise; never hangs. */
async function answersWithin(probe: () => Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([probe().then(() => true as const), deadline]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** A check of `Authorization: Bearer <token>` in constant time. */
function bearerCheck(token: string): (header: string | undefined) => boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  const expected = digest(token);
  return (header) => {
    const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
    return match !== null && timingSafeEqual(digest(match[1] ?? ''), expected);
  };
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
    new Gauge({
      name: 'verity_database_available',
      help: `1 when the database answers a trivial query within ${DATABASE_PROBE_TIMEOUT_MS} ms at scrape time, else 0`,
      registers: [registry],
      async collect() {
        this.set((await answersWithin(() => ping(app.db), DATABASE_PROBE_TIMEOUT_MS)) ? 1 : 0);
      },
    });

    const server = Fastify({ logger: false });
    const token = app.config.metricsToken;
    if (token !== undefined) {
      const allowed = bearerCheck(token);
      server.addHook('onRequest', async (request, reply) => {
        if (!allowed(request.headers.authorization)) {
          return reply
            .code(401)
            .header('www-authenticate', 'Bearer realm="metrics"')
            .send({ message: 'Scrapes need the metrics token: Authorization: Bearer <token>' });
        }
      });
    }
    server.get('/metrics', async (_request, reply) => {
      const body = await registry.metrics();
      return reply.type(registry.contentType).send(body);
    });
    app.decorate('metrics', { registry, server });
    app.addHook('onClose', async () => server.close());

    app.addHook('onResponse', (request, reply, next) => {
      // The pattern, never the raw URL: label values stay bounded.
      const route = request.routeOptions.url ?? 'unmatched';
      const labels = { route, method: request.method, status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
      next();
    });
    done();
  },
  { name: 'metrics', dependencies: ['db'] },
);
