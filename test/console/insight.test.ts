/**
 * The delivery pages of the console on the demo organization: the home page (the landing after
 * sign-in), the deployments list and a repository's page. Every number a person reads is checked
 * against what the API answers for the same range.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsole, signIn } from './pages.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ENV_TABLE = 'What runs in each environment now, its compliance, and its deployments this week';

/** A lead time as the console words it (features/insight/figures.ts). */
function leadTime(seconds: number | null): string {
  if (seconds === null) {
    return 'none';
  }
  if (seconds < 3_600) {
    return `${Math.max(0, Math.round(seconds / 60))} min`;
  }
  if (seconds < 48 * 3_600) {
    return `${(seconds / 3_600).toFixed(1)} h`;
  }
  return `${(seconds / 86_400).toFixed(1)} days`;
}

/** The query of a link's address, as the API takes it (`?from=…&to=…`). */
async function linkQuery(link: Locator): Promise<URLSearchParams> {
  const href = await link.getAttribute('href');
  expect(href).toBeTruthy();
  return new URL(href!, 'http://console.invalid').searchParams;
}

/** The cells of a table's body rows, as text. */
async function bodyCells(table: Locator): Promise<string[][]> {
  const rows = table.locator('tbody tr');
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    out.push((await rows.nth(i).locator('th, td').allInnerTexts()).map((s) => s.trim()));
  }
  return out;
}

