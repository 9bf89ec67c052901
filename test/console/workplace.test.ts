/**
 * The console as a workplace, on the demo organization: search by name, exposure by fingerprint,
 * grey states in their own words, long lists that say how many, errors with Retry, phone width,
 * the dark theme, and an automated accessibility check (axe-core) of every page.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { seriousViolations } from './axe.js';
import { describeConsole, signIn } from './pages.js';

/** Every page of the console, with what shows it has loaded. */
async function pages(t: { org: string; api: (path: string) => Promise<any> }) {
  const trail = await t.api(`/trails/${t.org}/payments/payments-1`);
  const fp: string = trail.compliance_status.artifacts_statuses['payments-api'].artifact_fingerprint;
  const env = await t.api(`/environments/${t.org}/staging`);
  const latest: number = env.latest_snapshot_index;
  return [
    { path: `/${t.org}`, ready: /^Environments now$/ },
    { path: `/${t.org}/deployments`, ready: /^Deployments$/ },
    { path: `/${t.org}/repos/acme/payments`, ready: /^Repository acme\/payments$/ },
    { path: `/${t.org}/environments`, ready: /^Environments$/ },
    { path: `/${t.org}/environments/staging`, ready: /^Latest snapshot/ },
    { path: `/${t.org}/environments/staging/snapshots/${latest}`, ready: /^Pods and instances$/ },
    { path: `/${t.org}/environments/staging/diff?from=${latest - 3}&to=${latest}`, ready: /^Unchanged/ },
    { path: `/${t.org}/flows`, ready: /^Flows$/ },
    { path: `/${t.org}/flows/payments`, ready: /^Flow payments$/ },
    { path: `/${t.org}/flows/payments/trails/payments-1`, ready: /^Trail attestations$/ },
    { path: `/${t.org}/flows/payments/artifacts/${fp}`, ready: /^Artifact / },
    { path: `/${t.org}/search?q=payments`, ready: /^Names containing/ },
    { path: `/${t.org}/exposure?purl=${encodeURIComponent('pkg:npm/lodash@4.17.20')}`, ready: /^Exposure$/ },
    { path: `/${t.org}/actions`, ready: /^Actions$/ },
    { path: `/${t.org}/policies`, ready: /^Policies$/ },
    { path: `/${t.org}/policies/build-provenance`, ready: /^Compare versions$/ },
    { path: `/${t.org}/settings/members`, ready: /^Members$/ },
    { path: `/${t.org}/settings/service-accounts`, ready: /^Service accounts$/ },
    { path: `/${t.org}/audit-log`, ready: /^Audit log$/ },
    { path: `/${t.org}/settings/retention`, ready: /^Removed lately$/ },
    { path: `/${t.org}/nowhere`, ready: /^Page not found$/ },
  ];
}

async function openAndWait(page: Page, url: string, ready: RegExp): Promise<void> {
  await page.goto(url);
  await page.getByRole('heading', { name: ready }).first().waitFor();
  await page.waitForLoadState('networkidle');
}

/** Opens the page's first five closed disclosures, so what hides behind them is checked too. */
async function openDisclosures(page: Page): Promise<void> {
  const closed = page.locator('details:not([open]) > summary');
  for (let i = 0; i < 5 && (await closed.count()) > 0; i++) {
    await closed.first().click();
  }
}

