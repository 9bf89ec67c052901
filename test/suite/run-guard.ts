/**
 * A reporter that fails the run, naming each file, when a test file was planned but did not run to
 * completion: its worker was killed (out of memory, a signal) or never picked it up. Vitest alone
 * reports such a run as "1 error" with a file count one short and no file name.
 *
 * runGuard() adds it to whatever reporters the run uses, so `--reporter=verbose` keeps it.
 *
 * It also prints the peak resident memory of the workers, as each file's setup (./worker-memory.ts)
 * records it in the file's meta, so a worker that grows toward its heap bound is seen before it dies.
 */
import type { Plugin } from 'vite';
import type { Reporter, TestModule, TestRunEndReason, TestSpecification } from 'vitest/node';

/** The key under which ./worker-memory.ts stores a worker's peak RSS (MiB) at the end of a file. */
export const MAX_RSS_META = 'workerMaxRssMiB';
/** The key under which ./worker-memory.ts stores the worker's heap in use (MiB) at the end of a file. */
export const HEAP_META = 'workerHeapUsedMiB';

declare module 'vitest' {
  interface TaskMeta {
    [MAX_RSS_META]?: number;
    [HEAP_META]?: number;
  }
}

const key = (projectName: string, moduleId: string) => `${projectName}\u0000${moduleId}`;

export default class RunGuard implements Reporter {
  private planned = new Map<string, { project: string; file: string }>();
  private finished = new Map<string, TestModule>();
  private root = process.cwd();

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.planned.clear();
    this.finished.clear();
    for (const spec of specifications) {
      this.root = spec.project.vitest.config.root;
      const project = spec.project.name;
      this.planned.set(key(project, spec.moduleId), { project, file: spec.moduleId });
    }
  }

  onTestModuleEnd(module: TestModule): void {
    this.finished.set(key(module.project.name, module.moduleId), module);
  }

  onTestRunEnd(
    modules: ReadonlyArray<TestModule>,
    _errors: ReadonlyArray<unknown>,
    reason: TestRunEndReason,
  ): void {
    this.printMemory(modules);
    if (reason === 'interrupted') {
      return; // stopped on purpose (bail, Ctrl-C): files not run are expected
    }
    const lost = [...this.planned].filter(([k]) => !this.completed(this.finished.get(k)));
    if (lost.length === 0) {
      return;
    }
    const lines = lost.map(
      ([, { project, file }]) => `  - ${this.relative(file)}${project ? ` [${project}]` : ''}`,
    );
    process.stderr.write(
      `\nRUN INCOMPLETE: ${lost.length} test file(s) did not run to completion ` +
        `(worker killed, out of memory, or never started):\n${lines.join('\n')}\n\n`,
    );
    process.exitCode = 1;
  }

  /** A file counts as complete when it ended in a final state. */
  private completed(module: TestModule | undefined): boolean {
    if (!module) {
      return false;
    }
    const state = module.state();
    return state === 'passed' || state === 'failed' || state === 'skipped';
  }

  private printMemory(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({
        file: this.relative(m.moduleId),
        rss: m.meta()[MAX_RSS_META],
        heap: m.meta()[HEAP_META],
      }))
      .filter((r): r is { file: string; rss: number; heap: number | undefined } => typeof r.rss === 'number')
      .sort((a, b) => b.rss - a.rss)
      .slice(0, 5);
    if (rows.length === 0) {
      return;
    }
    const lines = rows.map(
      (r) => `  ${String(r.rss).padStart(6)} MiB  ${String(r.heap ?? '?').padStart(6)} MiB  ${r.file}`,
    );
    process.stdout.write(
      `\nWorkers' peak RSS and heap in use after the file (largest ${rows.length}):\n` +
        `  ${'RSS'.padStart(10)}  ${'heap'.padStart(10)}\n${lines.join('\n')}\n`,
    );
  }

  private relative(file: string): string {
    return file.startsWith(`${this.root}/`) ? file.slice(this.root.length + 1) : file;
  }
}

const GUARDED = Symbol.for('verity.run-guard');

/** A plugin that adds one RunGuard to the run's reporters, whichever the command line chose. */
export function runGuard(): Plugin {
  // Projects that extend the root config load it (and this module) again, and each calls
  // configureVitest with the same run: one guard per run, or its memory table is printed once per
  // project. The mark lives on globalThis, which every copy of this module shares.
  const marks = globalThis as { [GUARDED]?: WeakSet<object> };
  const guarded = (marks[GUARDED] ??= new WeakSet<object>());
  return {
    name: 'verity:run-guard',
    configureVitest({ vitest }) {
      const reporters = vitest.config.reporters;
      if (!guarded.has(vitest) && !reporters.some((r) => r instanceof RunGuard)) {
        guarded.add(vitest);
        reporters.push(new RunGuard());
      }
    },
  };
}
