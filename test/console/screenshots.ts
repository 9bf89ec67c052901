/**
 * The README's screenshots of the demo organization, taken with the browser the end-to-end tests
 * use: `npx tsx test/console/screenshots.ts` writes docs/screenshots/*.png.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromiumMissing, launchChromium, signIn, watchedPage } from './browser.js';
import { ensureConsoleBuilt, startConsoleServer } from './harness.js';

const OUT = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

async function main(): Promise<void> {
  const missing = chromiumMissing();
  if (missing) {
    throw new Error(missing);
  }
  ensureConsoleBuilt();
  const server = await startConsoleServer({ days: 28 });
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
    });
    const problems: string[] = [];
    const page = await watchedPage(context, server.baseUrl, (p) => problems.push(p));
    const { org } = server.demo;
    await signIn(page, server.baseUrl, org, server.demo.apiKey);
    mkdirSync(OUT, { recursive: true });
    const shots: Array<[string, string, () => Promise<void>, number?]> = [
      [
        'environments.png',
        `/${org}/environments`,
        () => page.getByRole('rowheader', { name: /^staging/ }).waitFor(),
      ],
      [
        'environment-timeline.png',
        `/${org}/environments/staging`,
        () => page.getByRole('heading', { name: /^Latest snapshot/ }).waitFor(),
      ],
      [
        'trail.png',
        `/${org}/flows/payments/trails/payments-3`,
        () =>
          page
            .getByText(/^\d+ tests:/)
            .first()
            .waitFor(),
        1750,
      ],
      [
        'home.png',
        `/${org}`,
        () => page.getByRole('figure', { name: /^Lead time for changes/ }).waitFor(),
        1760,
      ],
      [
        'diff.png',
        `/${org}/environments/staging/diff?from=${Math.max(1, (server.demo.environments.staging ?? 4) - 3)}&to=${server.demo.environments.staging ?? 4}`,
        () =>
          page
            .getByText(/^Unchanged/)
            .first()
            .waitFor(),
      ],
      [
        'policy-preview.png',
        `/${org}/policies/build-provenance`,
        async () => {
          const form = page.getByRole('form', { name: 'Preview on an environment' });
          await form.getByLabel('Environment').fill('dev');
          await form.getByRole('radio', { name: /^Attach v\d+/ }).check();
          await form.getByLabel(/^Snapshots, back from the latest/).fill('20');
          await form.getByRole('button', { name: 'Preview' }).click();
          await page
            .getByRole('status')
            .filter({ hasText: /would flip\.$/ })
            .waitFor();
        },
        1750,
      ],
      [
        'exposure.png',
        `/${org}/exposure?purl=${encodeURIComponent('pkg:npm/lodash@4.17.20')}`,
        () => page.getByText(/^\d+ artifacts? contained/).waitFor(),
        1000,
      ],
    ];
    for (const [file, path, ready, height = 800] of shots) {
      // a trail reads downwards: a taller window shows its artifact evidence too
      await page.setViewportSize({ width: 1280, height });
      await page.goto(`${server.baseUrl}${path}`);
      await ready();
      await page.waitForLoadState('networkidle');
      await page
        .getByText(/^Loading/)
        .first()
        .waitFor({ state: 'hidden' });
      const target = join(OUT, file);
      await page.screenshot({ path: target });
      process.stdout.write(`${target}: ${Math.round(statSync(target).size / 1024)} KB\n`);
    }
    if (problems.length > 0) {
      throw new Error(`the console reported problems:\n${problems.join('\n')}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `screenshots failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
