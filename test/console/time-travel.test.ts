/**
 * The auditor's questions in one step, on the demo organization: what ran at a time (the picker and
 * the `@{time}` address, checked against the API), its evidence in one download, the timeline in
 * time, the diff of two snapshots, and every time naming its zone.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { untar } from '../helpers/tar.js';
import { describeConsole } from './pages.js';

interface ListItem {
  index: number;
  from: number;
  to: number;
  compliance_state: string;
}

/** `YYYY-MM-DDTHH:MM` of an epoch-seconds time on the wall clock of a zone. */
function wallClock(epochSeconds: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(epochSeconds * 1000));
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}`;
}

/** Date-and-time texts on the page (with seconds, as every full time is written) and what follows them. */
async function timesOnPage(page: Page): Promise<string[]> {
  const text = await page.getByRole('main').innerText();
  return [...text.matchAll(/\d{1,2}:\d{2}:\d{2}( ?[AP]M)?[^\n·→,)]{0,12}/g)].map((m) => m[0]);
}

describeConsole('time travel, the timeline in time, diffs and zones', (t) => {
  it('the picker, in the browser zone, lands on the snapshot the API names for that time', async () => {
    const zone = 'America/New_York';
    const page = await t.open({ timezoneId: zone });
    const list: ListItem[] = await t.api(`/snapshots/${t.org}/prod?per_page=100`);
    // a replaced snapshot current for more than two minutes: a minute inside it is unambiguous
    const s = list.find((x) => x.to !== 0 && x.to - x.from > 180)!;
    expect(s).toBeDefined();
    const at = Math.floor((s.from + 90) / 60) * 60 + 60;
    const expected = await t.api(
      `/snapshots/${t.org}/prod/${encodeURIComponent(`@{${new Date(at * 1000).toISOString().slice(0, 19)}}`)}`,
    );
    expect(expected.index).toBe(s.index);

    await page.goto(`${t.baseUrl}/${t.org}/environments/prod`);
    await page.getByRole('heading', { name: 'Environment prod', level: 1 }).waitFor();
    const picker = page.getByLabel(`What ran here at (${zone})`);
    await picker.fill(wallClock(at, zone));
    await page.getByRole('button', { name: 'Open that snapshot' }).click();
    await page.getByRole('heading', { name: `Snapshot ${expected.index} of prod`, level: 1 }).waitFor();
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(
      `/${t.org}/environments/prod/snapshots/@{${new Date(at * 1000).toISOString().slice(0, 19)}Z}`,
    );
    const said = await page.getByText(/^The snapshot current at .* is snapshot #\d+\.$/).innerText();
    expect(said).toContain(`snapshot #${expected.index}`);
    // the artifacts are the API's for that time
    const running = page.getByRole('region', { name: 'Artifacts', exact: true });
    for (const a of expected.artifacts.filter((x: any) => x.annotation.now > 0)) {
      await running
        .getByRole('rowheader', { name: new RegExp(a.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) })
        .first()
        .waitFor();
    }

    // a time that is not one is refused with the reason, not sent
    await page.goto(`${t.baseUrl}/${t.org}/environments/prod`);
    await page.getByRole('button', { name: 'Open that snapshot' }).waitFor();
    await page.getByLabel(`What ran here at (${zone})`).fill('');
    await page.getByRole('button', { name: 'Open that snapshot' }).click();
    expect(new URL(page.url()).pathname).toBe(`/${t.org}/environments/prod`);
  });

  it('opens an @{time} address, says an unreadable one clearly, and downloads the audit package at that snapshot', async () => {
    const page = await t.page();
    const list: ListItem[] = await t.api(`/snapshots/${t.org}/prod?per_page=100`);
    const s = list.find((x) => x.to !== 0 && x.to - x.from > 120)!;
    const iso = new Date((s.from + 60) * 1000).toISOString().slice(0, 19);
    await page.goto(`${t.baseUrl}/${t.org}/environments/prod/snapshots/${encodeURIComponent(`@{${iso}}`)}`);
    await page.getByRole('heading', { name: `Snapshot ${s.index} of prod`, level: 1 }).waitFor();
    // where it stands among its neighbours, in time: the marked span is this snapshot
    const around = page.getByRole('region', { name: 'This snapshot in time' });
    const marked = around.locator('a[aria-current="page"]');
    await marked.waitFor();
    expect(await marked.getAttribute('aria-label')).toMatch(new RegExp(`^Snapshot ${s.index}, from `));
    expect(await around.getByRole('link', { name: /^Snapshot \d+, from / }).count()).toBeGreaterThan(1);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the audit package of this snapshot' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`prod-snapshot-${s.index}-audit-package.tar.gz`);
    const files = await untar(gunzipSync(readFileSync(await download.path())));
    const snapshot = JSON.parse(files.get('snapshot.json')!.toString());
    expect(snapshot.index).toBe(s.index);
    expect(files.has('MANIFEST.sha256')).toBe(true);
    expect(files.has('policies.json')).toBe(true);
    const running = snapshot.artifacts.filter((a: any) => a.annotation.now > 0);
    expect([...files.keys()].filter((k) => k.endsWith('/running.json'))).toHaveLength(running.length);

    await page.goto(
      `${t.baseUrl}/${t.org}/environments/prod/snapshots/${encodeURIComponent('@{yesterday}')}`,
    );
    const refused = page.getByRole('alert');
    await refused.waitFor();
    expect(await refused.innerText()).toContain("'yesterday' is not a time of the form");
    t.problems.splice(0); // the 400 is the answer under test
    // before the first report: said in words, with the way to the first snapshot
    await page.goto(
      `${t.baseUrl}/${t.org}/environments/prod/snapshots/${encodeURIComponent('@{2001-01-01T00:00:00Z}')}`,
    );
    const before = page.getByRole('alert').filter({ hasText: 'No snapshot of prod was current at' });
    await before.waitFor();
    expect(await before.innerText()).toMatch(/current at Jan 01, 2001, \d{2}:00:00 (AM|PM)? ?[A-Z]/);
    t.problems.splice(0); // the 404 is the answer under test
    await page.goto(`${t.baseUrl}/${t.org}/environments/prod/snapshots/zero`);
    await page
      .getByRole('alert')
      .filter({ hasText: 'A snapshot is a positive whole number, or a time' })
      .waitFor();
  });

  it('draws the timeline in time: spans as wide as they were current, a date axis, now, zoom and words', async () => {
    const page = await t.page();
    await page.goto(`${t.baseUrl}/${t.org}/environments/prod?zoom=all`);
    const timeline = page.getByRole('group', { name: /^Snapshots \d+ to \d+ in time, oldest first$/ });
    await timeline.waitFor();
    expect(await page.getByRole('button', { name: 'All', exact: true }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    const spans = await timeline.locator('rect.bar').evaluateAll((rects) =>
      rects.map((r) => ({
        from: Number(r.getAttribute('data-from')),
        to: Number(r.getAttribute('data-to')),
        width: Number(r.getAttribute('width')),
      })),
    );
    const list: ListItem[] = await t.api(`/snapshots/${t.org}/prod?per_page=100`);
    expect(spans).toHaveLength(list.length);
    // px per second is the same for every span wide enough not to be drawn at the minimum width
    const wide = spans.filter((s) => s.width > 10);
    expect(wide.length).toBeGreaterThan(1);
    const scale = wide[0]!.width / (wide[0]!.to - wide[0]!.from);
    for (const s of wide) {
      expect(s.width / (s.to - s.from) / scale).toBeCloseTo(1, 2);
    }
    // the longest span is the widest
    const longest = spans.reduce((a, b) => (b.to - b.from > a.to - a.from ? b : a));
    expect(longest.width).toBe(Math.max(...spans.map((s) => s.width)));
    // each span links to its snapshot and says its compliance in words
    const links = timeline.getByRole('link');
    expect(await links.count()).toBe(list.length);
    for (const name of await links.evaluateAll((as) => as.map((a) => a.getAttribute('aria-label') ?? ''))) {
      expect(name).toMatch(
        /^Snapshot \d+, from .* (until .*|still current): .*, (compliant|non-compliant|no policy attached)$/,
      );
    }
    expect(await timeline.locator('line.now-line').count()).toBe(1);
    expect((await timeline.locator('text.tick').allInnerTexts()).length).toBeGreaterThan(2);

    // a day shows fewer snapshots than all of them, and the choice is in the address
    await page.getByRole('button', { name: 'Day', exact: true }).click();
    await page.waitForURL(/zoom=day/);
    // pressed in the same render that drops the week's picture
    await page.getByRole('button', { name: 'Day', exact: true, pressed: true }).waitFor();
    const day = page.getByRole('group', { name: /in time, oldest first$|^No snapshot in this window$/ });
    await day.waitFor();
    expect(await day.getByRole('link').count()).toBeLessThan(list.length);
    const latest = list[0]!;
    await day.getByRole('link', { name: new RegExp(`^Snapshot ${latest.index}, .*still current`) }).click();
    await page.getByRole('heading', { name: `Snapshot ${latest.index} of prod`, level: 1 }).waitFor();
  });

  it('compares two snapshots: the diff lists what the API diff lists, with links', async () => {
    const page = await t.page();
    const env = await t.api(`/environments/${t.org}/staging`);
    const to: number = env.latest_snapshot_index;
    const from = Math.max(1, to - 6);
    const diff = await t.api(`/env-diff/${t.org}?snappish1=staging%23${from}&snappish2=staging%23${to}`);
    await page.goto(`${t.baseUrl}/${t.org}/environments/staging/diff?from=${from}&to=${to}`);
    await page
      .getByRole('heading', { name: `Compare snapshots of staging: #${from} → #${to}`, level: 1 })
      .waitFor();
    const names = async (region: RegExp) => {
      const section = page.getByRole('region', { name: region });
      await section.waitFor();
      return (await section.getByRole('rowheader').allInnerTexts()).map((x) => x.split('\n')[0]).sort();
    };
    const apiNames = (items: Array<{ name: string }>) => items.map((a) => a.name).sort();
    expect(await names(/^Started: /)).toEqual(apiNames(diff.snappish2.artifacts));
    expect(await names(/^Stopped: /)).toEqual(apiNames(diff.snappish1.artifacts));
    expect(await names(/^Changed: /)).toEqual(apiNames(diff.changed.artifacts));
    expect(diff.snappish2.artifacts.length + diff.snappish1.artifacts.length).toBeGreaterThan(0);
    await page
      .getByRole('heading', { name: `Unchanged (${diff['not-changed'].artifacts.length})` })
      .waitFor();

    // the form picks other snapshots; the links lead to both snapshots
    await page.getByLabel('From snapshot').fill(String(to - 1));
    await page.getByRole('button', { name: 'Compare' }).click();
    await page
      .getByRole('heading', { name: `Compare snapshots of staging: #${to - 1} → #${to}`, level: 1 })
      .waitFor();
    await page.getByRole('link', { name: `snapshot #${to - 1}`, exact: true }).click();
    await page.getByRole('heading', { name: `Snapshot ${to - 1} of staging`, level: 1 }).waitFor();

    await page.goto(`${t.baseUrl}/${t.org}/environments/staging/diff?from=0&to=x`);
    await page
      .getByRole('alert')
      .filter({ hasText: 'A snapshot to compare is a positive whole number' })
      .waitFor();
  });

  it('names the zone of every time, switches all of them to UTC, and remembers the choice', async () => {
    const page = await t.open({ timezoneId: 'Asia/Tokyo' });
    await page.goto(`${t.baseUrl}/${t.org}/environments/staging`);
    await page.getByRole('heading', { name: /^Latest snapshot/ }).waitFor();
    await page.getByRole('table', { name: /^Events of snapshots/ }).waitFor();
    await page.getByRole('group', { name: /in time, oldest first$/ }).waitFor();
    const local = await timesOnPage(page);
    expect(local.length).toBeGreaterThan(3);
    for (const time of local) {
      expect(time).toMatch(/GMT\+9|JST/);
    }
    await page.getByLabel('Times in').selectOption('utc');
    await page.getByText(/dates in UTC/).waitFor();
    await page.getByRole('table', { name: /^Events of snapshots/ }).waitFor();
    const utc = await timesOnPage(page);
    expect(utc.length).toBe(local.length);
    for (const time of utc) {
      expect(time).toMatch(/UTC/);
    }
    expect(await page.getByText(/dates in UTC/).count()).toBe(1);

    // remembered: another page, and a reload, still speak UTC
    await page.reload();
    await page.getByRole('heading', { name: /^Latest snapshot/ }).waitFor();
    expect(await page.getByLabel('Times in').inputValue()).toBe('utc');
    const snapshot = page.getByRole('link', { name: /^#\d+$/ }).first();
    await snapshot.click();
    await page.getByRole('heading', { name: /^Snapshot \d+ of staging$/, level: 1 }).waitFor();
    for (const time of await timesOnPage(page)) {
      expect(time).toMatch(/UTC/);
    }
  });
});
