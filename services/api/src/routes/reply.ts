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
