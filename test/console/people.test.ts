/**
 * People in the console, in Chromium: sign-in through the identity provider's own login page,
 * the session shared by every tab, a change made under the person's name, the access pages, the
 * audit log naming them, and sign-out.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsole, type ConsoleTest } from './pages.js';

/**
 * Requests to the identity provider are the sign-in itself, not a leak to another host; its
 * development login page asks for a web font the sandbox cannot reach.
 */
function allowProvider(t: ConsoleTest): void {
  const provider = new URL(t.idp.issuer).origin;
  const fromProvider = (p: string) => p.includes(provider) || p.includes('https://fonts.googleapis.com/');
  t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !fromProvider(p)));
}

/** Signs `login` in on the provider's login form, from Verity's sign-in page. */
async function signInWithProvider(page: Page, t: ConsoleTest, login: string): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.waitForURL((url) => url.origin === new URL(t.idp.issuer).origin);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
}

describeConsole('people signed in through the identity provider', (t) => {
  it('signs in on the provider, lands on the page it started from, and works in a new tab', async () => {
    const page = await t.open({ signedIn: false });
    const start = `/${t.org}/environments?type=K8S`;
    await page.goto(`${t.baseUrl}${start}`);
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    await signInWithProvider(page, t, 'alice');
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    const landed = new URL(page.url());
    expect(`${landed.pathname}${landed.search}`).toBe(start);
    await page.getByText('Alice Platform').first().waitFor();
    // The session is a cookie the page's script cannot read.
    expect(await page.evaluate('document.cookie')).not.toContain('verity_session');

    // An html_url opened in a new tab needs no second sign-in.
    const env = (await t.api<{ name: string }[]>(`/environments/${t.org}`))[0]!;
    const tab = await page.context().newPage();
    await tab.goto(`${t.baseUrl}/${t.org}/environments/${env.name}`);
    await tab.getByRole('heading', { name: env.name, level: 1 }).waitFor();
    expect(new URL(tab.url()).pathname).toBe(`/${t.org}/environments/${env.name}`);
    allowProvider(t);
  });

  it('makes a change under the person name, shows a new key once, and the audit log names them', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/${t.org}/settings/service-accounts`);
    await signInWithProvider(page, t, 'alice');
    await page.getByRole('heading', { name: 'Service accounts', level: 1 }).waitFor();
    const name = `console-bot-${Date.now()}`;
    await page.getByLabel('Name (letters, digits, dashes)').fill(name);
    await page.getByLabel('Role').selectOption('snapshotter');
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.getByText(name, { exact: true }).waitFor();
    const account = await t.api<{ created_by: string; privilege: string }>(
      `/service-accounts/${t.org}/${name}`,
    );
    expect(account).toMatchObject({ created_by: 'Alice Platform', privilege: 'snapshotter' });

    await page.getByText(name, { exact: true }).click();
    const keys = page.getByRole('region', { name: `Keys of ${name}` });
    await keys.getByText('No keys that still work.').waitFor();
    await page.locator(`#key-desc-${name}`).fill('reporter in staging');
    await page
      .getByRole('form', { name: `New key for ${name}` })
      .getByRole('button', { name: 'Create key' })
      .click();
    const secret = await page.getByTestId('new-key').textContent();
    expect(secret).toMatch(/\S{20,}/);
    // The key works, and is not shown again once stored.
    const res = await fetch(`${t.baseUrl}/api/v2/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(((await res.json()) as { name: string }).name).toBe(name);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    // the list of keys says how many there are
    await keys.getByText('1 key that still works', { exact: true }).waitFor();
    expect(await keys.getByRole('row').count()).toBe(2);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    // filtered to her: another file's hundreds of writes may come newer than hers meanwhile
    await page.getByLabel('Who (name or e-mail)').fill('alice@example.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/actor=alice/);
    const rows = page.getByRole('row');
    await rows.filter({ hasText: 'createServiceAccount' }).first().waitFor();
    await expect(rows.filter({ hasText: 'createServiceAccount' }).first().textContent()).resolves.toContain(
      'Alice Platform',
    );
    await expect(rows.filter({ hasText: 'signIn' }).first().textContent()).resolves.toContain(
      'alice@example.com',
    );

    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    const member = page.getByRole('row').filter({ hasText: 'alice@example.com' });
    await member.waitFor();
    await expect(member.textContent()).resolves.toContain('identity provider groups');
    allowProvider(t);
  });

  it('says which audit entries of how many it shows, and pages to the next as the API does', async () => {
    const page = await t.page();
    // the demo's artifact reports: no test adds one, so the count holds while the test reads it
    const path = `/audit-log/${t.org}?action=reportArtifact&per_page=5`;
    const first = await t.api(path);
    expect(first.total_count).toBeGreaterThan(5);
    await page.goto(`${t.baseUrl}/${t.org}/audit-log?action=reportArtifact&per_page=5`);
    await page
      .getByRole('table', {
        name: `Entries 1–5 of ${first.total_count}, newest first; older ones on the next page`,
      })
      .waitFor();
    const table = page.getByRole('table', { name: /^Entries / });
    const resources = () => table.locator('tbody tr code').allInnerTexts();
    expect(await resources()).toEqual(first.entries.map((e: { resource: string }) => e.resource));
    await page.getByRole('button', { name: 'Older entries' }).click();
    const second = await t.api(`${path}&page=2`);
    await page
      .getByRole('table', { name: new RegExp(`^Entries 6–10 of ${first.total_count}, newest first`) })
      .waitFor();
    expect(await resources()).toEqual(second.entries.map((e: { resource: string }) => e.resource));
  });

  it('tells a person whose groups give no access, and lets nobody in', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/sign-in`);
    await signInWithProvider(page, t, 'ola');
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain('marketing');
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    allowProvider(t);
    // the browser logs the refused sign-in and the probe of a session there is none of
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of (401|403)/.test(p)));
  });

  it('signs out in every tab', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/${t.org}/flows`);
    await signInWithProvider(page, t, 'alice');
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    const tab = await page.context().newPage();
    await tab.goto(`${t.baseUrl}/${t.org}/environments`);
    await tab.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    await tab.reload();
    await tab.getByRole('heading', { name: 'Sign in to Verity' }).waitFor();
    allowProvider(t);
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of 401/.test(p)));
  });
});
