/**
 * The policy pages of the console, on the demo organization: the policies and where each is
 * attached, each version's text as the API holds it, the line diff of two versions, and the
 * preview of attaching or detaching a policy, compared with the API's own preview of the same
 * request.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { seriousViolations } from './axe.js';
import { describeConsole, type ConsoleTest } from './pages.js';

/** A policy of this file's own, in two versions: the second relaxes one rule and adds one. */
const POLICY = 'console-review';
const V1 = `_schema: https://kosli.com/schemas/policy/environment/v1

artifacts:
  provenance:
    required: true

  trail-compliance:
    required: true
`;
const V2 = `_schema: https://kosli.com/schemas/policy/environment/v1

artifacts:
  provenance:
    required: true

  trail-compliance:
    required: false

  attestations:
    - name: unit-tests
      type: junit
`;

interface PreviewAnswer {
  snapshots: Array<{
    index: number;
    compliant_now: boolean | null;
    compliant_with_change: boolean | null;
    changes: Array<{ fingerprint: string; name: string; reasons: string[] }>;
  }>;
  summary: { snapshots: number; flipped_snapshots: number; flipped_artifacts: number };
}

async function putPolicy(t: ConsoleTest, yaml: string, comment: string): Promise<void> {
  const form = new FormData();
  form.set(
    'payload',
    JSON.stringify({ name: POLICY, description: 'Reviewed in the console', comment, type: 'env' }),
  );
  form.set('policy_file', new Blob([yaml], { type: 'application/x-yaml' }), 'policy.yml');
  const res = await fetch(`${t.baseUrl}/api/v2/policies/${t.org}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${t.apiKey}` },
    body: form,
  });
  expect(res.status, await res.text()).toBeLessThan(300);
}

/** The API's preview of a request, asked directly. */
async function apiPreview(
  t: ConsoleTest,
  env: string,
  body: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.baseUrl}/api/v2/environments/${t.org}/${env}/policy-preview`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Fills the preview form and waits for its answer (or its error). */
async function askPreview(
  page: Page,
  form: { env: string; mode: 'attach' | 'detach'; last: number },
): Promise<void> {
  const region = page.getByRole('form', { name: 'Preview on an environment' });
  await region.getByLabel('Environment').fill(form.env);
  await region.getByRole('radio', { name: form.mode === 'attach' ? /^Attach v\d+/ : /^Detach / }).check();
  await region.getByLabel(/^Snapshots, back from the latest/).fill(String(form.last));
  await region.getByRole('button', { name: 'Preview' }).click();
}

/** What the page lists of a preview: per snapshot shown, its artifacts and their reasons. */
async function shownChanges(page: Page): Promise<Array<{ index: number; rows: string[] }>> {
  const sections = page.getByRole('region', { name: /^Snapshot #\d+$/ });
  const out: Array<{ index: number; rows: string[] }> = [];
  for (const section of await sections.all()) {
    const label = (await section.getAttribute('aria-label')) ?? '';
    const rows = await section
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader') })
      .allInnerTexts();
    out.push({ index: Number(label.replace('Snapshot #', '')), rows });
  }
  return out;
}

/** The page's listing must be the API's: the same snapshots, artifacts and reasons, in order. */
function expectSameChanges(shown: Array<{ index: number; rows: string[] }>, api: PreviewAnswer): void {
  const listed = api.snapshots.filter(
    (s) => s.changes.length > 0 || s.compliant_now !== s.compliant_with_change,
  );
  expect(shown.map((s) => s.index)).toEqual(listed.map((s) => s.index));
  listed.forEach((s, i) => {
    const rows = shown[i]!.rows;
    expect(rows.length, `snapshot #${s.index}`).toBe(s.changes.length);
    s.changes.forEach((c, j) => {
      expect(rows[j]).toContain(c.name);
      expect(rows[j]).toContain(c.fingerprint.slice(0, 16));
      for (const reason of c.reasons) {
        expect(rows[j]).toContain(reason);
      }
    });
  });
}

const summaryText = (label: string, api: PreviewAnswer) => {
  const first = api.snapshots[0]!.index;
  const last = api.snapshots[api.snapshots.length - 1]!.index;
  const over = first === last ? `snapshot #${first}` : `snapshots #${first} to #${last}`;
  const s = api.summary;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  return `${label}, over ${over}: ${s.flipped_snapshots} of ${plural(s.snapshots, 'snapshot')} would change compliance, ${plural(s.flipped_artifacts, 'artifact')} would flip.`;
};

