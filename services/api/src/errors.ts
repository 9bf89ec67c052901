/**
 * Typed errors thrown by handlers and use cases. Only the error plugin writes error bodies
 * (semantics.md section 1); everything else throws one of these.
 */
import type { z } from 'zod';

/** An error with an HTTP status and a client-facing message. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: Record<string, string>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400 with per-field reasons. */
export class ValidationError extends ApiError {
  constructor(errors: Record<string, string>, message = 'Input payload validation failed') {
    super(400, message, errors);
  }
}

/** 400 without a single field to blame. */
export class BadRequestError extends ApiError {
  constructor(message: string, errors?: Record<string, string>) {
    super(400, message, errors);
  }
}

/** 401: missing, unknown, expired or revoked credentials. */
export class UnauthorizedError extends ApiError {
  constructor(message: string) {
    super(401, message, undefined, { 'www-authenticate': 'Bearer realm="verity"' });
  }
}

/** 403: the role forbids it, the key belongs elsewhere, or a beta feature is off. */
export class ForbiddenError extends ApiError {
  constructor(message = "You don't have permission to access this resource") {
    super(403, message);
  }
}

/** 404: the named resource does not exist. */
export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, message);
  }
}

/** 409: a concurrent duplicate create; the client may retry (semantics.md section 1). */
export class ConflictError extends ApiError {
  constructor(message = 'A concurrent request created the same resource; retry the request') {
    super(409, message);
  }
}

/** 413: a body or file over the configured limit. */
export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, message);
  }
}

/** 429: too many requests; carries Retry-After. */
export class TooManyRequestsError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, `Rate limit exceeded, retry in ${retryAfterSeconds} seconds`, undefined, {
      'retry-after': String(retryAfterSeconds),
    });
  }
}

/** 503: the database (or another backing service) is not answering; carries Retry-After. */
export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The database is not available; retry the request later', retryAfterSeconds = 5) {
    super(503, message, undefined, { 'retry-after': String(retryAfterSeconds) });
  }
}

/** Raised by the request validator; the error plugin prefixes each path with body/query/params. */
export class RequestValidationError extends Error {
  readonly statusCode = 400;
  validationContext?: string;
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super('Input payload validation failed');
    this.name = 'RequestValidationError';
  }
}

/** Renders a zod issue path as `a.b[0].c`. */
export function formatIssuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') {
      out += `[${part}]`;
    } else {
      out += out === '' ? String(part) : `.${String(part)}`;
    }
  }
  return out;
}

/** Turns zod issues into the `errors` map of the error body, keyed `<context>.<path>`. */
export function issuesToFieldErrors(issues: z.core.$ZodIssue[], context?: string): Record<string, string> {
  const errors: Record<string, string> = {};
  const add = (path: ReadonlyArray<PropertyKey>, message: string) => {
    const rendered = formatIssuePath(path);
    const key =
      [context, rendered].filter((s) => s !== undefined && s !== '').join('.') || (context ?? 'body');
    errors[key] = errors[key] ? `${errors[key]}; ${message}` : message;
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        add([...issue.path, key], 'Extra inputs are not permitted');
      }
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest rather than "invalid input".
      const best = issue.errors.reduce((a, b) => (deepest(b) > deepest(a) ? b : a));
      const nested = issuesToFieldErrors(
        best.map((i) => ({ ...i, path: [...issue.path, ...i.path] })),
        context,
      );
      Object.assign(errors, nested);
    } else {
      add(issue.path, issue.message);
    }
  }
  return errors;
}

function deepest(issues: z.core.$ZodIssue[]): number {
  return issues.reduce((m, i) => Math.max(m, i.path.length), 0) - issues.length / 1000;
}
