/**
 * Every write through the API leaves one audit entry naming its actor: a write is a POST, PUT,
 * PATCH or DELETE to an authenticated, organization-scoped `/api/v2` route that succeeds. The
 * entry rides on the request's org scope, so `transact` writes it in the write's transaction;
 * a write that ran none gets it here, before its answer is sent, in a statement it shares with
 * the other requests answering at the same time (storage/batching/row-batcher.ts).
 */
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { isReadMethod } from '../domain/roles.js';
import { auditEntryFor, PendingAuditEntry } from '../usecases/access/audit-log.js';
import { auditLogRepository, type NewAuditEntry } from '../storage/repositories/audit-log.js';
import { RowBatcher } from '../storage/batching/row-batcher.js';
import { isDatabaseUnavailable } from '../storage/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    audit: PendingAuditEntry | null;
  }
  interface FastifyContextConfig {
    /** `false` on a POST that changes nothing (a preview): it leaves no audit entry. */
    audit?: false;
  }
}

export default fp(
  (app, _opts, done) => {
    const failures = new Counter({
      name: 'verity_audit_write_failures_total',
      help: 'Writes whose audit entry could not be stored after the write (the write itself is stored)',
      registers: [app.metrics.registry],
    });
    app.decorateRequest('audit', null);
    // With the database away, a failed insert's entries are not tried one by one.
    const entries = new RowBatcher<NewAuditEntry>(
      (rows) => auditLogRepository.insert(app.db, rows),
      500,
      2,
      (err) => !isDatabaseUnavailable(err),
    );
    const write = (entry: NewAuditEntry) => entries.write(entry);

    app.addHook('onRequest', async (request) => {
      const auth = request.routeOptions.config.auth;
      if (
        isReadMethod(request.method) ||
        request.method === 'OPTIONS' ||
        auth === undefined ||
        auth === 'public' ||
        request.routeOptions.config.audit === false ||
        !request.principal ||
        !request.org
      ) {
        return;
      }
      request.audit = new PendingAuditEntry(
        auditEntryFor(request.principal, {
          orgId: request.org.id,
          at: app.clock(),
          action: request.routeOptions.schema?.operationId ?? `${request.method} ${request.routeOptions.url}`,
          resource: request.url.split('?')[0] ?? request.url,
          requestId: request.id,
          ip: request.ip,
        }),
      );
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (request.audit && reply.statusCode < 400) {
        try {
          await request.audit.ensureWritten(write);
        } catch (err) {
          failures.inc();
          request.log.error({ err }, 'audit entry of a stored write could not be written');
        }
      }
      return payload;
    });
    // Requests still answering when the app closes get their entries written first.
    app.addHook('onClose', () => entries.idle());
    done();
  },
  { name: 'audit', dependencies: ['auth', 'metrics', 'db'] },
);
