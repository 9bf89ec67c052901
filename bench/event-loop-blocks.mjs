/**
 * Finds what keeps other requests waiting: preloaded into the API
 * (`BENCH_API_NODE_FLAGS="--import ./bench/event-loop-blocks.mjs"`), it times every top-level
 * callback the event loop runs and appends each one of BENCH_BLOCK_MS (default 100) or more to
 * BENCH_BLOCK_LOG (default /tmp/event-loop-blocks.log), with the stack where its resource (a
 * promise, an immediate, a socket) was created. A CPU profile cannot show this: slices that follow
 * one another leave no idle time between them, and read as one long streak.
 *
 * Diagnosis only: capturing a stack for every async resource makes the API several times slower,
 * and the blocks it logs longer than without it. Compare blocks with each other, not with the
 * bench's figures.
 */
import { createHook } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const MIN_MS = Number(process.env.BENCH_BLOCK_MS ?? 100);
const LOG = process.env.BENCH_BLOCK_LOG ?? '/tmp/event-loop-blocks.log';
const created = new Map();
let depth = 0;
let start = 0;
let current = 0;
Error.stackTraceLimit = 14;

createHook({
  init(id, type) {
    const holder = {};
    Error.captureStackTrace(holder);
    const frames = holder.stack
      .split('\n')
      .slice(2)
      .filter((line) => !line.includes('node:internal/async_hooks'))
      .map((line) => line.trim());
    created.set(id, `${type} ${frames.join(' | ')}`);
  },
  before(id) {
    if (depth++ === 0) {
      start = performance.now();
      current = id;
    }
  },
  after() {
    if (--depth === 0) {
      const ms = performance.now() - start;
      if (ms >= MIN_MS) {
        appendFileSync(LOG, `${ms.toFixed(0)} ms ${created.get(current) ?? '(unknown)'}\n`);
      }
    }
  },
  destroy(id) {
    created.delete(id);
  },
}).enable();
