/**
 * Setup file: at the end of each test file, records the worker's peak resident memory so far
 * (MiB) in the file's meta, where ./run-guard.ts reads and prints it.
 *
 * On Linux it reads VmHWM (this process's own high-water mark): getrusage's maxRSS also counts the
 * memory of the vitest process that forked the worker, since Linux keeps it across exec.
 */
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { MAX_RSS_META } from './run-guard.js';

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
afterAll(({}, file) => {
  file.meta[MAX_RSS_META] = Math.round(peakRssKiB() / 1024);
});