async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate<
    Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>
  >("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)");
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}`));
}

describeConsole('the delivery pages', (t) => {
  it('lands on the home page after sign-in: per environment what runs, its compliance and deployments this week', async () => {
    const page = await t.open({ signedIn: false });
    await page.goto(`${t.baseUrl}/`);
    await signIn(page, t.baseUrl, undefined, t.apiKey);
    await page.getByRole('heading', { name: `Delivery in ${t.org}`, level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Home' }).getAttribute('aria-current')).toBe('page');
    expect(await nav.getByRole('link', { name: 'Deployments' }).getAttribute('href')).toBe(
      `/${t.org}/deployments`,
    );

    const envs: Array<{ name: string; state: boolean | null }> = await t.api(`/environments/${t.org}`);
    expect(envs.map((e) => e.name).sort()).toEqual(['dev', 'prod', 'staging']);
    const table = page.getByRole('table', { name: ENV_TABLE });
    let thisWeek = 0;
    for (const env of envs) {
      const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: env.name }) });
      const cells = row.getByRole('cell');
      const count = cells.nth(2).getByRole('link');
      await count.waitFor();
      const q = await linkQuery(count);
      expect(q.get('environment')).toBe(env.name);
      const dora = await t.api(`/dora/${t.org}?environment=${env.name}&from=${q.get('from')}`);
      expect(await count.innerText(), env.name).toBe(String(dora.total.deployment_frequency.deployments));
      thisWeek += dora.total.deployment_frequency.deployments;
      expect(await cells.nth(0).innerText(), env.name).toBe(
        env.state === true ? '✓ Compliant' : env.state === false ? '✗ Non-compliant' : '∅ No policy attached',
      );
      const snapshot = await t.api(`/snapshots/${t.org}/${env.name}/-1`);
      const running = cells.nth(1).getByRole('listitem');
      await running.first().waitFor();
      const names = (await running.allInnerTexts()).map((s) => s.split(/\s[✓✗∅]/)[0]!.trim());
      // what runs now: the latest snapshot's artifacts but those that exited in it, the first five by name
      const runningNow = snapshot.artifacts.filter((a: any) => a.annotation?.type !== 'exited');
      expect(names, env.name).toEqual(runningNow.slice(0, 5).map((a: { name: string }) => a.name));
      if (runningNow.length > 5) {
        expect(
          await cells
            .nth(1)
            .getByRole('link', { name: /^and \d+ more artifacts?$/ })
            .innerText(),
        ).toBe(`and ${runningNow.length - 5} more artifact${runningNow.length === 6 ? '' : 's'}`);
      }
    }
    // the demo deploys in every environment in its last days: the counts are not all zero
    const week = await t.api(
      `/dora/${t.org}?from=${(await linkQuery(table.getByRole('link', { name: /^\d+$/ }).first())).get('from')}`,
    );
    expect(thisWeek).toBe(week.total.deployment_frequency.deployments);
    expect(await page.getByText('3 environments.').count()).toBe(1);
  });

  it('asks once for every environment, and says how many there are and where the rest are when not all fit', async () => {
    const page = await t.page();
    // signing in may land on this home page too: its answers are in before the requests counted start
    if ([`/`, `/${t.org}`].includes(new URL(page.url()).pathname)) {
      await page.getByRole('table', { name: ENV_TABLE }).waitFor();
      await page.getByRole('figure', { name: /^Deployment frequency/ }).waitFor();
    }
    const asked: string[] = [];
    page.on('requestfinished', (r) => {
      const path = new URL(r.url()).pathname;
      if (/^\/api\/v2\/(environments-now|snapshots|dora)\//.test(path)) {
        asked.push(`${path}${new URL(r.url()).search}`);
      }
    });
    await page.goto(`${t.baseUrl}/${t.org}`);
    await page.getByRole('table', { name: ENV_TABLE }).getByRole('link', { name: /^\d+$/ }).first().waitFor();
    await page.getByRole('figure', { name: /^Deployment frequency/ }).waitFor();
    // one answered request for the environments, one for the charts' figures: none per environment
    // (requests a re-render abandons are cancelled before they are answered)
    expect(asked.filter((a) => a.startsWith('/api/v2/environments-now/'))).toHaveLength(1);
    expect(asked.filter((a) => a.startsWith('/api/v2/snapshots/'))).toEqual([]);
    expect(asked.filter((a) => a.startsWith('/api/v2/dora/'))).toHaveLength(1);
    expect(
      new URLSearchParams(asked.find((a) => a.includes('environments-now'))!.split('?')[1]).get('per_page'),
    ).toBe('50');

    // more environments than one page holds: the page says how many, and links to them all
    const page2 = await t.open();
    await page2.route('**/api/v2/environments-now/**', async (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('per_page', '2');
      const response = await route.fetch({ url: url.toString() });
      await route.fulfill({ response });
    });
    await page2.goto(`${t.baseUrl}/${t.org}`);
    const status = page2.getByRole('status').filter({ hasText: 'environments shown' });
    await status.waitFor();
    expect(await status.innerText()).toBe(
      '2 of 3 environments shown, by name; all 3 are on the environments page.',
    );
    expect(await status.getByRole('link', { name: 'the environments page' }).getAttribute('href')).toBe(
      `/${t.org}/environments`,
    );
    expect(
      await page2.getByRole('table', { name: ENV_TABLE }).getByRole('rowheader').allInnerTexts(),
    ).toEqual(['dev', 'prod']);
  });

  it('says how many repositories there are, and shows more of them on demand', async () => {
    const all = await t.api(`/repos/${t.org}?page=1&per_page=50`);
    expect(all.total_count).toBe(2);
    const page = await t.open();
    // one a page, as if there were more than a page holds
    await page.route('**/api/v2/repos/**', async (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('per_page', '1');
      await route.fulfill({ response: await route.fetch({ url: url.toString() }) });
    });
    await page.goto(`${t.baseUrl}/${t.org}`);
    const region = page.getByRole('region', { name: 'Repositories' });
    const status = region.getByRole('status');
    await status.filter({ hasText: 'The first 1 of 2 repositories, by name.' }).waitFor();
    expect(await region.getByRole('listitem').allInnerTexts()).toEqual([all.repos[0].name]);
    await region.getByRole('button', { name: 'Show 1 more' }).click();
    await status.filter({ hasText: /^2 repositories\./ }).waitFor();
    expect(await region.getByRole('listitem').allInnerTexts()).toEqual(all.repos.map((r: any) => r.name));
    expect(await region.getByRole('button').count()).toBe(0);
  });

  it('charts deployment frequency and lead time per week from the DORA answer, with the numbers beside', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}`);
    const delivery = page.getByRole('region', { name: 'Delivery over the last 12 weeks' });
    const total = delivery
      .getByRole('term')
      .filter({ hasText: 'Deployments' })
      .locator('xpath=following-sibling::dd');
    await total.getByRole('link').waitFor();
    const q = await linkQuery(total.getByRole('link'));
    const dora = await t.api(`/dora/${t.org}?from=${q.get('from')}&to=${q.get('to')}&bucket=week`);
    expect(dora.buckets).toHaveLength(12);
    expect(await total.getByRole('link').innerText()).toBe(
      String(dora.total.deployment_frequency.deployments),
    );
    expect(dora.total.deployment_frequency.deployments).toBeGreaterThan(0);
    const keys = await delivery.locator('dl.facts').innerText();
    expect(keys).toContain(
      `p50 ${leadTime(dora.total.lead_time_for_changes.p50)}, p90 ${leadTime(dora.total.lead_time_for_changes.p90)}`,
    );
    const cfr = dora.total.change_failure_rate;
    expect(keys).toContain(`${Math.round(cfr.rate * 100)}% (${cfr.failures} of ${cfr.deployments})`);

    const frequency = page.getByRole('figure', { name: /^Deployment frequency/ });
    const frequencyRows = await bodyCells(frequency.getByRole('table'));
    expect(frequencyRows.map((r) => r[1])).toEqual(
      dora.buckets.map((b: any) => String(b.deployment_frequency.deployments)),
    );
    // the picture is drawn from the same numbers: one bar per week, each named with its value
    const bars = frequency.locator('svg rect.chart-bar title');
    expect((await bars.allTextContents()).map((s) => s.replace(/^Week of [^,]+, /, ''))).toEqual(
      dora.buckets.map((b: any) => `deployments: ${b.deployment_frequency.deployments}`),
    );
    expect(await frequency.getByRole('img').getAttribute('aria-label')).toContain('Deployments per week');

    const lead = page.getByRole('figure', { name: /^Lead time for changes/ });
    const leadRows = await bodyCells(lead.getByRole('table'));
    expect(leadRows.map((r) => [r[1], r[2], r[3]])).toEqual(
      dora.buckets.map((b: any) => [
        leadTime(b.lead_time_for_changes.p50),
        leadTime(b.lead_time_for_changes.p90),
        String(b.lead_time_for_changes.deployments),
      ]),
    );
    expect(leadRows.some((r) => r[1] !== 'none')).toBe(true);

    // one environment: the same figures, narrowed as the API narrows them
    await delivery.getByLabel('Environment', { exact: true }).selectOption('prod');
    await page.waitForURL(/environment=prod/);
    await expect.poll(async () => (await linkQuery(total.getByRole('link'))).get('environment')).toBe('prod');
    const pq = await linkQuery(total.getByRole('link'));
    const prod = await t.api(`/dora/${t.org}?environment=prod&from=${pq.get('from')}&to=${pq.get('to')}`);
    // the link names the new range as soon as the filter changes; its number once the API answers
    await expect
      .poll(() => total.getByRole('link').innerText())
      .toBe(String(prod.total.deployment_frequency.deployments));
    expect(prod.total.deployment_frequency.deployments).toBeLessThan(
      dora.total.deployment_frequency.deployments,
    );
    const restore = prod.total.time_to_restore;
    expect(restore.restores).toBeGreaterThan(0);
    expect(await delivery.locator('dl.facts').innerText()).toContain(
      `p50 ${leadTime(restore.p50)}, p90 ${leadTime(restore.p90)} (${restore.restores} restore${restore.restores === 1 ? '' : 's'})`,
    );
  });

  it('lists the deployments the API lists, filtered and paged with its next link, saying how many', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deployments' }).click();
    await page.getByRole('heading', { name: 'Deployments', level: 1 }).waitFor();
    const all = await t.api(`/deployments/${t.org}`);
    expect(all.next).toBeNull();
    expect(all.deployments.length).toBeGreaterThan(5);
    // the total the page says is the API's count
    expect([all.offset, all.total_count, all.total_count_capped]).toEqual([0, all.deployments.length, false]);
    await page
      .getByText(
        `Showing 1–${all.deployments.length} of ${all.total_count} deployments, newest first: all that match.`,
      )
      .waitFor();
    const table = page.getByRole('table', { name: 'Deployments, newest first' });
    const shown = async () => (await bodyCells(table)).map((r) => [r[1], r[2]!.split('\n')[0]]);
    const expected = (list: any[]) => list.map((d) => [d.environment, d.artifact.name]);
    expect(await shown()).toEqual(expected(all.deployments));

    // filtered by the form, as the API filters
    await page.getByLabel('Environment').fill('staging');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/environment=staging/);
    const staging = await t.api(`/deployments/${t.org}?environment=staging`);
    await page
      .getByText(
        `Showing 1–${staging.deployments.length} of ${staging.total_count} deployments, newest first: all that match.`,
      )
      .waitFor();
    expect(await shown()).toEqual(expected(staging.deployments));

    // paged with the API's next link
    await page.goto(`${t.baseUrl}/${t.org}/deployments?per_page=5`);
    const first = await t.api(`/deployments/${t.org}?per_page=5`);
    await page
      .getByText(
        `Showing 1–5 of ${first.total_count} deployments, newest first; older ones on the next page (5 a page).`,
      )
      .waitFor();
    expect(await shown()).toEqual(expected(first.deployments));
    await page.getByRole('link', { name: 'Next page (older)' }).click();
    // the next page brings the API's page 2, and says where it stands
    const second = await t.api(first.next.replace(/^.*\/api\/v2/, ''));
    expect(second.offset).toBe(5);
    await page
      .getByText(new RegExp(`^Showing 6–10 of ${first.total_count} deployments, newest first`))
      .waitFor();
    expect(await shown()).toEqual(expected(second.deployments));
    expect(new URL(page.url()).searchParams.get('page')).toBe(new URL(first.next).searchParams.get('page'));
    await page.getByRole('link', { name: 'Newest deployments' }).click();
    await page
      .getByText(`Showing 1–5 of ${first.total_count} deployments, newest first; older ones`)
      .waitFor();
  });

  it('marks a rollback as the API marks it: the build whose tests failed, undone in dev', async () => {
    const answer = await t.api(`/deployments/${t.org}?environment=dev`);
    expect(answer.next).toBeNull();
    const rollbacks = answer.deployments.filter((d: any) => d.rollback);
    // the demo rolls dev back once, to the payments build before the one whose tests failed
    expect(rollbacks).toHaveLength(1);
    const back = rollbacks[0];
    expect(back.artifact.name).toMatch(/^ghcr\.io\/acme\/payments-api:/);
    expect(back.commits).toEqual([]);
    expect(back.change_lead_time).toBeNull();
    // what it replaced had run there after it: the rolled-back build was deployed to dev before
    const undone = answer.deployments.find(
      (d: any) => d.artifact.fingerprint === back.replaced[0].fingerprint && d.started_at < back.started_at,
    );
    expect(undone).toBeTruthy();
    expect(
      answer.deployments.some(
        (d: any) =>
          d.artifact.fingerprint === back.artifact.fingerprint &&
          d.started_at < undone.started_at &&
          !d.rollback,
      ),
    ).toBe(true);

    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/deployments?environment=dev`);
    await page
      .getByText(
        `Showing 1–${answer.deployments.length} of ${answer.total_count} deployments, newest first: all that match.`,
      )
      .waitFor();
    const table = page.getByRole('table', { name: 'Deployments, newest first' });
    const rows = await bodyCells(table);
    // the Kind column says Rollback exactly where the API says rollback, and nowhere else
    expect(rows.map((r) => r[4])).toEqual(
      answer.deployments.map((d: any) => (d.rollback ? '↶ Rollback' : 'Deployment')),
    );
    const i = answer.deployments.indexOf(back);
    expect(rows[i]![2]).toContain(back.artifact.name);
    expect(rows[i]![3]).toContain(back.replaced[0].name);
    expect(rows[i]![5]).toBe('none (rollback)');
    const started = table.locator('tbody tr').nth(i).getByRole('link').first();
    expect(await started.getAttribute('href')).toBe(
      `/${t.org}/environments/dev/snapshots/${back.snapshot_index}`,
    );
  });

  it('says what is wrong with a filter, an unknown environment or an unknown repository', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/deployments?from=yesterday`);
    await page
      .getByRole('alert')
      .filter({
        hasText:
          '“from” is not a time: “yesterday”. Give a date (YYYY-MM-DD), an ISO 8601 time or epoch seconds.',
      })
      .waitFor();
    expect(await page.getByRole('table').count()).toBe(0);

    await page.goto(`${t.baseUrl}/${t.org}/deployments?environment=nowhere`);
    await page
      .getByRole('alert')
      .filter({
        hasText: "Could not load the deployments. Not found: Environment named 'nowhere' does not exist",
      })
      .waitFor();

    await page.goto(`${t.baseUrl}/${t.org}/repos/acme/nowhere`);
    await page.getByRole('heading', { name: 'Repository acme/nowhere', level: 1 }).waitFor();
    await page.getByRole('alert').filter({ hasText: "Not found: Repo 'acme/nowhere' not found" }).waitFor();
    // the browser logs the refused requests; they were asked for
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of 404/.test(p)));
  });

  it("shows a repository's deployments, lead time and what runs per environment, and its builds", async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}`);
    await page
      .getByRole('region', { name: 'Repositories' })
      .getByRole('link', { name: 'acme/payments' })
      .click();
    await page.getByRole('heading', { name: 'Repository acme/payments', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}/repos/acme/payments`);
    const table = page.getByRole('table', {
      name: 'Deployments, lead time and what runs now, per environment',
    });
    await table.waitFor();
    const q = await linkQuery(table.locator('tbody tr').first().getByRole('link').nth(1));
    expect(q.get('repo')).toBe('acme/payments');
    const d = await t.api(`/repos/${t.org}/acme%2Fpayments/delivery?from=${q.get('from')}`);
    expect(d.environments.length).toBeGreaterThan(0);
    const rows = await bodyCells(table);
    expect(rows.map((r) => r.slice(0, 4))).toEqual(
      d.environments.map((e: any) => [
        e.environment,
        String(e.deployments),
        leadTime(e.lead_time_for_changes.p50),
        leadTime(e.lead_time_for_changes.p90),
      ]),
    );
    for (const [i, e] of d.environments.entries()) {
      // how many run, as the API counts them; the demo's lists are whole
      expect(e.running).toHaveLength(e.running_count);
      if (e.running_count > 0) {
        expect(rows[i]![4]).toContain(
          `${e.running_count} artifact${e.running_count === 1 ? '' : 's'} running`,
        );
      }
      for (const r of e.running) {
        expect(rows[i]![4]).toContain(r.name);
        expect(rows[i]![4]).toContain(r.git_commit.slice(0, 10));
      }
    }
    const builds = await bodyCells(page.getByRole('figure', { name: 'Builds per week' }).getByRole('table'));
    expect(builds.map((r) => r[1])).toEqual(d.builds.map((b: any) => String(b.builds)));
    expect(d.builds.some((b: any) => b.builds > 0)).toBe(true);

    // each count opens the deployments it counts
    await table.locator('tbody tr').first().getByRole('link').nth(1).click();
    await page.getByRole('heading', { name: 'Deployments', level: 1 }).waitFor();
    const n = d.environments[0].deployments;
    await page.getByText(`Showing 1–${n} of ${n} deployment`).waitFor();
  });

  it('offers Retry when the figures cannot be loaded, and shows an empty organization in words', async () => {
    const page = await t.open();
    await page.route('**/api/v2/dora/**', (route) => route.abort('connectionrefused'));
    await page.goto(`${t.baseUrl}/${t.org}`);
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the delivery figures' });
    await alert.waitFor();
    expect(await alert.innerText()).toContain('The server could not be reached');
    await page.unroute('**/api/v2/dora/**');
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('figure', { name: /^Deployment frequency/ }).waitFor();
    t.problems.splice(0);
    // the environments fail on their own, and say so with a Retry
    const again = await t.open();
    await again.route('**/api/v2/environments-now/**', (route) => route.abort('connectionrefused'));
    await again.goto(`${t.baseUrl}/${t.org}`);
    const failed = again.getByRole('alert').filter({ hasText: 'Could not load the environments' });
    await failed.waitFor();
    expect(await failed.innerText()).toContain('The server could not be reached');
    await again.unroute('**/api/v2/environments-now/**');
    await failed.getByRole('button', { name: 'Retry' }).click();
    await again
      .getByRole('table', { name: ENV_TABLE })
      .getByRole('link', { name: /^\d+$/ })
      .first()
      .waitFor();
    t.problems.splice(0);

    const empty = await t.open({ signedIn: false });
    await signIn(empty, t.baseUrl, t.empty.org, t.empty.apiKey);
    await empty.getByRole('heading', { name: `Delivery in ${t.empty.org}`, level: 1 }).waitFor();
    await empty.getByText('No environments yet').waitFor();
    await empty.getByText(/^No repository yet/).waitFor();
    const keys = empty.getByRole('region', { name: 'Delivery over the last 12 weeks' }).locator('dl.facts');
    await keys.waitFor();
    expect(await keys.innerText()).toMatch(/Deployments\s+0 \(0 a day\)/);
    expect(await keys.innerText()).toContain('no restores');
  });

  it('axe-core finds no serious violation, light or dark, and nothing scrolls sideways at 390 px', async () => {
    const pages = [
      { path: `/${t.org}`, ready: 'Deployment frequency: deployments per week' },
      { path: `/${t.org}/deployments`, ready: /^Showing 1–\d+ of \d+ deployments/ },
      { path: `/${t.org}/repos/acme/payments`, ready: 'Builds per week' },
    ];
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      const page = await t.open({ axe: true, colorScheme: scheme });
      for (const { path, ready } of pages) {
        await page.goto(`${t.baseUrl}${path}`);
        await page.getByText(ready).first().waitFor();
        await page.waitForLoadState('networkidle');
        found.push(...(await seriousViolations(page)).map((v) => `${scheme} ${path}: ${v}`));
      }
      // the bars take the theme's colours: never the background they stand on
      await page.goto(`${t.baseUrl}/${t.org}`);
      await page.getByText(pages[0]!.ready).waitFor();
      const colours = await page.evaluate<{ bar: string; panel: string; tick: string }>(`(() => {
        const bar = document.querySelector('rect.chart-bar');
        const tick = document.querySelector('.chart-tick');
        const panel = document.querySelector('.chart-picture');
        return { bar: getComputedStyle(bar).fill, tick: getComputedStyle(tick).fill, panel: getComputedStyle(panel).backgroundColor };
      })()`);
      expect(colours.bar, scheme).not.toBe(colours.panel);
      expect(colours.tick, scheme).not.toBe(colours.panel);
      expect(colours.panel, scheme).toBe(scheme === 'dark' ? 'rgb(20, 28, 47)' : 'rgb(245, 247, 250)');
    }
    expect(found).toEqual([]);

    const phone = await t.open({ viewport: { width: 390, height: 844 } });
    for (const { path, ready } of pages) {
      await phone.goto(`${t.baseUrl}${path}`);
      await phone.getByText(ready).first().waitFor();
      await phone.waitForLoadState('networkidle');
      expect(await phone.evaluate<number>('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(
        390,
      );
    }
  });
});
