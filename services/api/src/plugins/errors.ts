/**
 * The one error path (semantics.md section 1): every failure becomes `{message, errors?}` with
 * the right status, and any unmatched path is a JSON 404, never a redirect.
 */
import fp from 'fastify-plugin';
import type { FastifyError } from 'fastify';
import { ApiError, RequestValidationError, ServiceUnavailableError, issuesToFieldErrors } from '../errors.js';
import { isDatabaseUnavailable, isTransientConflict, isUniqueViolation } from '../storage/errors.js';

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query',
  params: 'path',
  body: 'body',
  headers: 'header',
};

export default fp(
  (app, _opts, done) => {
    app.setErrorHandler((error: FastifyError | Error, request, reply) => {
      // A handler that failed after naming a file (an evidence download) answers JSON, not it.
      if (reply.hasHeader('content-disposition')) {
        reply.removeHeader('content-disposition');
        reply.removeHeader('content-length');
        reply.removeHeader('x-content-sha256');
        void reply.type('application/json; charset=utf-8');
      }
      // An outage, a failover or a timeout of the database: the client retries, nobody is paged
      // per request (the readiness probe and the database metrics tell the operator).
      if (isDatabaseUnavailable(error)) {
        request.log.warn({ err: error }, 'database not available');
        error = new ServiceUnavailableError();
      }
      if (error instanceof RequestValidationError) {
        const context = CONTEXT_NAMES[error.validationContext ?? 'body'] ?? 'body';
        return reply.code(400).send({
          message: 'Input payload validation failed',
          errors: issuesToFieldErrors(error.issues, context),
        });
      }
      if (error instanceof ApiError) {
        if (error.headers) {
          void reply.headers(error.headers);
        }
        return reply
          .code(error.statusCode)
          .send(error.errors ? { message: error.message, errors: error.errors } : { message: error.message });
      }
      if (isUniqueViolation(error) || isTransientConflict(error)) {
        request.log.info({ err: error }, 'concurrent write conflict');
        return reply
          .code(409)
          .send({ message: 'A concurrent request changed the same resource; retry the request' });
      }
      const fe = error as FastifyError;
      if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return reply.code(413).send({
          message: `Request body is larger than the limit of ${app.config.bodyLimitBytes} bytes`,
        });
      }
      if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
        return reply.code(400).send({ message: 'Malformed JSON body', errors: { body: error.message } });
      }
      const status = fe.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return reply.code(status).send({ message: error.message });
      }
      request.log.error({ err: error }, 'request failed');
      return reply.code(500).send({ message: 'Internal server error' });
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? request.url;
      return reply.code(404).send({ message: `Not found: ${request.method} ${path}` });
    });
    done();
  },
  { name: 'errors', dependencies: ['db'] },
);
