/**
 * The one API client: calls `/api/v2` on the same origin with the session's key, and turns
 * failures into an ApiError carrying the API's message. A 401 ends the session.
 */
import { dropSession, getSession, touch } from './session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type QueryValue = string | number | boolean | undefined | null | readonly string[];

/** `/api/v2` + path + query, every segment already encoded by the caller via {@link seg}. */
export function apiUrl(path: string, query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') {
      continue;
    }
    if (Array.isArray(v)) {
      for (const item of v as readonly string[]) {
        params.append(k, item);
      }
    } else {
      params.set(k, String(v));
    }
  }
  const qs = params.toString();
  return `/api/v2${path}${qs ? `?${qs}` : ''}`;
}

/** One path segment, encoded. */
export const seg = (value: string | number): string => encodeURIComponent(String(value));

/** How a request proves who sends it: the key of a key session, else the session cookie. */
function credentials(
  key: string | undefined,
): Pick<RequestInit, 'credentials'> & { headers: Record<string, string> } {
  return key
    ? { credentials: 'omit', headers: { authorization: `Bearer ${key}` } }
    : { credentials: 'same-origin', headers: {} };
}

/** The API's message of a failed answer, else its status line. */
async function failure(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { message?: unknown };
    if (typeof body.message === 'string') {
      message = body.message;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(res.status, message);
}

/** GET with an explicit key, or the session cookie when `key` is undefined; a failure throws. */
async function getOk(key: string | undefined, url: string, signal?: AbortSignal): Promise<Response> {
  const auth = credentials(key);
  const res = await fetch(url, {
    headers: { ...auth.headers, accept: 'application/json' },
    credentials: auth.credentials,
    cache: 'no-store',
    ...(signal ? { signal } : {}),
  });
  if (!res.ok) {
    throw await failure(res);
  }
  return res;
}

/** GET a JSON resource with an explicit key, or the session cookie when `key` is undefined. */
export async function getJsonWithKey<T>(
  key: string | undefined,
  url: string,
  signal?: AbortSignal,
): Promise<T> {
  return (await (await getOk(key, url, signal)).json()) as T;
}

/**
 * GET as the signed-in session; a 401 ends the session. A read is no sign of a person (the page
 * refetches and retries by itself), so it does not keep an idle session alive; input does.
 */
async function sessionGet(url: string, signal?: AbortSignal): Promise<Response> {
  const session = getSession();
  if (!session) {
    throw new ApiError(401, 'Signed out');
  }
  try {
    return await getOk(session.key, url, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      dropSession();
    }
    throw err;
  }
}

/** GET a JSON resource as the signed-in session. */
export async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  return (await (await sessionGet(url, signal)).json()) as T;
}

/** GET a JSON list as the signed-in session, with how many there are in all (`X-Total-Count`). */
export async function getJsonCounted<T>(
  url: string,
  signal?: AbortSignal,
): Promise<{ data: T; total: number | null }> {
  const res = await sessionGet(url, signal);
  const header = res.headers.get('x-total-count');
  const total = header === null || !/^\d+$/.test(header) ? null : Number(header);
  return { data: (await res.json()) as T, total };
}

/** Sends a write as the signed-in session and answers its JSON (null for an empty answer). */
export async function sendJson<T>(
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
): Promise<T> {
  const session = getSession();
  if (!session) {
    throw new ApiError(401, 'Signed out');
  }
  touch();
  const auth = credentials(session.key);
  const res = await fetch(url, {
    method,
    headers: {
      ...auth.headers,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    credentials: auth.credentials,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) {
    const err = await failure(res);
    if (err.status === 401) {
      dropSession();
    }
    throw err;
  }
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

/** Downloads a file the API serves behind the key (links cannot carry the key): saves it as a blob. */
export async function download(url: string, fallbackName: string): Promise<void> {
  const session = getSession();
  if (!session) {
    throw new ApiError(401, 'Signed out');
  }
  touch();
  const res = await fetch(url, credentials(session.key));
  if (!res.ok) {
    throw new ApiError(res.status, `Download failed: ${res.status} ${res.statusText}`);
  }
  const disposition = res.headers.get('content-disposition') ?? '';
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  const name = match?.[1] ? decodeURIComponent(match[1]) : fallbackName;
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
