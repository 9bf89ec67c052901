/**
 * Liveness and readiness: `GET /ready` (plain `OK`, what `kosli status` reads), `/healthz`
 * (the process answers) and `/readyz` (the database answers).
 */
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

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
          await sql`select 1`.execute(app.db);
          return { status: 'ok' as const };
        } catch (err) {
          request.log.warn({ err }, 'database not reachable');
          return reply.code(503).send({ status: 'unavailable' as const, reason: 'database not reachable' });
        }
      },
    );
    done();
  },
  { name: 'health', dependencies: ['db'] },
);
