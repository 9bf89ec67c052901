/**
 * Rate limits (429 with Retry-After), per replica:
 * - per API key: counted on the authenticated key (the principal's key id, however the
 *   Authorization header spells it), or per client address on routes without authentication;
 * - failed authentications per client address: past the limit a bad key gets 429 instead of
 *   401, and is refused before any key lookup, so a flood of bad keys costs no database work.
 *   Keys this replica has recently seen valid (the key cache) from the same address go on as
 *   before. The client address is the connection's, or the one trusted proxies name
 *   (VERITY_TRUST_PROXY, never every hop), so rotating X-Forwarded-For does not reset it.
 */
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { TooManyRequestsError } from '../errors.js';
import { LruMap } from '../lru-map.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a failed authentication from the request's address; throws 429 once over the limit. */
    countFailedAuthentication(request: FastifyRequest): Promise<void>;
    /** Seconds until the request's address may fail again; 0 while it is under the limit. */
    authFailureRetryAfter(request: FastifyRequest): number;
  }
}

const MINUTE_MS = 60_000;

/** Client addresses whose failures are remembered; the least recently failing go first. */
const FAILURE_ADDRESSES = 100_000;

/** Failed authentications per client address, in windows of a minute from the first failure. */
class FailureCounter {
  private readonly windows = new LruMap<{ count: number; resetAt: number }>(FAILURE_ADDRESSES);
  constructor(private readonly max: number) {}

  retryAfter(address: string, now: number): number {
    const w = this.windows.get(address);
    if (!w || w.resetAt <= now || w.count < this.max) {
      return 0;
    }
    return Math.max(1, Math.ceil((w.resetAt - now) / 1000));
  }

  /** Counts one failure; the seconds to wait when it is over the limit, else 0. */
  count(address: string, now: number): number {
    let w = this.windows.get(address);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + MINUTE_MS };
      this.windows.set(address, w);
    }
    w.count += 1;
    return w.count > this.max ? Math.max(1, Math.ceil((w.resetAt - now) / 1000)) : 0;
  }
}

/** The organization a request counts against: the route's, or a service account's own. */
function orgOf(request: FastifyRequest): string | undefined {
  return request.org?.id ?? request.principal?.homeOrg?.id;
}

/**
 * One bucket for all the keys of an organization, checked after the key's own bucket (each
 * route's hook is added after the per-key one), so a key refused on its own does not spend its
 * organization's budget.
 */
function limitPerOrg(app: FastifyInstance, max: number): void {
  const limit = app.createRateLimit({
    max,
    timeWindow: MINUTE_MS,
    keyGenerator: (request) => `org:${orgOf(request) ?? ''}`,
  });
  const check: preParsingAsyncHookHandler = async (request, _reply, payload) => {
    if (orgOf(request) === undefined) {
      return payload;
    }
    const r = await limit(request);
    if (!r.isAllowed && r.isExceeded) {
      throw new TooManyRequestsError(Math.max(1, r.ttlInSeconds));
    }
    return payload;
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === false) {
      return;
    }
    const existing = route.preParsing ?? [];
    route.preParsing = [...(Array.isArray(existing) ? existing : [existing]), check];
  });
}

export default fp(
  async (app) => {
    const perKey = app.config.rateLimitPerMinute;
    const perOrg = app.config.rateLimitPerOrgPerMinute;
    const failures = app.config.authFailuresPerMinute;
    const failed = failures > 0 ? new FailureCounter(failures) : null;
    app.decorate('authFailureRetryAfter', (request: FastifyRequest) =>
      failed ? failed.retryAfter(request.ip, Date.now()) : 0,
    );
    app.decorate('countFailedAuthentication', async (request: FastifyRequest) => {
      const wait = failed ? failed.count(request.ip, Date.now()) : 0;
      if (wait > 0) {
        throw new TooManyRequestsError(wait);
      }
    });
    if (perKey === 0 && perOrg === 0) {
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
    if (perOrg > 0) {
      limitPerOrg(app, perOrg);
    }
  },
  { name: 'rate-limit', dependencies: ['db', 'auth'] },
);
