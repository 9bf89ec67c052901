/**
 * The sha256 of an environment report's bytes, kept on the request as `rawBodySha256`: a cache
 * of spec rule 2 (domain/snapshot-diff.ts `reportUnchanged`). When the environment's last report
 * had the same bytes, the report use case moves only the report time, without parsing,
 * validating or grouping the report again (docs/decisions/0004). JSON is handled as the app
 * handles it otherwise: an empty body is null, malformed JSON a 400.
 *
 * Registered by the report routes alone: the parser replaces the app's in the context that
 * registers this plugin, and nowhere else.
 */
import fp from 'fastify-plugin';
import { parseJsonSteps } from '../json-slices.js';
import { inSlices } from '../slices.js';
import { sha256 } from '../sha256.js';

/** Bodies longer than this are parsed in slices. */
const SLICED_PARSE_CHARS = 1024 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** sha256 of a JSON body's bytes (environment report routes only). */
    rawBodySha256?: string;
  }
}

export default fp(
  (fastify, _opts, done) => {
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, parsed) => {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      request.rawBodySha256 = sha256(bytes);
      // A report may be 10 MiB: hashing it, parsing it and what the request's hooks do with the
      // result (the text check walks every string) are each tens of milliseconds or more, up to
      // a few hundred on a slow core, so other requests get turns of the event loop in between:
      // a body over SLICED_PARSE_CHARS is parsed in slices of its artifacts (json-slices.ts) and
      // handed to the hooks a turn later; a smaller one is parsed and handed over at once.
      setImmediate(() => {
        const text = bytes.toString('utf8');
        if (text.trim() === '') {
          parsed(null, null);
          return;
        }
        const fail = (err: unknown) => {
          (err as { statusCode?: number }).statusCode = 400;
          parsed(err as Error, undefined);
        };
        if (text.length <= SLICED_PARSE_CHARS) {
          let body: unknown;
          try {
            body = JSON.parse(text) as unknown;
          } catch (err) {
            fail(err);
            return;
          }
          parsed(null, body);
          return;
        }
        inSlices(parseJsonSteps(text, 'artifacts')).then(
          (body) => setImmediate(() => parsed(null, body)),
          fail,
        );
      });
    });
    done();
  },
  { name: 'report-body-hash' },
);
