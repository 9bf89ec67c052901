/** The exposure page of the console, on the demo organization, as a person reads it. */
import { expect, it } from 'vitest';
import { describeConsole } from './pages.js';

const LODASH = 'pkg:npm/lodash@4.17.20';

describeConsole('the exposure page', (t) => {
  it('answers which artifacts contained a package, and where and when they ran', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Exposure' }).click();
    await page.getByRole('heading', { name: 'Exposure', level: 1 }).waitFor();
    // with no query, the page says what it answers and offers an example
    await page.getByRole('heading', { name: 'Which of our environments ran a package?' }).waitFor();
    await page.getByRole('link', { name: LODASH }).waitFor();

    await page.getByLabel('Package URL').fill(LODASH);
    await page.getByRole('button', { name: 'Show exposure' }).click();
    await page.getByText(`2 artifacts contained ${LODASH}`).waitFor();
    expect(new URL(page.url()).searchParams.get('purl')).toBe(LODASH);

    const answer = await t.api(`/exposure/${t.org}?purl=${encodeURIComponent(LODASH)}`);
    const running = answer.artifacts.find((a: any) =>
      a.environments.some(
        (e: any) => e.environment_name === 'prod' && e.intervals.some((i: any) => i.to === null),
      ),
    );
    expect(running).toBeDefined();
    const section = page.getByRole('region', { name: running.name });
    await section.getByRole('link', { name: running.name }).waitFor();
    expect(await section.getByRole('link', { name: running.name }).getAttribute('href')).toBe(
      `/${t.org}/flows/${running.flow}/artifacts/${running.fingerprint}`,
    );
    const text = await section.innerText();
    expect(text).toContain(running.fingerprint.slice(0, 12));
    expect(text).toContain(running.commit.slice(0, 10));
    expect(text).toContain(LODASH);
    await section.getByRole('link', { name: running.trail, exact: true }).waitFor();

    // each interval is a bar named in words, and a row of the table
    const prodBar = section.getByRole('link', {
      name: /^prod: from .*, snapshot \d+, compliant, still running$/,
    });
    await prodBar.waitFor();
    await section
      .getByRole('link', { name: /^staging: from .* until .*, snapshot \d+, (non-)?compliant$/ })
      .first()
      .waitFor();
    const prodRow = section
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'prod' }) })
      .last();
    expect(await prodRow.innerText()).toMatch(/still running.*compliant/s);
    expect(await section.getByRole('cell', { name: 'still running' }).count()).toBeGreaterThan(0);

    // the bar leads to the snapshot that started the interval, by keyboard too
    const interval = running.environments
      .find((e: any) => e.environment_name === 'prod')
      .intervals.find((i: any) => i.to === null);
    await prodBar.focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('heading', { name: `Snapshot ${interval.from_snapshot} of prod`, level: 1 })
      .waitFor();
    expect(new URL(page.url()).pathname).toBe(
      `/${t.org}/environments/prod/snapshots/${interval.from_snapshot}`,
    );

    // dates narrow the answer to a window, kept in the address as a deep link
    await page.goBack();
    await page.getByLabel('From (optional)').fill('2001-01-01');
    await page.getByLabel('To (optional)').fill('2001-01-31');
    await page.getByRole('button', { name: 'Show exposure' }).click();
    await page.getByText('It ran in no environment over this time.').first().waitFor();
    const url = new URL(page.url());
    expect([url.searchParams.get('purl'), url.searchParams.get('from'), url.searchParams.get('to')]).toEqual([
      LODASH,
      '2001-01-01',
      '2001-01-31',
    ]);
  });

  it('explains a malformed package URL next to the field, and an absent one', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/exposure?purl=${encodeURIComponent('lodash@4.17.20')}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/purl|package URL/i);
    expect(await page.getByLabel('Package URL').getAttribute('aria-invalid')).toBe('true');
    // the browser logs the API's 400 the page provoked on purpose
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of 400/.test(p)));

    await page.getByLabel('Package URL').fill('pkg:npm/left-pad@1.3.0');
    await page.getByRole('button', { name: 'Show exposure' }).click();
    await page.getByRole('heading', { name: 'Nothing we ran contained pkg:npm/left-pad@1.3.0' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
  });
});
