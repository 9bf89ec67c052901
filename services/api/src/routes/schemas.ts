/** Route-schema pieces every resource uses. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireOrg } from '../plugins/auth.js';
import { z } from 'zod';

/** A route that takes no body still accepts the `null` (or `{}`) the CLI sends on every write. */
export const NoBody = z.union([z.null(), z.strictObject({})]).optional();

/**
 * Sends a JSON string body such as "OK" (fastify would send a bare string as text/plain).
 * Use it wherever the interface answers with a string.
 */
export function sendJsonString(reply: FastifyReply, text: string, status = 200): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(text));
}

/** Sends JSON text made earlier (by the route's response schema): fastify sends it as it is. */
export function sendSerialized(reply: FastifyReply, json: string, status = 200): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(json);
}

/** The organization of an org-scoped request, as use cases take it. */
export function orgRef(request: FastifyRequest): { id: string; name: string } {
  const org = requireOrg(request);
  return { id: org.id, name: org.name };
}
