/** What a route reads from its request beyond the schema: the organization scope and JSON parts. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { issuesToFieldErrors, ValidationError } from '../errors.js';
import { requireOrg, requirePrincipal } from '../plugins/auth.js';
import type { FormPart } from '../plugins/multipart.js';
import { scopeFor, type AppScope, type OrgScope } from '../usecases/scope/org-scope.js';

/** What every org scope of this app carries: the database, links, the event bus, the services. */
export function appScope(app: FastifyInstance): AppScope {
  return { db: app.db, publicUrl: app.config.publicUrl, events: app.domainEvents, services: app.services };
}

/** The organization scope of a request: its org, the caller, the clock, the bus and services. */
export function orgScope(app: FastifyInstance, request: FastifyRequest): OrgScope {
  const org = requireOrg(request);
  const scope = scopeFor(
    appScope(app),
    { id: org.id, name: org.name },
    app.clock(),
    requirePrincipal(request).name,
  );
  return request.audit ? { ...scope, audit: request.audit } : scope;
}

/** Parses a JSON form part with its schema; problems are reported under the part name. */
export function parseJsonPart<S extends z.ZodType>(
  part: FormPart | undefined,
  name: string,
  schema: S,
): z.infer<S> {
  if (!part) {
    throw new ValidationError({ [name]: 'Field required' });
  }
  let value: unknown;
  try {
    value = JSON.parse(part.data.toString('utf8'));
  } catch (err) {
    throw new ValidationError({ [name]: `must be JSON: ${(err as Error).message}` });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError(issuesToFieldErrors(parsed.error.issues, name));
  }
  return parsed.data;
}

/** Parses a JSON body the route could not validate up front (it also accepts multipart). */
export function parseJsonBody<S extends z.ZodType>(body: unknown, schema: S): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new ValidationError(issuesToFieldErrors(parsed.error.issues, 'body'));
  }
  return parsed.data;
}
