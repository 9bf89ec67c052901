/**
 * Setup file for every test worker:
 * - at the end of each test file, records the worker's peak resident memory so far and its
 *   JavaScript heap in use (MiB) in the file's meta, where ./run-guard.ts reads and prints them;
 * - stops the worker (SIGKILL, so ./run-guard.ts names its file) when its resident memory passes
 *   VERITY_TEST_WORKER_RSS_MIB (default 2048): the heap bound (--max-old-space-size) does not
 *   cover WebAssembly memory (PGlite, jq) and buffers, which is most of a worker's memory.
 *
 * On Linux the peak is VmHWM (this process's own high-water mark): getrusage's maxRSS also counts
 * the memory of the vitest process that forked the worker, since Linux keeps it across exec.
 */
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { afterAll, beforeAll } from 'vitest';
import { HEAP_META, MAX_RSS_META } from './run-guard.js';

const MIB = 1024 ** 2;
const RSS_BOUND_MIB = Number(process.env.VERITY_TEST_WORKER_RSS_MIB ?? 2048);
const CHECK_EVERY_MS = 250;

function peakRssKiB(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm?.[1]) {
      return Number(hwm[1]);
    }
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS;
}

// vitest reads the fixtures a hook uses from its first argument's pattern: none here
// eslint-disable-next-line no-empty-pattern
beforeAll(({}, file) => {
  const watchdog = setInterval(() => {
    const rss = Math.round(process.memoryUsage.rss() / MIB);
    if (rss > RSS_BOUND_MIB) {
      process.stderr.write(
        `\nTest worker ${process.pid} stopped: ${rss} MiB resident, over ${RSS_BOUND_MIB} MiB, in ${file.name}\n`,
      );
      process.kill(process.pid, 'SIGKILL');
    }
  }, CHECK_EVERY_MS);
  watchdog.unref();
  return () => clearInterval(watchdog);
});

// eslint-disable-next-line no-empty-pattern
afterAll(({}, file) => {
  file.meta[MAX_RSS_META] = Math.round(peakRssKiB() / 1024);
  // what the heap bound limits, against the RSS that also holds WebAssembly memory and buffers
  file.meta[HEAP_META] = Math.round(getHeapStatistics().used_heap_size / MIB);
});
