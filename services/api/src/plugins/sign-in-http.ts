/** What the sign-in pages and routes share: cookies, return paths, and the pages they show. */
import type { FastifyReply } from 'fastify';

/** A sign-in between the redirect and the callback lives this long. */
export const LOGIN_MAX_AGE_MS = 10 * 60_000;
/** How often `last_seen_at` is written for one session: the idle timeout is this precise. */
export const LAST_SEEN_RESOLUTION_MS = 30_000;
/** How often finished and abandoned sessions and sign-ins are removed. */
export const SWEEP_INTERVAL_MS = 10 * 60_000;
export const STATE_COOKIE = 'verity_oidc_state';

/** The `Cookie` header as name to value; the first of a repeated name wins. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';').slice(0, 100)) {
    const eq = part.indexOf('=');
    if (eq <= 0) {
      continue;
    }
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) {
      cookies.set(name, value);
    }
  }
  return cookies;
}

/** A console path on this origin to return to: anything else becomes `/`. */
export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 2000) {
    return '/';
  }
  // Only an absolute path of this origin: not `//host`, not `/\host`, no scheme, no control characters.
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) {
    return '/';
  }
  for (let i = 0; i < raw.length; i += 1) {
    if (raw.charCodeAt(i) < 0x20 || raw.charCodeAt(i) === 0x7f) {
      return '/';
    }
  }
  return raw;
}

export const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** A small page for what the console cannot show: the sign-in's own failures. */
export function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Verity</title>` +
        `<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>` +
        `<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">` +
        `<main><h1>${escapeHtml(title)}</h1>${body}<p><a href="/sign-in">Back to sign-in</a></p></main></body></html>`,
    );
}

export interface CookieOptions {
  maxAgeSeconds?: number;
  path?: string;
}
