/** Signing in and out of the console, as a person does it in Chromium. */
import { expect, it } from 'vitest';
import { describeConsole, signIn } from './pages.js';

describeConsole('the console session', (t) => {
  it('signs in with an API key alone, lands on its organization, and keeps the key out of storage and URLs', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');

    await signIn(page, t.baseUrl, undefined, t.apiKey);
    await page.getByRole('heading', { name: `Delivery in ${t.org}`, level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}`);
    await expect(page.getByText(`Organization ${t.org}`).isVisible()).resolves.toBe(true);

    const stored = await page.evaluate<{ local: string; cookies: string }>(
      '({ local: JSON.stringify(Object.entries(localStorage)), cookies: document.cookie })',
    );
    expect(stored.local).not.toContain(t.apiKey);
    expect(stored.cookies).not.toContain(t.apiKey);
    expect(page.url()).not.toContain(t.apiKey);
  });

  it('refuses a wrong key with a message and stays on sign-in', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/sign-in`);
    await page.getByLabel('API key').fill('vty_this-key-does-not-exist-anywhere');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'This API key is not valid, or it has expired.',
    );
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    // the browser itself logs the refused request; that one was asked for
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of 401/.test(p)));
  });

  it('returns to a deep link opened before sign-in', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/${t.org}/environments?type=K8S`);
    await page.getByText(`After signing in you will return to /${t.org}/environments?type=K8S`).waitFor();
    await signIn(page, t.baseUrl, undefined, t.apiKey);
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    const url = new URL(page.url());
    expect(`${url.pathname}${url.search}`).toBe(`/${t.org}/environments?type=K8S`);
  });

  it('keeps the session over a reload, and forgets it on sign-out', async () => {
    const page = await t.open();
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}/environments`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    const left = await page.evaluate<string>('JSON.stringify(Object.entries(sessionStorage))');
    expect(left).not.toContain(t.apiKey);
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
  });

  it('signs an idle session out after 30 minutes', async () => {
    const page = await t.open({ signedIn: false });
    await page.clock.install();
    await signIn(page, t.baseUrl, t.org, t.apiKey);
    await page.getByRole('heading', { name: `Delivery in ${t.org}`, level: 1 }).waitFor();
    await page.clock.fastForward('29:00');
    expect(new URL(page.url()).pathname).toBe(`/${t.org}`);
    await page.clock.fastForward('02:00');
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
  });
});
