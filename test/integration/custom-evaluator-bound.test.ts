/**
 * A custom type's time bound is the evaluation's, not the API's: a rule that answers in time is
 * judged on its result even when the API thread was too busy to read the answer before the
 * bound's timer ran (under load, a timer can run before the message that would cancel it), and a
 * rule that loops is still stopped at the bound.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CustomEvaluator, EvaluationLimitError } from '../../services/api/src/workers/custom-evaluator.js';

const TIMEOUT_MS = 300;
let evaluator: CustomEvaluator | undefined;

afterEach(async () => {
  await evaluator?.close();
  evaluator = undefined;
});

/** Keeps this thread busy for `ms`, as a loaded API thread is. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

const definition = (rules: string[]) => ({ schema: null, rules, summary: [] });

describe('the time bound of a custom-type evaluation', () => {
  it('judges a quick rule on its result when this thread read the answer late', async () => {
    evaluator = new CustomEvaluator({ timeoutMs: TIMEOUT_MS, maxHeapMb: 64, workers: 1, queuePerOrg: 10 });
    // A ready worker first, so the next job starts at once.
    await evaluator.evaluate(definition(['.n == 1']), { n: 1 }, 'org');
    const pending = evaluator.evaluate(definition(['.n == 1']), { n: 1 }, 'org');
    // Busy in the check phase: the event loop's next turn runs expired timers before it reads
    // the messages that arrived meanwhile, as it does after any long turn under load.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        busy(TIMEOUT_MS * 3);
        resolve();
      }),
    );
    const result = await pending;
    expect(result.ruleResults).toEqual([{ rule: '.n == 1', result: true, error: null }]);
  });

  it('still stops a rule that loops, at the bound', async () => {
    evaluator = new CustomEvaluator({ timeoutMs: TIMEOUT_MS, maxHeapMb: 64, workers: 1, queuePerOrg: 10 });
    await evaluator.evaluate(definition(['.n == 1']), { n: 1 }, 'org');
    const started = Date.now();
    await expect(evaluator.evaluate(definition(['until(false; .)']), { n: 1 }, 'org')).rejects.toThrow(
      EvaluationLimitError,
    );
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
    // The pool goes on with a new worker.
    const after = await evaluator.evaluate(definition(['.n == 2']), { n: 2 }, 'org');
    expect(after.ruleResults[0]?.result).toBe(true);
  });

  it('answers thousands of quick evaluations in a row, none of them over the bound', async () => {
    // The jq build once hung or aborted about once in a few hundred runs, which a time bound
    // then turned into a non-compliant attestation.
    evaluator = new CustomEvaluator({ timeoutMs: 2000, maxHeapMb: 64, workers: 1, queuePerOrg: 10 });
    const failures: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const r = await evaluator
        .evaluate(definition(['.n == 1']), { n: i % 2 }, 'org')
        .catch((err: Error) => ({ ruleResults: [{ rule: '', result: null, error: err.message }] }));
      const got = r.ruleResults[0];
      if (got?.error || got?.result !== (i % 2 === 1)) {
        failures.push(`#${i}: ${JSON.stringify(got)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});

describe('a process that waits for an evaluation', () => {
  it('stays alive until the answer comes, and then exits', () => {
    // Nothing else holds this process open: the pool itself must, while a job waits for its worker.
    const module = pathToFileURL(
      join(process.cwd(), 'services', 'api', 'src', 'workers', 'custom-evaluator.ts'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'verity-evaluator-'));
    const script = join(dir, 'evaluate-once.mjs');
    writeFileSync(
      script,
      `const { CustomEvaluator } = await import(${JSON.stringify(module.href)});
      const e = new CustomEvaluator({ timeoutMs: 2000, maxHeapMb: 64, workers: 1, queuePerOrg: 5 });
      const r = await e.evaluate({ schema: null, rules: ['.a == 1'], summary: [] }, { a: 1 }, 'o');
      console.log(JSON.stringify(r));
      await e.close();`,
    );
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        schemaErrors: [],
        ruleResults: [{ rule: '.a == 1', result: true, error: null }],
        summary: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
