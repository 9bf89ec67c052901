/** The flow, trail, artifact and search pages of the console, on the demo organization. */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsole, signIn } from './pages.js';

const row = (page: Page, name: string | RegExp) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });

describeConsole('the flow pages', (t) => {
  it('lists the flows with their latest state, sorted by name or by latest activity', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/flows`);
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    await page.getByText('4 flows').waitFor();
    const names = () => page.getByRole('rowheader').allInnerTexts();
    expect(await names()).toEqual(['cli', 'cli-release', 'frontend', 'payments']);
    expect(await row(page, 'payments').innerText()).toContain('Compliant');
    expect(await row(page, 'cli-release').innerText()).toContain('Incomplete');

    await page.getByLabel('Sort by').selectOption({ label: 'Name (Z to A)' });
    await expect.poll(names).toEqual(['payments', 'frontend', 'cli-release', 'cli']);
    // the release trail was the last thing the demo's pipelines did
    await page.getByLabel('Sort by').selectOption({ label: 'Latest activity (newest first)' });
    await expect.poll(async () => (await names())[0]).toBe('cli-release');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('latest_activity');
    await page.reload();
    await expect.poll(async () => (await names())[0]).toBe('cli-release');

    await page.getByRole('link', { name: 'payments', exact: true }).click();
    await page.getByRole('heading', { name: 'Flow payments', level: 1 }).waitFor();
  });

  it('shows a flow: its trails newest first, with compliance in words', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/flows/payments`);
    await page.getByRole('heading', { name: 'Flow payments', level: 1 }).waitFor();
    const trails = page.getByRole('table', { name: 'Trails, newest first' });
    await trails.waitFor();
    const names = await trails.getByRole('rowheader').allInnerTexts();
    const numbers = names.map((n) => Number(/payments-(\d+)/.exec(n)?.[1]));
    expect(numbers.length).toBeGreaterThan(2);
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    // the build whose unit tests failed
    expect(await row(page, /^payments-2/).innerText()).toContain('Non-compliant');
    expect(await row(page, /^payments-1/).innerText()).toContain('Compliant');
    await page.getByRole('link', { name: 'payments-2', exact: true }).click();
    await page.getByRole('heading', { name: 'Trail payments-2', level: 1 }).waitFor();
  });

  it('shows a trail: every slot compliant, non-compliant or missing with the reason', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/flows/cli-release/trails/v0.4.0`);
    await page.getByRole('heading', { name: 'Trail v0.4.0', level: 1 }).waitFor();
    const trailSlots = page.getByRole('list', { name: 'Trail attestations' });
    await trailSlots.waitFor();
    const slot = (list: typeof trailSlots, name: string) =>
      list
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: new RegExp(`^${name} `) }) });
    expect(await slot(trailSlots, 'lint').innerText()).toContain('Compliant');
    expect(await slot(trailSlots, 'never-alone-trail').innerText()).toMatch(
      /Missing\s+never reported: no attestation with this name was made/,
    );

    // an SBOM sent with another commit than the one the artifact was built from
    const linuxArm = page.getByRole('list', { name: 'Attestations of artifact linux-arm', exact: true });
    expect(await slot(linuxArm, 'sbom').innerText()).toMatch(
      /Missing\s+wrong commit: pending: no artifact named 'linux-arm' with commit [0-9a-f]{40}/,
    );
    // an artifact of the template never reported
    const debArm = page.getByRole('article', { name: /^Artifact deb-pkg-arm\b/ });
    expect(await debArm.innerText()).toMatch(
      /Missing\s+never reported: no artifact named deb-pkg-arm has been\s+attested in this trail/,
    );
    // the attestations that bound to no artifact, with the reason
    const unbound = page.getByRole('region', { name: 'Attestations not bound to an artifact' });
    expect(await unbound.innerText()).toMatch(
      /sbom \(generic\) for windows-arm64: pending: no artifact named 'windows-arm64'/,
    );
    // a reported artifact leads to its page
    await page
      .getByRole('article', { name: /^Artifact linux-amd64\b/ })
      .getByRole('link')
      .first()
      .click();
    await page.getByRole('heading', { name: 'Artifact acme-cli_0.4.0_linux-amd64', level: 1 }).waitFor();
  });

  it("shows a trail's evidence readably, its override with reason and original, and downloads", async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/flows/payments/trails/payments-3`);
    await page.getByRole('heading', { name: 'Trail payments-3', level: 1 }).waitFor();
    const artifact = page.getByRole('list', { name: 'Attestations of artifact payments-api' });
    await artifact.waitFor();
    /** The slot's text once its evidence is there, with every disclosure in it opened. */
    const read = async (name: string, shown: string | RegExp, scope = artifact) => {
      const item = scope
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: new RegExp(`^${name} `) }) });
      await item.getByText(shown).first().waitFor();
      for (const summary of await item.locator('summary').all()) {
        if ((await summary.locator('..').getAttribute('open')) === null) {
          await summary.click();
        }
      }
      return item.innerText();
    };

    // JUnit: counts in words (report_junit_delta_timestamp.xml: 5 tests in 2 suites)
    const junit = await read('unit-tests', '5 tests');
    expect(junit).toContain('5 tests: 5 passed, 0 failed, 0 errors, 0 skipped');
    expect(junit).toContain('src/components/TodoApp.test.tsx');
    // the scan was overridden: the reason, and the original scan with its finding
    const scan = await read('dependency-scan', /Reason:/);
    expect(scan).toContain('Overridden');
    expect(scan).toContain(
      'Override of a snyk attestation to compliant. Reason: SNYK-JS-LODASH-6139239 is not reachable from our code',
    );
    expect(scan).toContain('Snyk Open Source 1.1290.0: 0 high, 1 medium, 0 low findings');
    expect(scan).toContain('Prototype Pollution in lodash@4.17.20');
    // the custom type's summary rows
    const owner = await read('release-owner', 'Barbara');
    expect(owner).toMatch(/Name\s+Barbara/);
    expect(owner).toMatch(/Age\s+33/);
    // the quality gate
    expect(await read('code-quality', /quality gate/)).toContain('quality gate: OK');

    const trailSlots = page.getByRole('list', { name: 'Trail attestations' });
    const pr = await read('pull-request', 'barbara', trailSlots);
    expect(pr).toContain('MERGED');
    expect(await read('jira-ticket', 'PAY-203', trailSlots)).toContain('Exists');

    // the JUnit XML as it was uploaded
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      artifact.getByRole('button', { name: 'Download evidence file junit.xml' }).click(),
    ]);
    expect(readFileSync(await file.path(), 'utf8')).toContain(
      '<testsuite name="src/components/TodoApp.test.tsx"',
    );
    // the audit package: a gzip file
    const [audit] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download audit package' }).click(),
    ]);
    expect(audit.suggestedFilename()).toMatch(/\.tar\.gz$/);
    expect([...readFileSync(await audit.path()).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });

  it('shows an artifact: commit, build, evidence, state, and where it ran with links to snapshots', async () => {
    const page = await t.page();
    const trail = await t.api(`/trails/${t.org}/payments/payments-1`);
    const fp: string = trail.compliance_status.artifacts_statuses['payments-api'].artifact_fingerprint;
    const record = await t.api(`/artifacts/${t.org}/payments/fingerprint/${fp}`);
    // the console asks for 100 history lines at a time; pages of 5 let the demo's few show the load more
    const historyRoute = '**/api/v2/artifacts/*/payments/fingerprint/*/history?*';
    await page.route(historyRoute, (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('per_page', '5');
      return route.continue({ url: url.toString() });
    });
    await page.goto(record.html_url);
    await page
      .getByRole('heading', { name: /^Artifact ghcr\.io\/acme\/payments-api:1\.4\.1$/, level: 1 })
      .waitFor();
    const main = await page.getByRole('main').innerText();
    expect(main).toContain('Compliant');
    expect(main).toContain(record.git_commit.slice(0, 10));
    expect(main).toContain('payments-1');
    const evidence = await page.getByRole('table', { name: 'Evidence of this artifact' }).innerText();
    for (const name of ['unit-tests', 'dependency-scan', 'code-quality', 'release-owner']) {
      expect(evidence).toContain(name);
    }

    // its history, oldest first, saying which lines of how many, and the next page on demand
    const historyPage = (n: number) =>
      t.api(
        `/artifacts/${t.org}/payments/fingerprint/${fp}/history?trail=${record.trail_name}&page=${n}&per_page=5`,
      );
    const first = await historyPage(1);
    const total: number = first.pagination.total;
    expect(total).toBe(record.history_total);
    expect(total).toBeGreaterThan(5);
    const history = page.getByRole('list', { name: 'History, oldest first' });
    // a line is its time, then the event
    const lines = async () => {
      const times = await history.locator('time').allInnerTexts();
      const texts = await history.getByRole('listitem').allInnerTexts();
      return texts.map((l, i) => l.slice(times[i]!.length).trim());
    };
    await page.getByText(`Showing 1–5 of ${total} events, oldest first.`).waitFor();
    expect(await lines()).toEqual(first.data.map((h: { event: string }) => h.event));
    await page.getByRole('button', { name: 'Load 5 more' }).click();
    await page.getByText(`Showing 1–10 of ${total} events, oldest first.`).waitFor();
    const second = await historyPage(2);
    expect(await lines()).toEqual([...first.data, ...second.data].map((h: { event: string }) => h.event));
    await page.unroute(historyRoute);

    // it ran in dev, staging and prod, and was replaced everywhere by later builds; in dev twice:
    // dev was rolled back to it from the build whose tests failed
    const ran = page.getByRole('table', { name: 'Environments this artifact ran in' });
    for (const env of ['dev', 'staging', 'prod']) {
      await ran.getByRole('rowheader', { name: env, exact: true }).first().waitFor();
    }
    expect(await ran.getByRole('rowheader', { name: 'dev', exact: true }).count()).toBe(2);
    expect(await ran.getByRole('rowheader', { name: 'prod', exact: true }).count()).toBe(1);
    const prodRow = ran.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'prod' }) });
    const from = prodRow.getByRole('link', { name: /^snapshot #\d+$/ }).first();
    const n = Number((await from.innerText()).replace('snapshot #', ''));
    await from.click();
    await page.getByRole('heading', { name: `Snapshot ${n} of prod`, level: 1 }).waitFor();
    await page
      .getByRole('region', { name: 'Artifacts', exact: true })
      .getByRole('rowheader', { name: /ghcr\.io\/acme\/payments-api:1\.4\.1/ })
      .waitFor();
  });

  it('finds artifacts by fingerprint prefix and by commit', async () => {
    const page = await t.page();
    const trail = await t.api(`/trails/${t.org}/frontend/frontend-1`);
    const fp: string = trail.compliance_status.artifacts_statuses.web.artifact_fingerprint;
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('searchbox', { name: 'Search by name, fingerprint or commit' }).fill(fp.slice(0, 8));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /^1 artifact for fingerprint/ }).waitFor();
    const result = await page.getByRole('table', { name: 'Search results' }).innerText();
    expect(result).toContain('ghcr.io/acme/web:2.8.1');
    expect(result).toContain('frontend');
    await page.getByRole('link', { name: 'frontend-1' }).click();
    await page.getByRole('heading', { name: 'Trail frontend-1', level: 1 }).waitFor();

    await page.goto(`${t.baseUrl}/${t.org}/search?q=${trail.git_commit_info.sha1}`);
    await page.getByRole('heading', { name: /^1 artifact for commit/ }).waitFor();
    await page.getByRole('link', { name: 'ghcr.io/acme/web:2.8.1' }).click();
    await page.getByRole('heading', { name: 'Artifact ghcr.io/acme/web:2.8.1', level: 1 }).waitFor();

    await page.goto(`${t.baseUrl}/${t.org}/search?q=not-a-sha`);
    await page.getByText('No flow, trail, environment or artifact has “not-a-sha” in its name.').waitFor();
    await page.goto(`${t.baseUrl}/${t.org}/search?q=x`);
    await page.getByRole('alert').filter({ hasText: 'give 2 to 100 characters of a name' }).waitFor();
  });

  it('teaches how to attest when there is no flow', async () => {
    const page = await t.open({ signedIn: false });
    await signIn(page, t.baseUrl, t.empty.org, t.empty.apiKey);
    await page.goto(`${t.baseUrl}/${t.empty.org}/flows`);
    await page.getByRole('heading', { name: 'No flows yet' }).waitFor();
    const text = await page.getByRole('main').innerText();
    expect(text).toContain('kosli');
    expect(text).toMatch(/attest/);
  });
});
