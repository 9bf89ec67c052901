/** Reply helpers every resource uses: JSON replies fastify must send as they are. */
import type { FastifyReply } from 'fastify';

/**
 * Sends a JSON string body such as "OK" (fastify would send a bare string as text/plain).
 * Use it wherever the interface answers with a string.
 */
export function sendJsonString(reply: FastifyReply, text: string, status = 200): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(text));
}

/** Answers the JSON string "OK": 201 when the request created the resource, else 200. */
export function sendOk(reply: FastifyReply, created = false): FastifyReply {
  return sendJsonString(reply, 'OK', created ? 201 : 200);
}

/**
 * Sends JSON made earlier (by the route's response schema), as text or its UTF-8 bytes: fastify
 * sends it as it is.
 */
export function sendSerialized(reply: FastifyReply, json: string | Buffer, status = 200): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(json);
}

// A character (a code point, not a UTF-16 unit) outside printable ASCII, a quote or a backslash.
const NOT_PLAIN = /[^\x20-\x7e]|["\\]/gu;
// A surrogate outside a pair: encodeURIComponent refuses it, so it becomes U+FFFD.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * An `attachment` Content-Disposition for a file name in any script (RFC 6266): a `filename`
 * of printable ASCII every client reads (other characters, `"` and `\` become `_`), and
 * `filename*` (RFC 8187) with the real name in percent-encoded UTF-8, which clients prefer.
 * Node refuses a header holding anything but Latin-1, so the name never goes in unencoded.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(NOT_PLAIN, '_');
  const encoded = encodeURIComponent(filename.replace(LONE_SURROGATE, '\ufffd')).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