describeConsole('the console as a workplace', (t) => {
  it('finds flows, trails, environments and artifacts by name, and exposure by fingerprint', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('searchbox', { name: 'Search by name, fingerprint or commit' }).fill('payments');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Names containing “payments”' }).waitFor();
    const api = await t.api(`/search/${t.org}/names?q=payments`);
    const flows = page.getByRole('region', { name: /^Flows: / });
    expect(await flows.getByRole('link').allInnerTexts()).toEqual(api.flows.map((f: any) => f.name));
    const trails = page.getByRole('region', { name: /^Trails: / });
    expect(await trails.getByRole('link').count()).toBe(api.trails.length);
    const artifacts = page.getByRole('region', { name: /^Artifacts: / });
    expect(await artifacts.getByRole('link').count()).toBe(api.artifacts.length);
    expect(api.artifacts.length).toBeGreaterThan(0);
    // one search box on the search page
    expect(await page.getByRole('searchbox').count()).toBe(1);
    await flows.getByRole('link', { name: 'payments', exact: true }).click();
    await page.getByRole('heading', { name: 'Flow payments', level: 1 }).waitFor();

    const fp: string = api.artifacts[0].fingerprint;
    await page.goto(`${t.baseUrl}/${t.org}/exposure`);
    await page.getByLabel('Look up by').selectOption('fingerprint');
    await page.getByLabel('Fingerprint (SHA-256, or its first characters)').fill(fp);
    await page.getByRole('button', { name: 'Show exposure' }).click();
    await page.waitForURL(new RegExp(`fingerprint=${fp}`));
    await page.getByText(new RegExp(`^\\d+ artifacts? with fingerprint ${fp.slice(0, 16)}`)).waitFor();
  });

  it('says "No policy attached" where no policy decides, and each other grey state in its own words and symbol', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments/dev`);
    await page.getByRole('heading', { name: /^Latest snapshot/ }).waitFor();
    const compliance = page
      .getByRole('term')
      .filter({ hasText: 'Compliance' })
      .locator('xpath=following-sibling::dd');
    expect(await compliance.innerText()).toBe('∅ No policy attached');
    expect(await page.getByRole('main').innerText()).not.toContain('Unknown');
    // a snapshot where an artifact exited: its own symbol, not "?"
    const events: Array<{ type: string; snapshot_index: number }> = await t.api(
      `/environments/${t.org}/staging/events?per_page=100`,
    );
    const exited = events.find((e) => e.type === 'exited' || e.type.includes('exit'));
    expect(exited).toBeDefined();
    await page.goto(`${t.baseUrl}/${t.org}/environments/staging/snapshots/${exited!.snapshot_index}`);
    const badge = page.getByText(/^↘ Exited \(was \d+\)$/).first();
    await badge.waitFor();
  });

  it('shows the evidence of a trail of 620 attestations: 500 at first, the rest on "Load more", saying how many', async () => {
    const send = async (method: string, path: string, form: FormData) => {
      const res = await fetch(`${t.baseUrl}/api/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${t.apiKey}` },
        body: form,
      });
      expect(res.status, await res.text()).toBe(201);
    };
    const begin = new FormData();
    begin.set('data_json', JSON.stringify({ name: 'build-many', description: '' }));
    // in the release flow, whose latest trail is already the demo's latest activity: the other
    // files' expectations of the flow list hold whichever runs first
    await send('PUT', `/trails/${t.org}/cli-release`, begin);
    const TOTAL = 620;
    const names = Array.from({ length: TOTAL }, (_, i) => `check-${String(i + 1).padStart(3, '0')}`);
    // in order (the newest is the last), eight requests at a time
    for (let i = 0; i < TOTAL; i += 8) {
      await Promise.all(
        names.slice(i, i + 8).map((name) => {
          const form = new FormData();
          form.set('data_json', JSON.stringify({ attestation_name: name, is_compliant: true }));
          return send('POST', `/attestations/${t.org}/cli-release/trail/build-many/generic`, form);
        }),
      );
    }
    const first = await t.api(`/attestations/${t.org}?flow=cli-release&trail=build-many&per_page=100`);
    expect(first.total_count).toBe(TOTAL);

    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/flows/cli-release/trails/build-many`);
    const status = page.getByRole('status').filter({ hasText: /^Evidence shown for/ });
    await status
      .filter({ hasText: `Evidence shown for 500 of ${TOTAL} attestations of this trail, newest first.` })
      .waitFor();
    const slot = (name: string) =>
      page
        .getByRole('list', { name: 'Trail attestations' })
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: new RegExp(`^${name} `), level: 4 }) });
    // every slot is listed; the evidence of the oldest is not read yet
    expect(await slot('check-001').count()).toBe(1);
    expect(await slot('check-001').innerText()).not.toMatch(/reported .* by /);
    expect(await slot(names[TOTAL - 1]!).innerText()).toMatch(/reported .* by /);

    await status.getByRole('button', { name: 'Load 100 more' }).click();
    await status
      .filter({ hasText: `Evidence shown for 600 of ${TOTAL} attestations of this trail, newest first.` })
      .waitFor();
    await status.getByRole('button', { name: 'Load 100 more' }).click();
    await status
      .filter({ hasText: `Evidence shown for ${TOTAL} attestations, all of this trail.` })
      .waitFor();
    expect(await status.getByRole('button').count()).toBe(0);
    // the oldest ones, past the first 500, show who reported them like the rest
    for (const name of ['check-001', 'check-020', 'check-120', 'check-121', names[TOTAL - 1]!]) {
      expect(await slot(name).count(), name).toBe(1);
      expect(await slot(name).innerText(), name).toMatch(/reported .* by /);
    }
  }, 240_000);

  it('says how many attestations a trail shows, and offers Retry when a request fails', async () => {
    const page = await t.open();
    await page.goto(`${t.baseUrl}/${t.org}/flows/payments/trails/payments-1`);
    const trail = await t.api(`/attestations/${t.org}?flow=payments&trail=payments-1&per_page=100`);
    await page
      .getByRole('status')
      .filter({ hasText: `Evidence shown for ${trail.data.length} attestations, all of this trail.` })
      .waitFor();

    // the network fails once: the page says what failed, in words, and Retry loads it
    await page.route('**/api/v2/environments/**', (route) => route.abort('connectionrefused'));
    await page.goto(`${t.baseUrl}/${t.org}/environments/prod`);
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the environment' });
    await alert.waitFor();
    expect(await alert.innerText()).toContain('The server could not be reached');
    expect(await alert.innerText()).not.toMatch(/^Failed to fetch$/);
    await page.unroute('**/api/v2/environments/**');
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('heading', { name: /^Latest snapshot/ }).waitFor();
    // the refused requests are the failure under test
    t.problems.splice(0);
  });

  it('lists the actions: what they watch, triggers in words, targets as the API shows them, last deliveries', async () => {
    const put = await fetch(`${t.baseUrl}/api/v2/actions/${t.org}/environments`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'prod-alerts',
        environments: ['prod'],
        triggers: ['ON_NON_COMPLIANT_ENV', 'ON_STARTED_ARTIFACT'],
        targets: [
          {
            type: 'WEBHOOK',
            webhook: 'https://hooks.example.com/verity/abcdef0123456789',
            payload_version: '1.0',
          },
          { type: 'EMAIL', emails: ['sre@example.com'] },
        ],
      }),
    });
    expect(put.status, await put.text()).toBeLessThan(300);
    const actions = await t.api(`/actions/${t.org}`);
    const action = actions.find((a: any) => a.name === 'prod-alerts');
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/actions`);
    const section = page.getByRole('region', { name: /^prod-alerts/ });
    await section.waitFor();
    const text = await section.innerText();
    expect(text).toContain('When the environment becomes non-compliant, or an artifact starts.');
    expect(text).toContain(action.targets[0].webhook);
    expect(text).toContain('sre@example.com');
    expect(text).toContain("signed with the organization's key");
    expect(await section.getByText('No delivery yet').count()).toBe(2);
    await section.getByRole('link', { name: 'prod', exact: true }).click();
    await page.getByRole('heading', { name: 'Environment prod', level: 1 }).waitFor();
  });

  it('never scrolls sideways at 390 px wide: tables stay tables and scroll in their own box', async () => {
    const page = await t.open({ viewport: { width: 390, height: 844 }, axe: true });
    let scrolling = 0;
    const found: string[] = [];
    for (const { path, ready } of await pages(t)) {
      await openAndWait(page, `${t.baseUrl}${path}`, ready);
      await openDisclosures(page);
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, path).toBeLessThanOrEqual(390);
      // every table keeps its table semantics (display: table) inside a box of its own; a box its
      // table overflows scrolls sideways, takes keyboard focus and is named after the table
      const tables = await page.evaluate<
        Array<{
          display: string;
          role: string | null;
          box: boolean;
          overflows: boolean;
          scrolled: number;
          tab: number;
          name: string | null;
          caption: string;
        }>
      >(`[...document.querySelectorAll('main table')].map((t) => {
        const box = t.parentElement;
        const overflows = box.scrollWidth > box.clientWidth + 1;
        if (overflows) { box.scrollLeft = 40; }
        return { display: getComputedStyle(t).display, role: t.getAttribute('role'),
          box: box.classList.contains('table-box'), overflows, scrolled: box.scrollLeft, tab: box.tabIndex,
          name: box.getAttribute('aria-label'), caption: t.caption ? t.caption.textContent.trim() : '' };
      })`);
      for (const table of tables) {
        expect(table, path).toMatchObject({ display: 'table', role: null, box: true });
        if (table.overflows) {
          scrolling += 1;
          expect(table.scrolled, path).toBeGreaterThan(0);
          expect(table.tab, path).toBe(0);
          expect(table.name, path).toBe(`${table.caption || 'Table'} (scrolls sideways)`);
        } else {
          expect(table.name, path).toBeNull();
        }
      }
      found.push(...(await seriousViolations(page)).map((v) => `${path}: ${v}`));
    }
    // wide tables there are: the deployments list at least is wider than a phone
    expect(scrolling).toBeGreaterThan(0);
    expect(found).toEqual([]);
  }, 240_000);

  it('follows the system dark setting, and the theme control overrides it and is remembered', async () => {
    const page = await t.open({ colorScheme: 'dark' });
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    const background = () => page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
    expect(await background()).toBe('rgb(11, 17, 32)');
    await page.getByLabel('Theme').selectOption('light');
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.reload();
    await page.getByRole('heading', { name: 'Environments', level: 1 }).waitFor();
    expect(await page.getByLabel('Theme').inputValue()).toBe('light');
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.getByLabel('Theme').selectOption('system');
    expect(await background()).toBe('rgb(11, 17, 32)');
  });

  it('axe-core finds no serious or critical violation on any page, light or dark', async () => {
    const signedOut = await t.open({ signedIn: false, axe: true });
    await signedOut.goto(`${t.baseUrl}/sign-in`);
    await signedOut.getByLabel('API key').waitFor();
    expect(await seriousViolations(signedOut), 'sign-in').toEqual([]);
    await signIn(signedOut, t.baseUrl, t.org, t.apiKey);

    const found: string[] = [];
    const all = await pages(t);
    // every page light; dark, the pages with the most kinds of state and colour, and the forms
    const dark = all.filter((p) =>
      /staging$|staging\/snapshots|trails\/|exposure|actions|policies\/|settings|audit-log/.test(p.path),
    );
    for (const [scheme, list] of [
      ['light', all],
      ['dark', dark],
    ] as const) {
      const page = await t.open({ axe: true, colorScheme: scheme });
      for (const { path, ready } of list) {
        await openAndWait(page, `${t.baseUrl}${path}`, ready);
        // what hides behind a disclosure is checked too
        await openDisclosures(page);
        found.push(...(await seriousViolations(page)).map((v) => `${scheme} ${path}: ${v}`));
      }
    }
    expect(found).toEqual([]);
  }, 240_000);
});
