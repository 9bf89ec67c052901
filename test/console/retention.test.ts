/**
 * The retention settings page in Chromium: an admin sees the organization's retention classes
 * with the server's minimum, names no flow carries marked, and the legal holds with what each
 * covers in words; an organization without holds says records follow their class.
 */
import { afterAll, expect, it } from 'vitest';
import { describeConsole, type ConsoleTest } from './pages.js';

async function write(t: ConsoleTest, method: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${t.baseUrl}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

describeConsole('retention settings', (t) => {
  afterAll(async () => {
    await write(t, 'DELETE', `/legal-holds/${t.org}/console-hold`, null);
    await write(t, 'PUT', `/retention/${t.org}`, {});
  });

  it('shows the classes, the server minimum and the holds with what they cover', async () => {
    const flow = (await t.api<{ name: string }[]>(`/flows/${t.org}`))[0]?.name ?? 'no-flow';
    expect(
      await write(t, 'PUT', `/retention/${t.org}`, {
        default: { trails_days: 400, audit_log_days: 200 },
        flows: { [flow]: { trails_days: 800 }, 'not-yet': { snapshots_days: 30 } },
      }),
    ).toBe(200);
    // a zone without summer time: the hold's times read in it, named
    const page = await t.open({ timezoneId: 'Asia/Tokyo' });
    await page.goto(`${t.baseUrl}/${t.org}/settings/retention`);
    await page.getByRole('heading', { name: 'Retention', level: 1 }).waitFor();
    await page.getByText('No legal hold: records follow their retention class.').waitFor();
    const table = page.getByRole('table', { name: 'Retention classes' });
    await expect.poll(() => table.getByRole('row').count()).toBe(5);
    const row = (name: string) => table.getByRole('row', { name: new RegExp(`^${name}`) });
    expect(await row('Default').innerText()).toMatch(/Default\s+400 days\s+forever\s+forever\s+200 days/);
    expect(await row(`Flow ${flow}`).innerText()).toMatch(/800 days\s+as the default/);
    expect(await row('Flow not-yet').innerText()).toContain('(no such name yet)');
    expect(await row('Server minimum').innerText()).toMatch(/none\s+none\s+none\s+none/);

    expect(
      await write(t, 'POST', `/legal-holds/${t.org}`, {
        name: 'console-hold',
        reason: 'Audit of the first quarter',
        scope: { flows: [flow], from: '2026-01-01T00:00:00Z', to: '2026-03-31T23:59:59Z' },
      }),
    ).toBe(201);
    await page.reload();
    const hold = page.getByRole('listitem').filter({ hasText: 'console-hold' });
    await hold.waitFor();
    // the API's words, its ISO times (UTC) shown in the page's zone as every time is
    expect(await hold.innerText()).toMatch(
      new RegExp(
        `Keeps the trails and evidence files of flow ${flow} ` +
          'from Jan 0?1, 2026,? 0?9:00:00( AM)? GMT\\+9 to Apr 0?1, 2026,? 0?8:59:59( AM)? GMT\\+9\\. ' +
          'Placed by demo-admin on .+ GMT\\+9\\.$',
      ),
    );
    await page.getByText('Nothing has been removed.').waitFor();
  });
});
