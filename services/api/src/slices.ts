/**
 * Long pure computations in slices. A planning step over one report's items (up to
 * MAX_REPORT_ARTIFACTS) is written as a generator that yields after each slice of items; `drain`
 * runs it in one piece (tests, small inputs), `inSlices` lets the event loop turn at every yield,
 * so other requests, `/healthz` included, wait at most one slice.
 */
import { setImmediate as turn } from 'node:timers/promises';

/** A computation that yields between slices and returns its result. */
export type Steps<T> = Generator<void, T, void>;

/** Items a step handles between two yields. */
export const STEP_ITEMS = 2_000;

/** Runs the steps in one piece. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) {
      return next.value;
    }
  }
}

/** Runs the steps, letting the event loop turn at each yield. */
export async function inSlices<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) {
      return next.value;
    }
    await turn();
  }
}

/** `items.map(f)`, yielding after every STEP_ITEMS items. */
export function* mapSteps<T, U>(items: readonly T[], f: (item: T) => U): Steps<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) {
    out.push(f(items[i]!));
    if ((i + 1) % STEP_ITEMS === 0) {
      yield;
    }
  }
  return out;
}
