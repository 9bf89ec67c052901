/**
 * Per-key rate limit (429 with Retry-After). Requests are counted per API key (its hash), or per
 * client address when no key is sent. Counters are per replica.
 */
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { createHash } from 'node:crypto';
import { TooManyRequestsError } from '../errors.js';

export default fp(
  async (app) => {
    const max = app.config.rateLimitPerMinute;
    if (max === 0) return;
    await app.register(rateLimit, {
      global: true,
      max,
      timeWindow: 60_000,
      keyGenerator: (request) => {
        const auth = request.headers.authorization;
        return auth
          ? `key:${createHash('sha256').update(auth).digest('hex').slice(0, 32)}`
          : `ip:${request.ip}`;
      },
      errorResponseBuilder: (_request, context) =>
        new TooManyRequestsError(Math.max(1, Math.ceil(context.ttl / 1000))),
    });
  },
  { name: 'rate-limit', dependencies: ['db'] },
);
