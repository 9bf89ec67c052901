/**
 * Rate limits (429 with Retry-After), per replica:
 * - per API key: counted on the authenticated key (the principal's key id, however the
 *   Authorization header spells it), or per client address on routes without authentication;
 * - failed authentications per client address: past the limit a bad key gets 429 instead of
 *   401, while valid keys from the same address go on as before.
 */
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a failed authentication from the request's address; throws 429 once over the limit. */
    countFailedAuthentication(request: FastifyRequest): Promise<void>;
  }
}

const MINUTE_MS = 60_000;

export default fp(
  async (app) => {
    const perKey = app.config.rateLimitPerMinute;
    const failures = app.config.authFailuresPerMinute;
    if (perKey === 0 && failures === 0) {
      app.decorate('countFailedAuthentication', async () => {});
      return;
    }
    await app.register(rateLimit, {
      global: perKey > 0,
      max: perKey,
      timeWindow: MINUTE_MS,
      // After the auth hook (route-level hooks run after the app's onRequest hooks, and
      // preParsing after onRequest), so the principal is known.
      hook: 'preParsing',
      keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) =>
        new TooManyRequestsError(Math.max(1, Math.ceil(context.ttl / 1000))),
    });
    const failed =
      failures > 0
        ? app.createRateLimit({
            max: failures,
            timeWindow: MINUTE_MS,
            keyGenerator: (request) => `auth-failure:${request.ip}`,
          })
        : null;
    app.decorate('countFailedAuthentication', async (request: FastifyRequest) => {
      if (!failed) {
        return;
      }
      const limit = await failed(request);
      if (!limit.isAllowed && limit.isExceeded) {
        throw new TooManyRequestsError(Math.max(1, limit.ttlInSeconds));
      }
    });
  },
  { name: 'rate-limit', dependencies: ['db', 'auth'] },
);
