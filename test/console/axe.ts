/**
 * axe-core in a console page: the page must be opened with `open({ axe: true })` (the console's
 * CSP refuses the inline script otherwise).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations of the page, as "rule: target" lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate<
    Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>
  >("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)");
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}`));
}
