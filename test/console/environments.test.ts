/** The environment pages of the console, on the demo organization, as a person reads them. */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsole, signIn } from './pages.js';

/** The row of a table whose row header reads `name`. */
const row = (page: Page, name: string | RegExp) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });

describeConsole('the environment pages', (t) => {
  it('lists the environments with compliance in words, type, last report, running count and tags, and filters them', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    await page.getByText('3 environments').waitFor();

    const staging = await row(page, /^staging/).innerText();
    expect(staging).toContain('Non-compliant');
    expect(staging).toContain('K8S');
    expect(staging).toContain('tier: staging');
    expect(staging).toMatch(/minutes? ago|just now|seconds? ago/);
    const prod = await row(page, /^prod/).innerText();
    expect(prod).toContain('Compliant');
    expect(prod).not.toContain('Non-compliant');
    expect(prod).toContain('on-call: sre');
    const dev = await row(page, /^dev/).innerText();
    // no policy decides dev's compliance: said as such, not as "Unknown"
    expect(dev).toContain('No policy attached');
    expect(dev).not.toContain('Unknown');
    // redis, payments-api and web run in dev
    expect(dev).toMatch(/\b3\b/);

    await page.getByLabel('Tag (key or key:value)').fill('tier:production');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 environment', { exact: true }).waitFor();
    expect(await page.getByRole('rowheader').allInnerTexts()).toEqual([expect.stringMatching(/^prod/)]);
    expect(new URL(page.url()).searchParams.get('tag')).toBe('tier:production');

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByText('3 environments').waitFor();
    // clearing empties the inputs too, so the next filter does not bring the old one back
    expect(await page.getByLabel('Tag (key or key:value)').inputValue()).toBe('');
    await page.getByLabel('Name contains').fill('stag');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 environment', { exact: true }).waitFor();
    expect(await page.getByRole('rowheader').allInnerTexts()).toEqual([expect.stringMatching(/^staging/)]);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByText('3 environments').waitFor();
    expect(await page.getByLabel('Name contains').inputValue()).toBe('');
    await page.getByLabel('Type').selectOption('ECS');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No environment matches these filters.').waitFor();

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('link', { name: 'prod', exact: true }).click();
    await page.getByRole('heading', { name: 'Environment prod', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}/environments/prod`);
  });

  it('shows an environment: its timeline, what runs with provenance, failed policies and events', async () => {
    const page = await t.page();
    // the console asks for 100 events at a time; pages of 3 let the demo's few show the load more
    await page.route('**/api/v2/environments/*/staging/events?*', (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('per_page', '3');
      return route.continue({ url: url.toString() });
    });
    await page.goto(`${t.baseUrl}/${t.org}/environments/staging`);
    await page.getByRole('heading', { name: 'Environment staging', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Timeline of snapshots' }).waitFor();
    const env = await t.api(`/environments/${t.org}/staging`);
    const latest: number = env.latest_snapshot_index;
    expect(latest).toBeGreaterThan(5);

    // every snapshot of the window is a span with its number, times, changes and compliance in words
    const bars = page
      .getByRole('group', { name: /^Snapshots \d+ to \d+ in time, oldest first$/ })
      .getByRole('link');
    // the timeline draws once its snapshots are read: wait for the bars, do not count them at once
    await expect.poll(() => bars.count()).toBeGreaterThan(5);
    const last = page.getByRole('link', {
      name: new RegExp(`^Snapshot ${latest}, .*: \\d+ started, \\d+ changed, \\d+ exited, non-compliant$`),
    });
    await last.waitFor();
    expect(await page.getByRole('link', { name: /, non-compliant$/ }).count()).toBeGreaterThan(1);
    expect(await page.getByRole('link', { name: /, compliant$/ }).count()).toBeGreaterThan(1);

    // the latest snapshot: the web build waiting for its security review, from its trail
    const latestSection = page.getByRole('region', { name: /^Latest snapshot/ });
    const web = row(page, /ghcr\.io\/acme\/web:2\.8\.\d+/);
    const webText = await web.innerText();
    expect(webText).toContain('Non-compliant');
    expect(webText).toMatch(/Flow frontend · trail frontend-\d+ · commit [0-9a-f]{10}/);
    expect(await row(page, /ghcr\.io\/acme\/payments-api/).innerText()).toContain('Compliant');
    expect(await latestSection.getByText('build-provenance').count()).toBeGreaterThan(0);
    expect(await latestSection.innerText()).toMatch(/Failed by 1 artifact/);

    // events of the latest 20 snapshots, newest first, saying which of how many, with more on demand
    const lo = Math.max(1, latest - 19);
    const eventsOf = async (n: number) => {
      const res = await fetch(
        `${t.baseUrl}/api/v2/environments/${t.org}/staging/events?interval=~19..~0&page=${n}&per_page=3`,
        { headers: { authorization: `Bearer ${t.apiKey}` } },
      );
      expect(res.status).toBe(200);
      const list = (await res.json()) as Array<{ snapshot_index: number; artifact_name: string }>;
      return {
        total: Number(res.headers.get('x-total-count')),
        rows: list.map((e) => [e.snapshot_index, e.artifact_name]),
      };
    };
    const first = await eventsOf(1);
    expect(first.total).toBeGreaterThan(3);
    await page
      .getByText(`Events 1–3 of ${first.total} in snapshots ${lo} to ${latest}, newest first.`)
      .waitFor();
    const events = page.getByRole('table', { name: `Events of snapshots ${lo} to ${latest}, newest first` });
    const shownEvents = async () =>
      Promise.all(
        (await events.locator('tbody tr').all()).map(async (r) => {
          const cells = await r.getByRole('cell').allInnerTexts();
          return [Number(cells[1]!.replace('#', '')), cells[3]!.split(' ')[0]];
        }),
      );
    expect(await shownEvents()).toEqual(first.rows);
    await page.getByRole('button', { name: 'Load more events of these snapshots' }).click();
    const shownNow = Math.min(6, first.total);
    await page
      .getByText(`Events 1–${shownNow} of ${first.total} in snapshots ${lo} to ${latest}, newest first.`)
      .waitFor();
    // the rows it brought are the API's page 2
    expect(await shownEvents()).toEqual([...first.rows, ...(await eventsOf(2)).rows]);
    await page.unroute('**/api/v2/environments/*/staging/events?*');

    // links lead on: the trail of the running web build, and the latest snapshot
    await web.getByRole('link', { name: /^frontend-\d+$/ }).click();
    await page.getByRole('heading', { level: 1, name: /frontend-\d+/ }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(
      new RegExp(`^/${t.org}/flows/frontend/trails/frontend-\\d+$`),
    );
    await page.goBack();
    await last.click();
    await page.waitForURL(`${t.baseUrl}/${t.org}/environments/staging/snapshots/${latest}`);
  });

  it('shows a snapshot: its artifacts and pods, the changes since the one before, reasons and neighbours', async () => {
    const page = await t.page();
    // the snapshot where the build with failing unit tests started in staging
    const snapshots: Array<{ index: number; compliant: boolean }> = await t.api(
      `/snapshots/${t.org}/staging?per_page=100`,
    );
    const bad = snapshots
      .filter((s) => s.compliant === false)
      .map((s) => s.index)
      .sort((a, b) => a - b)[0]!;
    const snap = await t.api(`/snapshots/${t.org}/staging/${bad}`);
    const started = snap.artifacts.find((a: any) => a.annotation.was === 0 && a.annotation.now > 0);
    await page.goto(`${t.baseUrl}/${t.org}/environments/staging/snapshots/${bad}`);
    await page.getByRole('heading', { level: 1, name: `Snapshot ${bad} of staging` }).waitFor();
    const changes = page.getByRole('region', { name: `Changes since snapshot ${bad - 1}` });
    await changes.waitFor();
    const changed = await changes.innerText();
    expect(changed).toContain(
      `${snap.summary.started} started, ${snap.summary.changed} changed, ${snap.summary.exited} exited.`,
    );
    expect(changed).toContain(started.name);
    expect(changed).toContain('Non-compliant');
    expect(changed).toMatch(/Started \(2\)/);
    // why it is not compliant, in the API's words
    expect(started.reasons_for_incompliance.length).toBeGreaterThan(0);
    for (const reason of started.reasons_for_incompliance) {
      expect(changed).toContain(reason);
    }
    const pods = await page.getByRole('region', { name: 'Pods and instances' }).innerText();
    for (const pod of Object.keys(started.pods)) {
      expect(pods).toContain(pod);
    }
    expect(await page.getByRole('region', { name: 'Policies applied' }).innerText()).toContain(
      'build-provenance',
    );

    await page.getByRole('link', { name: `← Previous snapshot #${bad - 1}` }).click();
    await page.getByRole('heading', { level: 1, name: `Snapshot ${bad - 1} of staging` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}/environments/staging/snapshots/${bad - 1}`);
    await page.getByRole('link', { name: `Next snapshot #${bad} →` }).click();
    await page.getByRole('heading', { level: 1, name: `Snapshot ${bad} of staging` }).waitFor();
  });

  it('teaches how to report an environment when there is none', async () => {
    const page = await t.open({ signedIn: false });
    await signIn(page, t.baseUrl, t.empty.org, t.empty.apiKey);
    await page.goto(`${t.baseUrl}/${t.empty.org}/environments`);
    await page.getByRole('heading', { name: 'No environments yet' }).waitFor();
    const text = await page.getByRole('main').innerText();
    expect(text).toContain(`KOSLI_HOST=${t.baseUrl} KOSLI_ORG=${t.empty.org}`);
    expect(text).toContain('kosli snapshot k8s');
    expect(text).not.toContain(t.empty.apiKey);
  });
});
