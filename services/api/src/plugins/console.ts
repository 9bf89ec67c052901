/**
 * The web console: the built single-page app of `services/console`, served by the API itself.
 * Hashed files under `/assets/` are cached for a year; every other GET that asks for HTML and
 * is not an API or operations path gets `index.html`, so each `html_url` the API hands out opens
 * its page. Every console response carries a strict Content-Security-Policy. When the console
 * is not built (tests, a bare checkout), pages answer 503 with a short HTML note; the API is
 * unaffected.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';

export interface ConsolePluginOptions {
  /** The folder holding the built console (`index.html`, `assets/`); defaults to `services/console/dist`. */
  root?: string | undefined;
}

/** Where `npm run build:console` writes, relative to this file both in `src/` and compiled in `dist/`. */
export const DEFAULT_CONSOLE_ROOT = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/** No inline script or style, nothing from another host, never framed. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** Paths that stay the API's own, whatever the client accepts. */
const API_PATHS = /^\/(api(\/|$)|healthz$|readyz$|ready$|metrics$)/;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Verity console not built</title></head>
<body><h1>The Verity console is not built</h1>
<p>Run <code>npm run build:console</code> (or <code>npm start</code>, which builds it when missing), then reload.
The API under <code>/api/v2</code> works without it.</p></body></html>
`;

export default fp<ConsolePluginOptions>(
  async (app, opts) => {
    const root = opts.root ?? DEFAULT_CONSOLE_ROOT;
    const indexPath = join(root, 'index.html');
    /** index.html, read per request (a small file the OS caches), so a rebuild is served at once. */
    const loadIndex = async (): Promise<Buffer | null> => {
      try {
        return await readFile(indexPath);
      } catch {
        return null;
      }
    };

    // Registered even before a build exists, so assets built later are served without a restart.
    await app.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/assets/',
      index: false,
      list: false,
      dotfiles: 'deny',
      cacheControl: false,
      setHeaders: (reply) => {
        // The hashed name changes with the content, so a year is safe; "public" for shared caches.
        void reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'public, max-age=31536000, immutable' });
      },
    });

    const sendIndex = async (reply: FastifyReply) => {
      void reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache');
      const html = await loadIndex();
      if (!html) {
        return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
      }
      return reply.type('text/html; charset=utf-8').send(html);
    };

    // Deep links: any other GET asking for HTML. API and operations paths, and clients that do
    // not accept HTML, keep the API's JSON 404.
    app.get('/*', { config: { rateLimit: false }, schema: { hide: true } }, async (request, reply) => {
      const path = request.url.split('?')[0] ?? '/';
      const accept = request.headers.accept ?? '';
      if (API_PATHS.test(path) || path.startsWith('/assets/') || !accept.includes('text/html')) {
        return reply.callNotFound();
      }
      return sendIndex(reply);
    });
  },
  { name: 'console', dependencies: ['errors'] },
);
