/**
 * A test run cannot hide a file: when a worker dies mid-file (killed, or out of memory at its heap
 * bound, or stopped at its memory bound), the run exits non-zero and names each file that did not
 * finish (test/suite/run-guard.ts, test/suite/worker-memory.ts). The fixture project
 * test/fixtures/lost-worker has one passing file, one that kills its own worker, one that grows
 * past the fixture's heap bound and one that holds buffers past its memory bound.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';

const VITEST = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs');
const CONFIG = join(process.cwd(), 'test', 'fixtures', 'lost-worker', 'vitest.config.ts');
const GIB = 1024 ** 3;

/** This worker's environment, less what makes a nested vitest think it is a worker itself. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('VITEST') && name !== 'NODE_OPTIONS' && name !== 'TEST') {
      env[name] = value;
    }
  }
  return { ...env, NO_COLOR: '1', CI: 'true' };
}

describe('a run whose workers die mid-file', () => {
  it('exits non-zero and names the files that did not finish, not the one that did', () => {
    const run = spawnSync(process.execPath, [VITEST, 'run', '--config', CONFIG, '--reporter=dot'], {
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).toBe(1);
    const lost =
      /RUN INCOMPLETE: (\d+) test file\(s\) did not run to completion[^\n]*\n((?: {2}- .*\n)+)/.exec(output);
    expect(lost, output).not.toBeNull();
    const [, count, files = ''] = lost!;
    expect(count).toBe('3');
    const named = files
      .trim()
      .split('\n')
      .map((line) => line.trim())
      .sort();
    expect(named).toEqual(['- dies.check.ts', '- grows.check.ts', '- hoards.check.ts']);
    expect(output).toMatch(/Test worker \d+ stopped: \d+ MiB resident, over 200 MiB, in hoards\.check\.ts/);
  }, 60_000);
});

describe('a test worker', () => {
  it('runs under a heap bound below 2 GiB, so a runaway file dies instead of swapping the machine', () => {
    const bound = getHeapStatistics().heap_size_limit;
    expect(bound).toBeLessThan(2 * GIB);
  });
});
