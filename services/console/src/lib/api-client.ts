/**
 * The one API client: calls `/api/v2` on the same origin with the session's key, and turns
 * failures into an ApiError carrying the API's message. A 401 ends the session.
 */
import { getSession, signOut, touch } from './session';

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

/** GET a JSON resource with an explicit key (sign-in checks a key before keeping it). */
export async function getJsonWithKey<T>(key: string, url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
    credentials: 'omit',
    cache: 'no-store',
    ...(signal ? { signal } : {}),
  });
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = (await res.json()) as { message?: unknown };
      if (typeof body.message === 'string') {
        message = body.message;
      }
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(res.status, message);
  }
  return (await res.json()) as T;
}

/** GET a JSON resource as the signed-in session. */
export async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  const session = getSession();
  if (!session) {
    throw new ApiError(401, 'Signed out');
  }
  touch();
  try {
    return await getJsonWithKey<T>(session.key, url, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      signOut();
    }
    throw err;
  }
}

/** Downloads a file the API serves behind the key (links cannot carry the key): saves it as a blob. */
export async function download(url: string, fallbackName: string): Promise<void> {
  const session = getSession();
  if (!session) {
    throw new ApiError(401, 'Signed out');
  }
  touch();
  const res = await fetch(url, { headers: { authorization: `Bearer ${session.key}` }, credentials: 'omit' });
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
