/** Pieces the evidence routes share: the use-case context of a request, JSON form parts, paging. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { issuesToFieldErrors, ValidationError } from '../errors.js';
import { requireOrg, requirePrincipal } from '../plugins/auth.js';
import type { FormPart } from '../plugins/multipart.js';
import type { EvidenceContext } from '../usecases/evidence-context.js';

/** The evidence context of a request: its org, the caller, the clock and the event bus. */
export function evidenceContext(app: FastifyInstance, request: FastifyRequest): EvidenceContext {
  const org = requireOrg(request);
  return {
    db: app.db,
    orgId: org.id,
    orgName: org.name,
    publicUrl: app.config.publicUrl,
    now: app.clock(),
    actor: requirePrincipal(request).name,
    events: app.domainEvents,
  };
}

/** Parses a JSON form part with its schema; problems are reported under the part name. */
export function parseJsonPart<S extends z.ZodType>(
  part: FormPart | undefined,
  name: string,
  schema: S,
): z.infer<S> {
  if (!part) throw new ValidationError({ [name]: 'Field required' });
  let value: unknown;
  try {
    value = JSON.parse(part.data.toString('utf8'));
  } catch (err) {
    throw new ValidationError({ [name]: `must be JSON: ${(err as Error).message}` });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(issuesToFieldErrors(parsed.error.issues, name));
  return parsed.data;
}

/** Parses a JSON body the route could not validate up front (it also accepts multipart). */
export function parseJsonBody<S extends z.ZodType>(body: unknown, schema: S): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ValidationError(issuesToFieldErrors(parsed.error.issues, 'body'));
  return parsed.data;
}

/** A query parameter that may repeat (`tag=a&tag=b`). */
export const Repeated = z
  .union([z.string().max(512), z.array(z.string().max(512)).max(50)])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));

/** `key` or `key:value` (also `key=value`) tag filters. */
export function tagFilters(values: string[]): Array<{ key: string; value: string | null }> {
  return values.map((v) => {
    const m = /^([^:=]+)[:=](.*)$/.exec(v);
    return m ? { key: m[1]!, value: m[2]! } : { key: v, value: null };
  });
}

/** Page-number paging: `page` (1-based) and `per_page`. */
export function paging(page: number, perPage: number) {
  return { limit: perPage, offset: (page - 1) * perPage };
}

/** The pagination object of a page. */
export function pagination(total: number, page: number, perPage: number) {
  return { total, page, per_page: perPage, page_count: Math.ceil(total / perPage) };
}

/** A fingerprint (or a 5-64 hex prefix) in a path. */
export const FingerprintParam = z
  .string()
  .regex(/^[a-f0-9]{5,64}$/, "must match pattern '^[a-f0-9]{5,64}$' (5 to 64 lowercase hex characters)");
