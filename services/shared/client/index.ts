/**
 * The typed API client the reporter, the operator and tests use. It sends what the kosli CLI
 * sends (Bearer key, JSON with charset) and parses responses with the shared contract.
 * It does not retry: callers own their retry policy, helped by `isRetryable` and `retryAfterMs`.
 */
import { z } from 'zod';
import { ErrorBody } from '../contract/common.js';
import type { ReportType } from '../contract/environment-reports.js';
import { Organization } from '../contract/organizations.js';

/**
 * The fields of `GET /environments/{org}/{env}` the client reads (what `kosli snapshot
 * --auto-environment` reads); other fields pass through. The full shape belongs to the
 * environment endpoints' contract.
 */
export const EnvironmentSummary = z.looseObject({ name: z.string(), type: z.string() });
export type EnvironmentSummary = z.infer<typeof EnvironmentSummary>;

/** Body of `PUT /environments/{org}` (create or update), as the kosli CLI sends it. */
export interface EnvironmentPut {
  name: string;
  type: ReportType | 'logical';
  description: string;
  include_scaling?: boolean;
  require_provenance?: boolean;
  included_environments?: string[];
}

export interface ClientOptions {
  /** Base URL of the server, without /api/v2, e.g. http://verity:8080. */
  baseUrl: string;
  org: string;
  /** The API key, or a function that reads it (e.g. from a Secret-mounted file) on every request. */
  token: string | (() => string);
  userAgent?: string;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A non-2xx answer (status > 0) or a failure to get one (status 0). */
export class VerityApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fieldErrors?: Record<string, string> | null,
    /** Seconds from a Retry-After header, when the server sent one. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'VerityApiError';
  }
}

/** Network failures, 409 (a concurrent write), 429 and 5xx are worth retrying; other 4xx are not. */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof VerityApiError)) {
    return true;
  }
  return (
    err.status === 0 || err.status === 409 || err.status === 429 || (err.status >= 500 && err.status !== 501)
  );
}

/** The wait a 429/503 asked for, in milliseconds, if any. */
export function retryAfterMs(err: unknown): number | undefined {
  return err instanceof VerityApiError && err.retryAfterSeconds !== undefined
    ? err.retryAfterSeconds * 1000
    : undefined;
}

export interface RequestOptions<S extends z.ZodType> {
  /** JSON-encoded, except a FormData, sent as multipart/form-data. */
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | Array<string | number>>;
  /** Parses the 2xx body; without it the body is returned as parsed JSON. */
  schema?: S;
}

/** Joins path segments, escaping each one (repo names with `/` must be passed pre-split). */
export function apiPath(...segments: Array<string | number>): string {
  return '/api/v2/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** Creates a client bound to one server, organization and key. */
export function createClient(options: ClientOptions) {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const token = () => (typeof options.token === 'function' ? options.token() : options.token).trim();

  async function request<S extends z.ZodType = z.ZodUnknown>(
    method: string,
    path: string,
    opts: RequestOptions<S> = {},
  ): Promise<z.infer<S>> {
    const url = new URL(base + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) {
        continue;
      }
      for (const item of Array.isArray(v) ? v : [v]) {
        url.searchParams.append(k, String(item));
      }
    }
    const hasBody = method !== 'GET' && method !== 'HEAD';
    // A FormData body goes as multipart/form-data (fetch sets the boundary); anything else as JSON.
    const multipart = opts.body instanceof FormData;
    let res: Response;
    try {
      res = await doFetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token()}`,
          'user-agent': options.userAgent ?? 'verity-client',
          ...(hasBody && !multipart ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        },
        ...(hasBody ? { body: multipart ? (opts.body as FormData) : JSON.stringify(opts.body ?? null) } : {}),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new VerityApiError(0, `${method} ${url.pathname}: ${(err as Error).message}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    if (!res.ok) {
      const parsed = ErrorBody.safeParse(json);
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new VerityApiError(
        res.status,
        parsed.success ? parsed.data.message : `${method} ${url.pathname}: HTTP ${res.status}`,
        parsed.success ? parsed.data.errors : undefined,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
      );
    }
    return (opts.schema ? opts.schema.parse(json) : json) as z.infer<S>;
  }

  return {
    request,
    org: options.org,
    organizations: {
      get: () => request('GET', apiPath('organizations', options.org), { schema: Organization }),
    },
    environments: {
      /** `GET /environments/{org}/{env}`; a missing environment is a 404 VerityApiError. */
      get: (name: string) =>
        request('GET', apiPath('environments', options.org, name), { schema: EnvironmentSummary }),
      /** `PUT /environments/{org}`: creates the environment or updates it. */
      put: (body: EnvironmentPut) => request('PUT', apiPath('environments', options.org), { body }),
      /** `PUT /environments/{org}/{env}/report/{type}`: the full current state of the environment. */
      report: (name: string, type: ReportType, body: unknown) =>
        request('PUT', apiPath('environments', options.org, name, 'report', type), { body }),
    },
  };
}

export type VerityClient = ReturnType<typeof createClient>;
