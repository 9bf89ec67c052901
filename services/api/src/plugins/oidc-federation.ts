/**
 * Keyless CI (usecases/access/oidc-federation.ts): `app.oidcFederation` tells the auth plugin
 * whether a bearer value is an OIDC ID token and, when it is, which service account it acts as.
 * It holds this process's cache of issuer keys (oidc-issuer-keys.ts).
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { hasJwtShape } from '../domain/oidc-trust.js';
import { principalFromIdToken } from '../usecases/access/oidc-federation.js';
import type { Principal } from '../usecases/access/principal.js';
import { IssuerKeys } from './oidc-issuer-keys.js';

declare module 'fastify' {
  interface FastifyInstance {
    oidcFederation: {
      /** The bearer value when it is a JWT (three base64url segments, a JSON header with `alg`). */
      idTokenOf(request: FastifyRequest): string | undefined;
      /** The service account the token acts as in the request's organization; 401 otherwise. */
      authenticate(request: FastifyRequest, token: string): Promise<Principal>;
    };
  }
}

/** True when the first segment is a JSON object naming an algorithm: API keys never are. */
function hasJwtHeader(token: string): boolean {
  try {
    const header: unknown = JSON.parse(
      Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'),
    );
    return (
      typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}

export default fp(
  (app, _opts, done) => {
    const keys = new IssuerKeys({
      allow: app.config.outboundAllow,
      insecureIssuers: app.config.oidcInsecureIssuers,
      timeoutMs: app.config.outboundTimeoutMs,
      clock: app.clock,
      log: app.log,
    });
    app.decorate('oidcFederation', {
      idTokenOf(request: FastifyRequest): string | undefined {
        const match = /^\s*bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        const value = match?.[1];
        return value !== undefined && hasJwtShape(value) && hasJwtHeader(value) ? value : undefined;
      },
      authenticate(request: FastifyRequest, token: string): Promise<Principal> {
        return principalFromIdToken(
          {
            db: app.db,
            keys,
            insecureIssuers: app.config.oidcInsecureIssuers,
            now: app.clock(),
            orgName: (request.params as Record<string, string | undefined>).org,
            cacheOnly: app.hasDecorator('authFailureRetryAfter') && app.authFailureRetryAfter(request) > 0,
          },
          token,
        );
      },
    });
    done();
  },
  { name: 'oidc-federation', dependencies: ['db'] },
);
