/**
 * A person's browser signing in, over HTTP: Verity's login redirect, the provider's login form,
 * its redirect back, and Verity's callback, carrying each side's cookies as a browser would.
 */
import type { FastifyInstance } from 'fastify';
import type { TestProvider } from './oidc-provider.js';

/** One origin's cookies, as a browser keeps them. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(setCookie: string | string[] | undefined | null): void {
    const list =
      setCookie === undefined || setCookie === null ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
    for (const line of list) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** Fetches at the provider without following redirects, keeping its cookies. */
async function atProvider(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(res.headers.getSetCookie());
  return res;
}

export interface SignInResult {
  /** Verity's answer to the callback. */
  status: number;
  location: string | undefined;
  body: string;
  /** The browser's Verity cookies afterwards. */
  verity: CookieJar;
  /** The Set-Cookie lines of the callback's answer. */
  setCookie: string[];
}

/**
 * Signs `login` in from `returnTo`, as a browser would. `tamper` may change the callback URL the
 * provider sends the browser back to (a test of what Verity refuses).
 */
export async function signInThroughProvider(
  app: FastifyInstance,
  provider: TestProvider,
  login: string,
  options: {
    returnTo?: string;
    verity?: CookieJar;
    tamper?: (callback: URL) => URL;
    /** The way back lands in another browser, without the cookies this one got. */
    otherBrowser?: boolean;
  } = {},
): Promise<SignInResult> {
  const verity = options.verity ?? new CookieJar();
  const idp = new CookieJar();
  const start = await app.inject({
    method: 'GET',
    url: `/auth/oidc/login?return_to=${encodeURIComponent(options.returnTo ?? '/')}`,
    headers: { cookie: verity.header() },
  });
  if (start.statusCode !== 302) {
    throw new Error(`login answered ${start.statusCode}: ${start.body}`);
  }
  verity.take(start.headers['set-cookie']);
  let res = await atProvider(idp, String(start.headers.location));
  // The provider's own redirects, until its login form or the way back to Verity.
  for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops += 1) {
    const next = new URL(res.headers.get('location') ?? '', provider.issuer);
    if (next.origin !== provider.issuer) {
      return callback(
        app,
        options.otherBrowser ? new CookieJar() : verity,
        options.tamper ? options.tamper(next) : next,
      );
    }
    res = await atProvider(idp, next.href);
    if (res.status === 200) {
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)?.[1];
      if (!action) {
        throw new Error(`no login form at the provider: ${html.slice(0, 200)}`);
      }
      res = await atProvider(idp, new URL(action.replace(/&amp;/g, '&'), provider.issuer).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
      });
    }
  }
  throw new Error(`the provider did not send the browser back (${res.status})`);
}

async function callback(app: FastifyInstance, verity: CookieJar, url: URL): Promise<SignInResult> {
  const res = await app.inject({
    method: 'GET',
    url: `${url.pathname}${url.search}`,
    headers: { cookie: verity.header() },
  });
  verity.take(res.headers['set-cookie']);
  const set = res.headers['set-cookie'];
  return {
    setCookie: set === undefined ? [] : Array.isArray(set) ? set : [set],
    status: res.statusCode,
    location: res.headers.location === undefined ? undefined : String(res.headers.location),
    body: res.body,
    verity,
  };
}
