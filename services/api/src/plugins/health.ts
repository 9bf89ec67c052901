/**
 * Liveness and readiness: `GET /ready` (plain `OK`, what `kosli status` reads), `/healthz`
 * (the process answers, whatever the database does: an outage must not get replicas restarted)
 * and `/readyz` (the database answers, within a few seconds).
 */
import fp from 'fastify-plugin';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ping } from '../storage/probe.js';

/** The readiness probe answers within this, even while the database hangs. */
const READY_TIMEOUT_MS = 3_000;

/** Resolves to false when `work` has not finished within `ms` (the work itself goes on, bounded by the pool). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

const Health = z.object({ status: z.enum(['ok', 'unavailable']), reason: z.string().optional() });

export default fp(
  (fastify, _opts, done) => {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    const open = { auth: 'public' as const, rateLimit: false as const };

    app.get('/ready', { config: open, schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send('OK'),
    );

    app.get('/healthz', { config: open, schema: { hide: true, response: { 200: Health } } }, async () => ({
      status: 'ok' as const,
    }));

    app.get(
      '/readyz',
      { config: open, schema: { hide: true, response: { 200: Health, 503: Health } } },
      async (request, reply) => {
        try {
          if (await within(ping(app.db), READY_TIMEOUT_MS)) {
            return { status: 'ok' as const };
          }
          request.log.warn('database not answering');
        } catch (err) {
          request.log.warn({ err }, 'database not reachable');
        }
        return reply
          .code(503)
          .header('retry-after', '5')
          .send({ status: 'unavailable' as const, reason: 'database not reachable' });
      },
    );
    done();
  },
  { name: 'health', dependencies: ['db'] },
);
