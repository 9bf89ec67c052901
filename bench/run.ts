/**
 * `npm run bench [-- <name> ...]`: runs every `bench/*.bench.ts` (or the named ones) and prints
 * each figure next to the baseline measured in the same run, as a ratio against its target.
 * Benchmarks need PostgreSQL for the figures that say so: BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres; each run works in its own schema).
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchFigure, BenchModule } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.includes(basename(f, '.bench.ts')))
  .sort();

if (files.length === 0) {
  process.stderr.write(`no benchmarks match ${wanted.join(', ') || '(any)'}\n`);
  process.exit(1);
}

const rows: Array<BenchFigure & { bench: string }> = [];
let failed = 0;
for (const file of files) {
  const name = basename(file, '.bench.ts');
  process.stdout.write(`\n## ${name}\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  const figures = await mod.default({ log: (line: string) => process.stdout.write(`  ${line}\n`) });
  for (const f of figures) {
    rows.push({ ...f, bench: name });
  }
}

process.stdout.write('\n| benchmark | figure | value | target | verdict |\n|---|---|---|---|---|\n');
for (const r of rows) {
  const verdict = r.pass === undefined ? '' : r.pass ? 'ok' : 'MISSED';
  if (r.pass === false) {
    failed += 1;
  }
  process.stdout.write(`| ${r.bench} | ${r.name} | ${r.value} | ${r.target ?? ''} | ${verdict} |\n`);
}
process.exit(failed > 0 ? 1 : 0);