describeConsole('the policy pages', (t) => {
  it('lists the policies with their latest version and the environments each is attached to', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor();
    const policies: Array<{ name: string; versions: unknown[]; consuming_envs: string[] }> = await t.api(
      `/policies/${t.org}`,
    );
    await page.getByRole('rowheader').first().waitFor();
    for (const p of policies) {
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: p.name, exact: true }) });
      expect(await row.count(), p.name).toBe(1);
      expect(await row.innerText()).toContain(`v${p.versions.length}`);
      expect(await row.getByRole('cell').last().getByRole('link').allInnerTexts()).toEqual(p.consuming_envs);
    }
    // the list says how many there are
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /^\d+ polic(y|ies)$/ })
        .innerText(),
    ).toBe(policies.length === 1 ? '1 policy' : `${policies.length} policies`);
    const provenance = policies.find((p) => p.name === 'build-provenance')!;
    expect([...provenance.consuming_envs].sort()).toEqual(['prod', 'staging']);
    await page.getByRole('link', { name: 'build-provenance', exact: true }).click();
    await page.getByRole('heading', { name: 'Policy build-provenance', level: 1 }).waitFor();
    const attached = page
      .getByRole('term')
      .filter({ hasText: 'Attached to' })
      .locator('xpath=following-sibling::dd');
    await attached.getByRole('link').first().waitFor();
    expect(await attached.getByRole('link').allInnerTexts()).toEqual(provenance.consuming_envs);
  });

  it("shows each version's text as the API holds it, and the changed lines between two versions", async () => {
    await putPolicy(t, V1, 'first');
    await putPolicy(t, V2, 'relax trail compliance, want unit tests');
    const api = await t.api(`/policies/${t.org}/${POLICY}`);
    expect(api.versions.map((v: any) => v.version)).toEqual([1, 2]);

    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/policies/${POLICY}`);
    await page.getByRole('heading', { name: 'Text of v2 (latest)' }).waitFor();
    const text = page.getByTestId('policy-text');
    expect(await text.textContent()).toBe(api.versions[1].policy_yaml);
    const versions = page.getByRole('table', { name: 'Versions, newest first' });
    expect(await versions.innerText()).toContain('relax trail compliance, want unit tests');
    await versions.getByRole('link', { name: 'Show the text of v1' }).click();
    await page.getByRole('heading', { name: 'Text of v1', exact: true }).waitFor();
    expect(await text.textContent()).toBe(api.versions[0].policy_yaml);
    expect(new URL(page.url()).searchParams.get('version')).toBe('1');

    // the diff, v1 to v2 by default: one rule relaxed, one added
    const diff = page.getByRole('table', { name: 'Changes from v1 to v2' });
    await diff.waitFor();
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /^From v1 to v2/ })
        .innerText(),
    ).toBe('From v1 to v2: 5 lines added, 1 line removed.');
    expect(await diff.locator('tr.diff-removed code').allTextContents()).toEqual(['    required: true']);
    expect(await diff.locator('tr.diff-added code').allTextContents()).toEqual([
      '    required: false',
      '',
      '  attestations:',
      '    - name: unit-tests',
      '      type: junit',
    ]);
    // each changed line says so in words, not in colour alone
    expect(await diff.locator('tr.diff-removed').innerText()).toContain('removed:');
    // the unchanged lines around the change are shown as such
    expect(await diff.locator('tr.diff-same code').allTextContents()).toContain('  trail-compliance:');

    // the other way round, chosen in the form
    await page.getByLabel('From version').selectOption('2');
    await page.getByLabel('To version').selectOption('1');
    await page.getByRole('button', { name: 'Compare' }).click();
    const back = page.getByRole('table', { name: 'Changes from v2 to v1' });
    await back.waitFor();
    expect(await back.locator('tr.diff-added code').allTextContents()).toEqual(['    required: true']);
    expect(await back.locator('tr.diff-removed code').count()).toBe(5);
    const url = new URL(page.url());
    expect([url.searchParams.get('from'), url.searchParams.get('to')]).toEqual(['2', '1']);

    // at phone width the diff scrolls in its own box: the page does not scroll sideways; and
    // axe finds nothing serious in the diff's colours, light or dark
    const phone = await t.open({ viewport: { width: 390, height: 844 }, axe: true });
    await phone.goto(`${t.baseUrl}/${t.org}/policies/${POLICY}`);
    await phone.getByRole('table', { name: 'Changes from v1 to v2' }).waitFor();
    expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await seriousViolations(phone), 'axe on the diff, light').toEqual([]);
    await phone.getByLabel('Theme').selectOption('dark');
    expect(await seriousViolations(phone), 'axe on the diff, dark').toEqual([]);

    // a version the policy does not have is said, not guessed
    await page.goto(`${t.baseUrl}/${t.org}/policies/${POLICY}?version=9&from=1&to=9`);
    await page
      .getByRole('alert')
      .filter({ hasText: 'This policy has no version 9: the latest, v2, is shown.' })
      .waitFor();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This policy has no version 9: its versions are v1 to v2.' })
      .waitFor();
    expect(await text.textContent()).toBe(api.versions[1].policy_yaml);
  });

  it("previews attaching a policy over the last snapshots as the API's preview answers it", async () => {
    const page = await t.open({ axe: true });
    await page.goto(`${t.baseUrl}/${t.org}/policies/build-provenance`);
    await page.getByRole('heading', { name: /^Text of v\d+ \(latest\)$/ }).waitFor();
    const policy = await t.api(`/policies/${t.org}/build-provenance`);
    const version = policy.versions[policy.versions.length - 1];
    const env = await t.api(`/environments/${t.org}/dev`);
    const latest: number = env.latest_snapshot_index;
    const last = Math.min(5, latest);
    await askPreview(page, { env: 'dev', mode: 'attach', last });
    const status = page.getByRole('status').filter({ hasText: /would flip\.$/ });
    await status.waitFor();

    const api = await apiPreview(t, 'dev', {
      attach: [{ name: 'build-provenance', content: version.policy_yaml }],
      snapshots: { from: latest - last + 1, to: latest },
    });
    expect(api.status).toBe(200);
    const answer = api.json as PreviewAnswer;
    // dev has no policy: attaching one makes its artifacts without provenance fail
    expect(answer.summary.flipped_artifacts).toBeGreaterThan(0);
    expect(await status.innerText()).toBe(
      summaryText(`Attaching build-provenance v${version.version}`, answer),
    );
    expectSameChanges(await shownChanges(page), answer);
    // each listed snapshot is a link to its page
    const first = answer.snapshots.find((s) => s.changes.length > 0)!;
    expect(
      await page
        .getByRole('region', { name: `Snapshot #${first.index}` })
        .getByRole('link', { name: `Snapshot #${first.index}` })
        .getAttribute('href'),
    ).toBe(`/${t.org}/environments/dev/snapshots/${first.index}`);
    expect(await seriousViolations(page), 'axe on the preview, light').toEqual([]);
    await page.getByLabel('Theme').selectOption('dark');
    expect(await seriousViolations(page), 'axe on the preview, dark').toEqual([]);
  });

  it("previews detaching a policy as the API's preview answers it, a change that changes nothing, and what failed", async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/policies/build-provenance`);
    await page.getByRole('heading', { name: /^Text of v\d+ \(latest\)$/ }).waitFor();
    const env = await t.api(`/environments/${t.org}/staging`);
    const latest: number = env.latest_snapshot_index;
    const last = Math.min(40, latest);
    // the form offers the first environment the policy is attached to
    const policy = await t.api(`/policies/${t.org}/build-provenance`);
    const field = page.getByRole('combobox', { name: 'Environment' });
    expect(await field.inputValue()).toBe(policy.consuming_envs[0]);
    await askPreview(page, { env: 'staging', mode: 'detach', last });
    const status = page.getByRole('status').filter({ hasText: /would flip\.$/ });
    await status.waitFor();
    const api = await apiPreview(t, 'staging', {
      detach: ['build-provenance'],
      snapshots: { from: latest - last + 1, to: latest },
    });
    expect(api.status).toBe(200);
    const answer = api.json as PreviewAnswer;
    expect(answer.summary.snapshots).toBe(last);
    expect(await status.innerText()).toBe(summaryText('Detaching build-provenance', answer));
    const shown = await shownChanges(page);
    // staging's one policy judges it: without it, what failed is no longer failing
    expect(answer.summary.flipped_artifacts).toBeGreaterThan(0);
    expectSameChanges(shown, answer);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });

    // attaching the very text staging applies changes nothing, and the page says so
    await askPreview(page, { env: 'staging', mode: 'attach', last: 1 });
    await page.getByText('Nothing would change: every artifact keeps its compliance').waitFor();
    const same = await apiPreview(t, 'staging', {
      attach: [
        { name: 'build-provenance', content: policy.versions[policy.versions.length - 1].policy_yaml },
      ],
    });
    expect(same.json.summary).toMatchObject({ flipped_snapshots: 0, flipped_artifacts: 0 });
    expect(await shownChanges(page)).toEqual([]);

    // an environment that does not exist: the API's message, in words, and nothing else shown
    await askPreview(page, { env: 'nowhere', mode: 'attach', last: 1 });
    const refused = await apiPreview(t, 'nowhere', { attach: [] });
    expect(refused.status).toBe(404);
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the preview' });
    await alert.waitFor();
    expect(await alert.innerText()).toContain(refused.json.message);
    expect(await alert.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /would flip\.$/ })
        .count(),
    ).toBe(0);
    // the refused request is the failure under test
    t.problems.splice(0, t.problems.length, ...t.problems.filter((p) => !/status of 404/.test(p)));
  });
});
