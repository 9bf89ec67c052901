/**
 * The browser of the console's end-to-end tests: Debian's Chromium driven by playwright-core,
 * never a browser download.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser cannot run here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `Debian's Chromium is not installed at ${CHROMIUM}: apt-get update && apt-get install -y chromium ` +
        '(.ci/run installs it). The console end-to-end tests drive it with playwright-core and never download a browser.';
}

/** Chromium, headless, with nothing in the background that could call another host. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/**
 * A page that records what a person would never want: script errors, console errors, and any
 * request to a host other than the server's.
 */
export async function watchedPage(
  context: BrowserContext,
  baseUrl: string,
  report: (problem: string) => void,
): Promise<Page> {
  const page = await context.newPage();
  const origin = new URL(baseUrl).origin;
  page.on('pageerror', (err) => report(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') {
      report(`console error: ${msg.text()} (${page.url()})`);
    }
  });
  page.on('request', (req) => {
    const url = req.url();
    if (/^(data|blob|about):/.test(url)) {
      return;
    }
    if (new URL(url).origin !== origin) {
      report(`request to another host: ${url}`);
    }
  });
  return page;
}

/** Signs in on the sign-in page with the key, and the organization when given. */
export async function signIn(
  page: Page,
  baseUrl: string,
  org: string | undefined,
  key: string,
): Promise<void> {
  if (!page.url().startsWith(`${baseUrl}/sign-in`)) {
    await page.goto(`${baseUrl}/sign-in`);
  }
  await page.getByLabel('API key').fill(key);
  if (org !== undefined) {
    await page.getByLabel(/^Organization/).fill(org);
  }
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/sign-in');
}
