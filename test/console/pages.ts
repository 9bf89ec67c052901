/**
 * What every console test file shares: one Chromium per file, a fresh browser context (a fresh
 * tab's session) per page opened, sign-in as a person does it, and after every test the check
 * that no page had a script error, a console error or a request to another host.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject } from 'vitest';
import { launchChromium, signIn, watchedPage } from './browser.js';

export { signIn };

export interface OpenOptions {
  signedIn?: boolean;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  timezoneId?: string;
  axe?: boolean;
}

export interface ConsoleTest {
  baseUrl: string;
  org: string;
  apiKey: string;
  /** An organization with nothing in it yet. */
  empty: { org: string; apiKey: string };
  /** The identity provider people sign in with (its people: alice, an admin; ola, with no access). */
  idp: { issuer: string };
  /**
   * A new tab in a new browser context; signed in unless told otherwise. A context may have its
   * own viewport, colour-scheme preference or time zone; `axe` lets the test inject axe-core
   * (the console's CSP refuses inline scripts).
   */
  open(options?: OpenOptions): Promise<Page>;
  /** The file's one signed-in tab, kept from test to test (signing in once per file is faster). */
  page(): Promise<Page>;
  /** Problems of the current test so far; a test that provokes one on purpose removes it. */
  problems: string[];
  /** GET on the API with the demo key, as JSON. */
  api<T = any>(path: string): Promise<T>;
}

/**
 * `describe` for console tests: skipped only where Chromium is missing outside CI (the global
 * setup fails the run in CI), with the browser and the checks above.
 */
export function describeConsole(name: string, body: (t: ConsoleTest) => void): void {
  const target = inject('console');
  describe.skipIf(target.skip !== undefined)(name, () => {
    let browser: Browser;
    const contexts: BrowserContext[] = [];
    let shared: Page | undefined;
    const newPage = async (options: OpenOptions = {}) => {
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 900 },
        ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}),
        ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
        ...(options.axe ? { bypassCSP: true } : {}),
      });
      context.setDefaultTimeout(20_000);
      const page = await watchedPage(context, target.baseUrl, (p) => t.problems.push(p));
      return { context, page };
    };
    const t: ConsoleTest = {
      baseUrl: target.baseUrl,
      org: target.org,
      apiKey: target.apiKey,
      empty: target.empty,
      idp: target.idp,
      problems: [],
      async open(options = {}) {
        const { context, page } = await newPage(options);
        contexts.push(context);
        if (options.signedIn !== false) {
          await signIn(page, target.baseUrl, target.org, target.apiKey);
        }
        return page;
      },
      async page() {
        if (!shared) {
          shared = (await newPage()).page;
          await signIn(shared, target.baseUrl, target.org, target.apiKey);
        }
        return shared;
      },
      async api(path) {
        const res = await fetch(`${target.baseUrl}/api/v2${path}`, {
          headers: { authorization: `Bearer ${target.apiKey}` },
        });
        if (!res.ok) {
          throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
        }
        return res.json() as Promise<any>;
      },
    };
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterEach(async () => {
      const problems = t.problems;
      t.problems = [];
      await Promise.all(contexts.splice(0).map((c) => c.close()));
      expect(problems, 'script errors, console errors or requests to other hosts').toEqual([]);
    });
    afterAll(async () => {
      await browser?.close();
    });
    body(t);
  });
}
